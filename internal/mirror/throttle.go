package mirror

import (
	"context"

	"golang.org/x/time/rate"
)

// throttle caps a flow's bandwidth (strait.throttle.bytes.per.second) so
// replication cannot saturate a link. Each flow has its own, and waiting
// blocks only that flow's fetching, so one throttled flow never stalls
// another.
type throttle struct {
	lim   *rate.Limiter
	burst int
}

// newThrottle returns nil for an unlimited flow.
func newThrottle(bytesPerSecond int64) *throttle {
	if bytesPerSecond <= 0 {
		return nil
	}
	// A burst of a tenth of a second keeps the rate smooth; at least 64 KiB
	// so small limits still move whole batches in few waits.
	burst := int(max(bytesPerSecond/10, 64<<10))
	return &throttle{lim: rate.NewLimiter(rate.Limit(bytesPerSecond), burst), burst: burst}
}

// wait blocks until n bytes may pass.
func (t *throttle) wait(ctx context.Context, n int) error {
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
