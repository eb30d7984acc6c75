package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"strait/internal/dr"
)

// withoutFailedOver reads each replicating flow's failover state (package
// dr) on its target and leaves out the flows a failover stopped: they copy
// nothing until strait failback clears their state. It returns the flows
// to run, and for each the offsets to follow its state from. It fails
// when no flow that copies data is left (heartbeats alone are no reason to
// run).
func (d *Daemon) withoutFailedOver(ctx context.Context, flows []*flow) ([]*flow, map[*flow]map[int32]int64, error) {
	follow := map[*flow]map[int32]int64{}
	var run []*flow
	for _, f := range flows {
		if f.drReader == nil {
			run = append(run, f)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		states, from, err := dr.Read(rctx, f.drReader)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("flow %s: %w", f.cfg.Name(), err)
		}
		if st, ok := states[f.cfg.Name()]; ok && st.Stopped() {
			d.log.Error("not running a flow that was failed over: it copies nothing until strait failback returns it",
				"flow", f.cfg.Name(), "phase", st.Phase, "at", st.At, "fix", fmt.Sprintf("run strait failback --flow '%s', or disable the flow", f.cfg.Name()))
			continue
		}
		follow[f] = from
		run = append(run, f)
	}
	if !slices.ContainsFunc(run, func(f *flow) bool { return f.replicates }) {
		return nil, nil, errors.New("every enabled flow was failed over (logged above): run strait failback, or enable the reverse flow, for this node to copy anything")
	}
	return run, follow, nil
}

// watchFailover follows the flow's failover state until ctx is done, and
// calls stop once a failover marks the flow: the flow then flushes what it
// copied, commits its progress and stops on this node, as at shutdown,
// while the node's other flows run on.
func (d *Daemon) watchFailover(ctx context.Context, f *flow, from map[int32]int64, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dr.Follow(ctx, f.drReader, from, f.cfg.Name(), func(st dr.State) {
		if !st.Stopped() {
			return
		}
		d.log.Warn("stopping the flow: strait failover moved its consumers to the target", "flow", f.cfg.Name(), "phase", st.Phase, "at", st.At)
		stop()
		cancel()
	}, func(err error) {
		d.log.Debug("following the failover state", "flow", f.cfg.Name(), "err", err)
	})
}
