package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitWritesAFileCheckAccepts: the file init writes passes `check
// --offline` with no warning, with and without a replication factor, and
// holds the flow it was asked for.
func TestInitWritesAFileCheckAccepts(t *testing.T) {
	for _, extra := range [][]string{nil, {"--replication-factor", "1"}, {"--topics", "orders.*", "--groups", "billing-.*"}} {
		file := filepath.Join(t.TempDir(), "mm2.properties")
		args := append([]string{"init", "--source", "east=k1:9092,k2:9092", "--target", "west=k3:9092", "-o", file}, extra...)
		if code, out, errOut := run(t, args...); code != ExitOK || !strings.Contains(out, "wrote "+file) {
			t.Fatalf("init %v: exit %d\n%s%s", extra, code, out, errOut)
		}
		code, out, errOut := run(t, "check", "--offline", "-c", file)
		if code != ExitOK || !strings.Contains(out, "Flow east->west: enabled") || !strings.Contains(out, "Warnings: none") || strings.Contains(out, "warning:") {
			t.Fatalf("check of init's file %v: exit %d\n%s%s", extra, code, out, errOut)
		}
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"east.bootstrap.servers = k1:9092,k2:9092", "east->west.enabled = true"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("init %v: no %q in\n%s", extra, want, body)
			}
		}
		if len(extra) == 2 && !strings.Contains(string(body), "\nreplication.factor = 1\n") {
			t.Errorf("--replication-factor 1 is not in\n%s", body)
		}
	}
}

// TestInitRefusesBadInput: wrong flags name the problem, and an existing
// file is kept unless --force.
func TestInitRefusesBadInput(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(existing, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--source", "A=a:9092"}, "give both clusters"},
		{[]string{"--source", "a:9092", "--target", "B=b:9092"}, "ALIAS=HOST:PORT"},
		{[]string{"--source", "A=a", "--target", "B=b:9092"}, `bootstrap server "a" has no HOST:PORT form`},
		{[]string{"--source", "A.x=a:9092", "--target", "B=b:9092"}, `alias "A.x" must start with a letter`},
		{[]string{"--source", "A=a:9092", "--target", "A=b:9092"}, "the same alias"},
		{[]string{"--source", "A=a:9092", "--target", "B=b:9092", "--topics", "("}, "--topics \"(\" is not a regular expression"},
		{[]string{"--source", "A=a:9092", "--target", "B=b:9092", "--replication-factor", "0"}, "--replication-factor 0"},
		{[]string{"--source", "A=a:9092", "--target", "B=b:9092", "-o", existing}, "exists: keep it, or add --force"},
	} {
		code, _, errOut := run(t, append([]string{"init"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("init %v: exit %d, want %d and %q in\n%s", c.args, code, ExitUsage, c.want, errOut)
		}
	}
	if body, _ := os.ReadFile(existing); string(body) != "keep me\n" {
		t.Errorf("the existing file changed: %q", body)
	}
	if code, _, errOut := run(t, "init", "--source", "A=a:9092", "--target", "B=b:9092", "-o", existing, "--force"); code != ExitOK {
		t.Fatalf("--force: exit %d\n%s", code, errOut)
	}
	if body, _ := os.ReadFile(existing); !strings.Contains(string(body), "A->B.enabled = true") {
		t.Errorf("--force did not replace the file: %q", body)
	}
}
