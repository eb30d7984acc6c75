package mirror

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// endsInterval is how often the source end offsets are listed for lag.
const endsInterval = 5 * time.Second

// refreshEnds lists the source end offsets of every partition every
// endsInterval, so that lag stays right while a partition fetches nothing:
// a paused or unreachable target fills the buffer and stops fetching, and
// the end offsets the last fetches saw would then hide what arrived since.
// The listing uses the flow's isolation (the last stable offset when
// read_committed), as fetches do.
func (m *Mirror) refreshEnds(ctx context.Context) {
	adm := kadm.NewClient(m.cl.Source)
	t := time.NewTicker(endsInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.RLock()
		var names []string
		parts := map[string][]*partition{}
		for _, ts := range m.topics {
			names = append(names, ts.Source)
			parts[ts.Source] = ts.parts
		}
		m.mu.RUnlock()
		if len(names) == 0 {
			continue
		}
		list := adm.ListEndOffsets
		if m.cfg.ReadCommitted {
			list = adm.ListCommittedOffsets
		}
		lctx, cancel := context.WithTimeout(ctx, endsInterval)
		ends, err := list(lctx, names...)
		cancel()
		if err != nil {
			m.log.Debug("listing source end offsets for lag failed; retrying", "err", err)
			continue
		}
		ends.Each(func(o kadm.ListedOffset) {
			ps := parts[o.Topic]
			if o.Err != nil || o.Partition < 0 || int(o.Partition) >= len(ps) {
				return
			}
			p := ps[o.Partition]
			for cur := p.end.Load(); o.Offset > cur; cur = p.end.Load() {
				if p.end.CompareAndSwap(cur, o.Offset) {
					break
				}
			}
		})
	}
}
