package checkpoint

import "time"

// schedule decides when a periodic task runs on a ticker of period tick.
// A tick fires a little early or late, so a task is due once its interval
// passed within half a tick: with an interval of one tick it runs on every
// tick (a tick 4.999 s after the last run of a 5 s task is not skipped),
// with two ticks on every second one.
type schedule struct {
	every, tick time.Duration
	last        time.Time // zero: never ran
}

// due reports whether the task must run at now.
func (s *schedule) due(now time.Time) bool {
	return s.last.IsZero() || now.Sub(s.last) >= s.every-s.tick/2
}

// ran records that the task ran at now.
func (s *schedule) ran(now time.Time) { s.last = now }
