package mirror

import (
	"sync"
	"time"

	"strait/internal/window"
)

// timing is what a partition knows about the timestamps of its records,
// for its status and metrics:
//
//   - replication latency (the target's acknowledgement minus the record's
//     timestamp) and record age (the fetch minus the record's timestamp),
//     over MM2's window: two samples of 30 seconds (spec §7);
//   - the newest timestamp the target acknowledged, and the timestamp of
//     the oldest record fetched and not acknowledged yet: lag in seconds
//     is the age of the oldest record not copied (lagSeconds).
//
// Both paths feed it in source order: fetched when records enter a path,
// copied when the target acknowledges them.
type timing struct {
	mu        sync.Mutex
	copiedMs  int64 // newest record timestamp acknowledged; 0 before any
	pendingMs int64 // oldest record timestamp fetched and not acknowledged; 0 when none
	latency   window.Window
	age       window.Window
	// observe feeds the replication latency histogram (seconds), once per
	// record; nil without metrics.
	observe func(seconds float64)
}

// fetched records n records entering a path: oldestMs is the first one's
// timestamp, newestMs the newest's. Nothing pending before them means the
// first is now the oldest record not copied.
func (t *timing) fetched(oldestMs, newestMs int64, n int, now time.Time) {
	if n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pendingMs == 0 {
		t.pendingMs = oldestMs
	}
	t.age.Add(float64(now.UnixMilli()-newestMs), int64(n), now)
}

// copied records n records acknowledged by the target, the newest with
// timestamp newestMs; pendingMs is the oldest timestamp still fetched and
// not acknowledged after them (0 when none; a path that does not know it
// exactly gives a timestamp no newer, so lag in seconds errs long).
func (t *timing) copied(newestMs int64, n int, pendingMs int64, now time.Time) {
	if n <= 0 {
		return
	}
	latency := float64(now.UnixMilli() - newestMs)
	t.mu.Lock()
	t.copiedMs = max(t.copiedMs, newestMs)
	t.pendingMs = pendingMs
	t.latency.Add(latency, int64(n), now)
	observe := t.observe
	t.mu.Unlock()
	if observe != nil {
		s := max(latency, 0) / 1000
		for range n {
			observe(s)
		}
	}
}

// lagSeconds is the age of the oldest record not copied, given lag records
// waiting: the oldest fetched and not acknowledged; else, when none is
// fetched, the newest copied (every record after it is newer, so this
// errs long, the safe side for a recovery point); -1 when neither is
// known. 0 when nothing waits.
func (t *timing) lagSeconds(lag int64, now time.Time) float64 {
	if lag <= 0 {
		return 0
	}
	t.mu.Lock()
	ref := t.pendingMs
	if ref == 0 {
		ref = t.copiedMs
	}
	t.mu.Unlock()
	if ref == 0 {
		return -1
	}
	return max(float64(now.UnixMilli()-ref)/1000, 0)
}

// stats returns the latency and age windows and the newest copied timestamp.
func (t *timing) stats(now time.Time) (latency, age window.Stats, copiedMs int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latency.Stats(now), t.age.Stats(now), t.copiedMs
}
