package flow

import (
	"context"
	"testing"
)

func TestThrottleUnlimitedAndLargeWaits(t *testing.T) {
	if NewThrottle(0) != nil {
		t.Fatal("0 must mean unlimited")
	}
	var none *Throttle
	if err := none.Wait(context.Background(), 1<<30); err != nil {
		t.Fatal(err)
	}
	th := NewThrottle(1 << 30) // fast enough not to slow the test
	// A wait larger than the burst is split instead of failing.
	if err := th.Wait(context.Background(), 3*th.burst+1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := NewThrottle(1)
	if err := slow.Wait(ctx, 10*slow.burst); err == nil {
		t.Fatal("a cancelled wait must return an error")
	}
}
