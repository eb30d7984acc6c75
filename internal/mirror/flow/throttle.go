package flow

import (
	"context"

	"golang.org/x/time/rate"
)

// Throttle caps a flow's bandwidth (strait.throttle.bytes.per.second) so
// replication cannot saturate a link. Each flow has its own, and waiting
// blocks only that flow's fetching, so one throttled flow never stalls
// another.
type Throttle struct {
	lim   *rate.Limiter
	burst int
}

// NewThrottle returns nil for an unlimited flow.
func NewThrottle(bytesPerSecond int64) *Throttle {
	if bytesPerSecond <= 0 {
		return nil
	}
	// A burst of a tenth of a second keeps the rate smooth; at least 64 KiB
	// so small limits still move whole batches in few waits.
	burst := int(max(bytesPerSecond/10, 64<<10))
	return &Throttle{lim: rate.NewLimiter(rate.Limit(bytesPerSecond), burst), burst: burst}
}

// Wait blocks until n bytes may pass.
func (t *Throttle) Wait(ctx context.Context, n int) error {
	if t == nil {
		return nil
	}
	for n > 0 {
		step := min(n, t.burst)
		if err := t.lim.WaitN(ctx, step); err != nil {
			return err
		}
		n -= step
	}
	return nil
}
