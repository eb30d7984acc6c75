package cli

import (
	"net"
	"strings"
	"testing"

	"strait/internal/checkpoint"
)

// TestVersionFlag: strait --version prints what strait version prints.
func TestVersionFlag(t *testing.T) {
	_, want, _ := run(t, "version")
	code, got, errOut := run(t, "--version")
	if code != ExitOK || got != want || !strings.HasPrefix(got, "strait ") {
		t.Fatalf("--version: exit %d, %q (stderr %q); want %q", code, got, errOut, want)
	}
}

// TestOffsetsTranslateExplainsAnUnreachableCluster: offsets translate gives
// the hint check gives when a cluster cannot be reached.
func TestOffsetsTranslateExplainsAnUnreachableCluster(t *testing.T) {
	file := writeFile(t, "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:2\nA->B.enabled = true\n")
	code, _, errOut := run(t, "offsets", "translate", "--group", "g", "--flow", "A->B", "-c", file, "--timeout", "5s")
	if code != ExitFailure || !strings.Contains(errOut, "check A.bootstrap.servers and that the brokers are up") {
		t.Fatalf("exit %d, want %d and check's hint:\n%s", code, ExitFailure, errOut)
	}
}

// TestNothingToTranslateIsAnError: a group with no committed offset on
// the flow's topics is not a silent success.
func TestNothingToTranslateIsAnError(t *testing.T) {
	err := requireTranslations("orders-app", "A", nil)
	if err == nil || !strings.Contains(err.Error(), `group "orders-app" has no committed offset on A`) {
		t.Fatalf("got %v", err)
	}
	if err := requireTranslations("orders-app", "A", []checkpoint.Translation{{}}); err != nil {
		t.Fatal(err)
	}
}

// TestTypoOfEnabledLeadsTheError: a misspelt A->B.enabled leaves no flow
// enabled; the error says so with the "did you mean" first, without the
// header about client settings and without the settings dump.
func TestTypoOfEnabledLeadsTheError(t *testing.T) {
	file := writeFile(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabeld = true\n")
	for _, args := range [][]string{{"check", "--offline", "-c", file}, {"run", "-c", file}} {
		code, out, errOut := run(t, args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != ExitUsage || !strings.Contains(first, `did you mean A->B.enabled?`) || strings.Contains(errOut, "client settings") || strings.Contains(out, "heartbeats only") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
}

// TestDemoShowsAGroupAndABacklogInPlainLines: the demo starts on a
// backlog, with a consuming group whose checkpoints reach B; written to a
// file (not a terminal) its progress has no carriage returns; it serves
// its API on the address given.
func TestDemoShowsAGroupAndABacklogInPlainLines(t *testing.T) {
	code, out, errOut := run(t, "demo", "--duration", "8s", "--rate", "2000", "--api-listen", "127.0.0.1:0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(out, "\r") {
		t.Errorf("progress written with carriage returns into a non-terminal:\n%q", out)
	}
	for _, want := range []string{"backlog of", "group demo-app", "of demo-app on B"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Dashboard: off") || strings.Contains(out, ":8083/") {
		t.Errorf("the API is not on the address given:\n%s", out)
	}
}

// TestDemoRefusesAZeroDuration: --duration 0s would run forever; leaving
// the flag out is how to run until Ctrl-C.
func TestDemoRefusesAZeroDuration(t *testing.T) {
	code, _, errOut := run(t, "demo", "--duration", "0s")
	if code != ExitUsage || !strings.Contains(errOut, "--duration 0s") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestDemoNamesTheFlagWhenItsAddressIsTaken: an --api-listen address that
// is taken stops the demo with an error naming the flag.
func TestDemoNamesTheFlagWhenItsAddressIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut := run(t, "demo", "--duration", "30s", "--api-listen", ln.Addr().String())
	if code != ExitUsage || !strings.Contains(errOut, "--api-listen "+ln.Addr().String()) {
		t.Fatalf("exit %d, want %d and the flag named:\n%s", code, ExitUsage, errOut)
	}
}

// TestDemoAPIAddress: the default address, when taken, gives way to a free
// port with a line saying so; an address given is used as it is.
func TestDemoAPIAddress(t *testing.T) {
	taken := func(string) bool { return false }
	addr, note := demoAPIAddress(defaultAPI, false, taken)
	if addr != "127.0.0.1:0" || !strings.Contains(note, defaultAPI+" is taken") || !strings.Contains(note, "--api-listen") {
		t.Errorf("default taken: %q, %q", addr, note)
	}
	if addr, note := demoAPIAddress(defaultAPI, false, func(string) bool { return true }); addr != defaultAPI || note != "" {
		t.Errorf("default free: %q, %q", addr, note)
	}
	if addr, note := demoAPIAddress("127.0.0.1:9999", true, taken); addr != "127.0.0.1:9999" || note != "" {
		t.Errorf("given: %q, %q", addr, note)
	}
}

// TestDemoShowsTheGroupsTranslatedOffsets: at its end the demo shows its
// group's offsets on A beside B's, which Strait's checkpoints translated.
func TestDemoShowsTheGroupsTranslatedOffsets(t *testing.T) {
	code, out, errOut := run(t, "demo", "--duration", "6s", "--rate", "1000", "--api-listen", "127.0.0.1:0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Group demo-app: its offsets on A, and on B", "OFFSET ON A  TOPIC ON B  OFFSET ON B", "  orders    0 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestTypoLeadsCheck: a misspelt key beside an enabled flow is ignored, as
// MM2 ignores it, but check says so first, with the guess, not after the
// dump of every setting.
func TestTypoLeadsCheck(t *testing.T) {
	file := writeFile(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nA->B.topcs = orders\n")
	code, out, errOut := run(t, "check", "--offline", file)
	first, _, _ := strings.Cut(out, "Configuration ")
	if code != ExitOK || !strings.Contains(first, `key "A->B.topcs" (line 5): unknown key`) || !strings.Contains(first, "did you mean A->B.topics?") {
		t.Fatalf("exit %d; the typo does not lead:\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
