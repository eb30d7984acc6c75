package kafkatest

import (
	"testing"
	"time"
)

const (
	pollFirst = 50 * time.Millisecond
	pollMax   = 200 * time.Millisecond
)

// Eventually calls cond until it returns nil, waiting 50 ms between the first calls and up
// to 200 ms later, and fails the test with cond's last error once timeout has passed.
// It is the one place tests wait; call it from the test's goroutine.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := pollFirst
	for attempt := 1; ; attempt++ {
		err := cond()
		if err == nil {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("condition not met within %v (%d attempts): %v", timeout, attempt, err)
			return
		}
		timer := time.NewTimer(min(wait, left))
		<-timer.C
		wait = min(2*wait, pollMax)
	}
}
