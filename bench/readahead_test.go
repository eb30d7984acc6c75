package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness sets the disk's read-ahead for the run and puts the old value
// back; with 0 it leaves it; what it did is in the report's line.
func TestSetReadAhead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "read_ahead_kb")
	if err := os.WriteFile(file, []byte("8192\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, restore := setReadAheadFile(file, 128)
	if b, _ := os.ReadFile(file); string(b) != "128" || info.FoundKB != 8192 || info.UsedKB != 128 {
		t.Fatalf("set to 128: file %q, info %+v", b, info)
	}
	if !strings.Contains(info.text(), "128 KiB for the run (the disk's own is 8192 KiB, put back after it") {
		t.Errorf("report line %q", info.text())
	}
	restore()
	if b, _ := os.ReadFile(file); string(b) != "8192" {
		t.Fatalf("after the run the file holds %q, want 8192 back", b)
	}
	info, _ = setReadAheadFile(file, 0)
	if b, _ := os.ReadFile(file); string(b) != "8192" || info.UsedKB != 8192 || !strings.Contains(info.text(), "left as found") {
		t.Fatalf("-read-ahead-kb 0 changed the disk: %q, %+v", b, info)
	}
	info, _ = setReadAheadFile(filepath.Join(t.TempDir(), "missing"), 128)
	if !strings.HasPrefix(info.text(), "unknown (") {
		t.Errorf("no read_ahead_kb file: %q", info.text())
	}
	if _, err := readAheadFile(t.TempDir()); err != nil && !strings.Contains(err.Error(), "read_ahead_kb") {
		t.Errorf("readAheadFile: %v", err)
	}
}
