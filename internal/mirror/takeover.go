package mirror

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/tail"
	"strait/internal/wire"
)

// loadTakeover reads a Java MM2's replication progress from its Connect
// offsets topic on the target (spec mm2-compat.md §2.6), so partitions
// Strait has no progress for resume where MM2 stopped. Records that are not
// MirrorSourceConnector offsets of this flow's source are ignored; garbage
// is skipped with a warning.
func (m *Mirror) loadTakeover(ctx context.Context) (map[string]map[int32]int64, error) {
	out := map[string]map[int32]int64{}
	if m.cfg.TakeoverTopic == "" {
		return out, nil
	}
	skipped := 0
	_, err := tail.ReadToEnd(ctx, m.cl.IndexReader, m.cfg.TakeoverTopic, func(r *kgo.Record) {
		k, err := wire.DecodeSourceOffsetKey(r.Key)
		if err != nil {
			if _, _, jerr := wire.DecodeConnectOffsetKey(r.Key); jerr != nil {
				skipped++ // not even a Connect key
			}
			return // another connector's offsets
		}
		if k.Cluster != m.cfg.Source {
			return
		}
		off, ok, err := wire.DecodeConnectOffsetValue(r.Value)
		switch {
		case err != nil:
			skipped++
		case !ok || off < 0:
			delete(out[k.Topic], k.Partition)
		default:
			if out[k.Topic] == nil {
				out[k.Topic] = map[int32]int64{}
			}
			out[k.Topic][k.Partition] = off
		}
	})
	m.badRecords.Add(int64(skipped))
	if skipped > 0 {
		m.log.Warn("skipped undecodable records in MirrorMaker 2's offsets topic", "topic", m.cfg.TakeoverTopic, "count", skipped)
	}
	if err != nil {
		return nil, fmt.Errorf("reading MirrorMaker 2's progress from %s: %w", m.cfg.TakeoverTopic, err)
	}
	if len(out) > 0 {
		m.log.Info("found MirrorMaker 2's stored progress; partitions without Strait progress resume from it", "topic", m.cfg.TakeoverTopic, "topics", len(out))
	}
	return out, nil
}
