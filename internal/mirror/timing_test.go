package mirror

import (
	"testing"
	"time"
)

// Lag in seconds is the age of the oldest record not copied: the oldest
// fetched and not acknowledged, else the newest copied; 0 when nothing
// waits, -1 when no timestamp is known.
func TestLagSeconds(t *testing.T) {
	now := time.UnixMilli(100_000)
	var tm timing
	if got := tm.lagSeconds(5, now); got != -1 {
		t.Fatalf("nothing fetched or copied: %v, want -1", got)
	}
	tm.fetched(90_000, 95_000, 10, now) // records written 10 s to 5 s ago
	if got := tm.lagSeconds(10, now); got != 10 {
		t.Fatalf("oldest fetched 10 s ago: %v, want 10", got)
	}
	tm.fetched(96_000, 97_000, 5, now) // newer records do not move the oldest
	if got := tm.lagSeconds(15, now); got != 10 {
		t.Fatalf("after a second fetch: %v, want 10", got)
	}
	tm.copied(95_000, 10, 96_000, now) // the first batch is on the target
	if got := tm.lagSeconds(5, now); got != 4 {
		t.Fatalf("after the first batch: %v, want 4", got)
	}
	tm.copied(97_000, 5, 0, now) // everything fetched is copied
	if got := tm.lagSeconds(0, now); got != 0 {
		t.Fatalf("caught up: %v, want 0", got)
	}
	// Records wait that are not fetched yet (the buffer is full): the
	// newest copied bounds their age from above.
	if got := tm.lagSeconds(7, now.Add(2*time.Second)); got != 5 {
		t.Fatalf("unfetched records waiting: %v, want 5", got)
	}
	lat, age, copied := tm.stats(now)
	if copied != 97_000 || lat.Count != 15 || age.Count != 15 || lat.Max != 5000 || age.Max != 5000 {
		t.Fatalf("stats: latency %+v, age %+v, copied %d", lat, age, copied)
	}
}

// Every acknowledged record is one latency observation, in seconds.
func TestLatencyObservedPerRecord(t *testing.T) {
	var seen []float64
	tm := timing{observe: func(s float64) { seen = append(seen, s) }}
	tm.copied(1_000, 3, 0, time.UnixMilli(3_500))
	if len(seen) != 3 || seen[0] != 2.5 {
		t.Fatalf("observed %v, want three of 2.5 s", seen)
	}
}
