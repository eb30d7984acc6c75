package fastpath

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoesNotImportMirror keeps the seam the compiler enforces: the fast
// path reaches a partition only through Ledger, which it could not if it
// imported the package that owns partitions.
func TestDoesNotImportMirror(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "strait/internal/mirror" {
			t.Fatalf("fastpath depends on strait/internal/mirror:\n%s", out)
		}
	}
}
