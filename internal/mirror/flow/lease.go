package flow

import (
	"context"
	"sync/atomic"
	"time"
)

// LeaseContext returns a context that ends at until, the node's lease end,
// for the writes made under the lease. Unlike context.WithDeadline's, its
// Done and Err look at the clock each time they are asked: a deadline
// context ends only when its timer's callback runs, and after a process
// frozen past its deadline resumes, a goroutine can ask before that
// callback ran. franz-go asks Done just before it writes a request, so a
// produce request that waited in its queue while the process was frozen
// was written after the lease ended, after another node's records (the
// soak's active-active mode, seed 1796491074656121718). What is left is
// the instant between that check and the socket write.
func LeaseContext(parent context.Context, until time.Time) (context.Context, context.CancelFunc) {
	return leaseContextAt(parent, until, time.Now)
}

func leaseContextAt(parent context.Context, until time.Time, now func() time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(parent, until)
	return &leaseContext{Context: ctx, cancel: cancel, until: until, now: now}, cancel
}

type leaseContext struct {
	context.Context // the deadline context: Deadline, Value, and its timer
	cancel          context.CancelFunc
	until           time.Time
	now             func() time.Time
	lapsed          atomic.Bool // the clock passed until when Done or Err was asked
}

// check ends the context when the clock has passed the lease end and nothing ended
// it before. cancel is idempotent, and every caller that sees the lapse calls it, so
// none returns before the context ended.
func (c *leaseContext) check() {
	if c.Context.Err() == nil && !c.now().Before(c.until) {
		c.lapsed.Store(true)
		c.cancel()
	}
}

func (c *leaseContext) Done() <-chan struct{} {
	c.check()
	return c.Context.Done()
}

// Err is context.DeadlineExceeded once the lease end passed, whether the timer or a
// check ended the context (a check cancels it, which the deadline context reports as
// Canceled), and context.Canceled when its parent or cancel ended it first.
func (c *leaseContext) Err() error {
	c.check()
	err := c.Context.Err()
	if err == context.Canceled && c.lapsed.Load() {
		return context.DeadlineExceeded
	}
	return err
}
