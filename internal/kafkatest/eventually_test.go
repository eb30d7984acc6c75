package kafkatest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		failFirst int // cond fails this many calls, then succeeds; -1: always fails
		wantCalls int // exact number of calls; 0: at least 2
		wantFatal string
	}{
		{name: "at once", timeout: time.Second, failFirst: 0, wantCalls: 1},
		{name: "after three failures", timeout: 10 * time.Second, failFirst: 3, wantCalls: 4},
		{name: "never", timeout: 300 * time.Millisecond, failFirst: -1, wantFatal: "condition not met within 300ms"},
		{name: "zero timeout tries once", timeout: 0, failFirst: -1, wantCalls: 1, wantFatal: "(1 attempts): not yet 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			calls := 0
			Eventually(tb, tc.timeout, func() error {
				calls++
				if tc.failFirst < 0 || calls <= tc.failFirst {
					return fmt.Errorf("not yet %d", calls)
				}
				return nil
			})
			switch {
			case tc.wantCalls > 0 && calls != tc.wantCalls:
				t.Errorf("cond called %d times, want %d", calls, tc.wantCalls)
			case tc.wantCalls == 0 && calls < 2:
				t.Errorf("cond called %d times, want at least 2", calls)
			}
			if tc.wantFatal == "" {
				if tb.fatal != "" {
					t.Errorf("unexpected failure: %s", tb.fatal)
				}
				return
			}
			if !strings.Contains(tb.fatal, tc.wantFatal) {
				t.Errorf("failure = %q, want it to contain %q", tb.fatal, tc.wantFatal)
			}
			if last := fmt.Sprintf("not yet %d", calls); !strings.HasSuffix(tb.fatal, last) {
				t.Errorf("failure = %q, want it to end with the last error %q", tb.fatal, last)
			}
		})
	}
}

func TestEventuallyPollsAtMost200ms(t *testing.T) {
	var stamps []time.Time
	Eventually(t, 10*time.Second, func() error {
		stamps = append(stamps, time.Now())
		if len(stamps) < 6 {
			return errors.New("not yet")
		}
		return nil
	})
	for i := 1; i < len(stamps); i++ {
		// Generous upper bound: a loaded CI machine may wake a timer late.
		if d := stamps[i].Sub(stamps[i-1]); d < 40*time.Millisecond || d > time.Second {
			t.Errorf("gap %d = %v, want 50-200ms", i, d)
		}
	}
}
