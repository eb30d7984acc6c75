package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestBrokerGCSumsPausesInTheWindow(t *testing.T) {
	dir := t.TempDir()
	log := `[2026-12-01T20:11:36.569+0000] Using G1
[2026-12-01T20:11:37.174+0000] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->5M(258M) 20.557ms
[2026-12-01T20:11:40.000+0000] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 15M->6M(258M) 6.5ms
[2026-12-01T20:11:41.000+0000] GC(2) Concurrent Mark Cycle 120.000ms
[2026-12-01T20:11:42.000+0000] GC(2) Pause Remark 30M->30M(258M) 3.5ms
[2026-12-01T20:11:50.000+0000] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 16M->7M(258M) 99.0ms
`
	if err := os.WriteFile(filepath.Join(dir, "gc.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 12, 1, 20, 11, 38, 0, time.UTC)
	to := time.Date(2026, 12, 1, 20, 11, 45, 0, time.UTC)
	got, err := brokerGC(dir, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := gcPauses{Count: 2, MaxMs: 6.5, TotalMs: 10}
	if got != want {
		t.Fatalf("brokerGC = %+v, want %+v", got, want)
	}
	if _, err := brokerGC(t.TempDir(), from, to); err == nil {
		t.Fatal("a missing GC log gave no error")
	}
}
