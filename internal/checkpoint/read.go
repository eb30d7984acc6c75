package checkpoint

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/tail"
	"strait/internal/wire"
)

// Key names a checkpoint: a group's partition of a remote topic.
type Key struct {
	Group     string
	Topic     string // the remote (target-side) topic
	Partition int32
}

// ReadLatest reads a checkpoints topic to its end with cl (made with
// tail.ClientOpts, used by nothing else) and returns the latest checkpoint
// of each key, tombstones applied, for the one-shot commands (verify,
// failover). Records that are not checkpoints are left out. A missing
// topic holds none.
func ReadLatest(ctx context.Context, cl *kgo.Client, topic string) (map[Key]wire.Checkpoint, error) {
	latest := map[Key]wire.Checkpoint{}
	_, err := tail.ReadToEnd(ctx, cl, topic, func(r *kgo.Record) {
		if cp, err := wire.DecodeCheckpoint(r.Key, r.Value); err == nil {
			latest[Key{cp.Group, cp.Topic, cp.Partition}] = cp
		} else if cp, err := wire.DecodeCheckpointKey(r.Key); err == nil && r.Value == nil {
			delete(latest, Key{cp.Group, cp.Topic, cp.Partition})
		}
	})
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, err
	}
	return latest, nil
}
