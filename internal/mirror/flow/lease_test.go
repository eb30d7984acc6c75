package flow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestLeaseContextEndsWhenTheClockPassesItsEnd: the context reports its end as
// soon as the clock passed it, before any timer ran, as after a frozen process
// resumed; a context.WithDeadline on the same end does not until its timer ran.
func TestLeaseContextEndsWhenTheClockPassesItsEnd(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	until := clock.Add(time.Hour) // by the real clock, a timer that will not fire during the test
	ctx, cancel := leaseContextAt(context.Background(), until, now)
	defer cancel()
	std, stdCancel := context.WithDeadline(context.Background(), until)
	defer stdCancel()

	if ctx.Err() != nil || isDone(ctx) {
		t.Fatalf("ended before its lease end: %v", ctx.Err())
	}
	mu.Lock()
	clock = until // the process resumes at the lease end
	mu.Unlock()
	if !isDone(ctx) {
		t.Error("Done is not closed once the clock reached the lease end")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Err = %v, want context.DeadlineExceeded", err)
	}
	if d, ok := ctx.Deadline(); !ok || !d.Equal(until) {
		t.Errorf("Deadline = %v %v, want %v", d, ok, until)
	}
	if std.Err() != nil {
		t.Fatalf("the deadline context ended already: %v", std.Err())
	}
}

// TestLeaseContextCancelled: cancelled before its end, it says Canceled.
func TestLeaseContextCancelled(t *testing.T) {
	ctx, cancel := LeaseContext(context.Background(), time.Now().Add(time.Hour))
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) || !isDone(ctx) {
		t.Errorf("after cancel: %v", err)
	}
}

func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// TestLeaseContextCancelledStaysCancelled: cancelled before its end, it keeps saying
// Canceled after the clock passed the end.
func TestLeaseContextCancelledStaysCancelled(t *testing.T) {
	clock := time.Now()
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	until := clock.Add(time.Hour)
	ctx, cancel := leaseContextAt(context.Background(), until, now)
	cancel()
	mu.Lock()
	clock = until.Add(time.Second)
	mu.Unlock()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err after cancel and past the end = %v, want context.Canceled", err)
	}
}
