package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strait/internal/checkpoint"
	"strait/internal/offsets"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code := Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestDemoReplicatesAndExits(t *testing.T) {
	code, out, errOut := run(t, "demo", "--duration", "10s", "--rate", "2000")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Done: generated") || !strings.Contains(out, "strait run") {
		t.Fatalf("output:\n%s", out)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	good := writeFile(t, "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:9092\nB.bootstrap.servers = 127.0.0.1:9093\nA->B.enabled = true\nB.producer.batch.size = 16384\n")
	evilJAAS := writeFile(t, "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:9092\nB.bootstrap.servers = 127.0.0.1:9093\nA->B.enabled = true\n"+
		"B.security.protocol = SASL_SSL\nB.sasl.mechanism = PLAIN\nB.sasl.jaas.config = com.example.EvilLoginModule required username=\"u\" password=\"hunter2\";\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string
		stderr    []string
		forbidden string
	}{
		{name: "resolved flows", args: []string{"check", "-c", good, "--offline"}, code: ExitOK,
			stdout: []string{"Flow A->B: enabled", "batch.size has no franz-go equivalent"}},
		{name: "unknown JAAS login module fails, secret redacted", args: []string{"check", "-c", evilJAAS, "--offline"}, code: ExitUsage,
			stdout: []string{"[redacted]"}, stderr: []string{"com.example.EvilLoginModule", `cluster "B"`}, forbidden: "hunter2"},
		{name: "positional file", args: []string{"check", good, "--offline"}, code: ExitOK, stdout: []string{"Flow A->B"}},
		{name: "missing file", args: []string{"check", "-c", "/nonexistent.properties", "--offline"}, code: ExitUsage, stderr: []string{"/nonexistent.properties"}},
		{name: "no file", args: []string{"check"}, code: ExitUsage, stderr: []string{"no config file"}},
		{name: "bad config lists every error with its line", args: []string{"check", writeFile(t, "clusters = A, B\nA->B.enabled = true\nreplication.factor = zero\n"), "--offline"},
			code: ExitUsage, stderr: []string{`mm2.properties:3: key "replication.factor": value "zero" is not an integer`, `set A.bootstrap.servers`}},
		{name: "unknown flag", args: []string{"run", "--nope"}, code: ExitUsage, stderr: []string{"unknown flag"}},
		{name: "extra args without --clusters", args: []string{"run", good, "B"}, code: ExitUsage, stderr: []string{"give cluster aliases with --clusters"}},
		{name: "MM2-style --clusters list", args: []string{"check", good, "--offline", "--clusters", "B", "A"}, code: ExitOK, stdout: []string{"Flow A->B", "Flow B->A"}},
		{name: "--clusters keeps flows to those targets", args: []string{"check", good, "--offline", "--clusters", "B"}, code: ExitOK, stdout: []string{"Flow A->B"}, forbidden: "Flow B->A"},
		{name: "unreachable cluster", args: []string{"check", writeFile(t, "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"), "--timeout", "2s"},
			code: ExitFailure, stdout: []string{"FAILED", `cluster "A"`, "127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
			if tt.forbidden != "" && strings.Contains(out+errOut, tt.forbidden) {
				t.Errorf("output contains %q", tt.forbidden)
			}
		})
	}
}

// strayErr returns the error line Main printed, from "strait: " on.
func strayErr(stderr string) string {
	if i := strings.LastIndex(stderr, "strait: "); i >= 0 {
		return strings.TrimSpace(stderr[i:])
	}
	return ""
}

// TestCheckRefusesWhatRunRefuses: check --offline and run build the same
// client plan, so a setting run cannot honour fails check too, with the
// same error, before any connection is tried.
func TestCheckRefusesWhatRunRefuses(t *testing.T) {
	const base = "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"
	tests := []struct {
		name  string
		props string
		args  []string
		want  string
	}{
		{name: "target consumer of a flow whose reverse is not selected",
			props: base + "B->A.enabled = true\nB.consumer.fetch.max.bytes = abc\n", args: []string{"--clusters", "B"},
			want: `mm2.properties:6: key "B.consumer.fetch.max.bytes": fetch.max.bytes must be a non-negative integer, got "abc" (target consumer of A->B)`},
		{name: "target consumer without heartbeat pairs",
			props: base + "emit.heartbeats.enabled = false\nB.consumer.fetch.max.bytes = abc\n",
			want:  `mm2.properties:6: key "B.consumer.fetch.max.bytes": fetch.max.bytes must be a non-negative integer, got "abc" (target consumer of A->B)`},
		{name: "offset-syncs producer on the source",
			props: base + "emit.heartbeats.enabled = false\nA.producer.linger.ms = soon\n",
			want:  `mm2.properties:6: key "A.producer.linger.ms": linger.ms must be a non-negative integer, got "soon" (source producer of A->B)`},
		{name: "no enabled flow among the --clusters selection",
			props: base, args: []string{"--clusters", "A"},
			want: `mm2.properties: no flow this node runs replicates data, and Strait does not run heartbeats alone: set <source>-><target>.enabled = true for a pair, or give --clusters the target of an enabled flow`},
		{name: "acks = 0 for replicated data",
			props: base + "B.producer.acks = 0\n",
			want:  `mm2.properties:5: key "B.producer.acks": acks = 0 is not allowed for replicated data`},
		{name: "one key used by two flows is one error naming both clients",
			props: base + "B->A.enabled = true\nemit.heartbeats.enabled = false\nB.consumer.fetch.max.bytes = abc\n",
			want:  `mm2.properties:7: key "B.consumer.fetch.max.bytes": fetch.max.bytes must be a non-negative integer, got "abc" (target consumer of A->B, source consumer of B->A)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, tt.props)
			var errs []string
			for _, cmd := range [][]string{{"check", "--offline", file}, {"run", file}} {
				code, out, errOut := run(t, append(cmd, tt.args...)...)
				if code != ExitUsage {
					t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", cmd[0], code, ExitUsage, out, errOut)
				}
				if !strings.Contains(errOut, tt.want) {
					t.Errorf("%s: stderr lacks %q:\n%s", cmd[0], tt.want, errOut)
				}
				errs = append(errs, strayErr(errOut))
			}
			if errs[0] != errs[1] {
				t.Errorf("check and run report different errors:\ncheck: %s\nrun:   %s", errs[0], errs[1])
			}
		})
	}
}

// TestCheckAndRunWarnAboutSettingsNotHonoured: a setting Strait reads and
// does not act on is a warning in check's output and in run's log.
func TestCheckAndRunWarnAboutSettingsNotHonoured(t *testing.T) {
	file := writeFile(t, "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"+
		"sync.topic.configs.enabled = false\nsync.topic.acls.enabled = false\ntasks.max = 8\n")
	const want = `key "tasks.max" (line 7): not honoured on A->B: Strait does not split a flow into tasks`
	code, out, errOut := run(t, "check", "--offline", file)
	if code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "tasks.max                                            8  (line 7: tasks.max; not honoured, see Warnings)") {
		t.Errorf("check: exit %d, want the warning %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	// A run stopped before it starts logs its warnings and exits cleanly.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var runOut, runErr bytes.Buffer
	if code := Main(ctx, []string{"run", file}, &runOut, &runErr); code != ExitOK || !strings.Contains(runErr.String(), strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("run: exit %d, want the warning %q in the log:\n%s", code, want, runErr.String())
	}
}

// TestResetCSVRefusesUntranslatedPartitions: kafka-consumer-groups.sh
// resets exactly the partitions the file names, so a partition without a
// translation fails the whole file rather than being left out.
func TestResetCSVRefusesUntranslatedPartitions(t *testing.T) {
	ok := checkpoint.Translation{Topic: "orders", RemoteTopic: "A.orders", Partition: 0, Upstream: 5, Downstream: 7, Result: offsets.Exact}
	var b strings.Builder
	if err := writeResetCSV(&b, []checkpoint.Translation{ok}); err != nil || b.String() != "A.orders,0,7\n" {
		t.Fatalf("writeResetCSV = %q, %v", b.String(), err)
	}
	before := checkpoint.Translation{Topic: "orders", RemoteTopic: "A.orders", Partition: 1, Upstream: 3, Downstream: -1, Result: offsets.BeforeStart, Status: offsets.BeforeStart.String()}
	b.Reset()
	err := writeResetCSV(&b, []checkpoint.Translation{ok, before})
	if err == nil || b.Len() != 0 || !strings.Contains(err.Error(), "orders[1] offset 3: before the first replicated record") {
		t.Fatalf("writeResetCSV with an untranslated partition = %q, %v", b.String(), err)
	}
}

// TestDrillOnEmbeddedClusters runs the whole disaster-recovery day on two
// kfake clusters, as strait drill does without a file, and checks that it
// passes and prints its figures.
func TestDrillOnEmbeddedClusters(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code := Main(ctx, []string{"drill", "--warmup", "2s", "--rate", "500"}, &stdout, &stderr)
	out, errOut := stdout.String(), stderr.String()
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Drill A->B: PASS", "RPO ", "RTO ", " skipped, "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
