package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/offsets"
	"strait/internal/policy"
)

// Translator answers exact offset translations for a flow; index.Reader
// and a loaded index.Map both provide one.
type Translator interface {
	Translate(topic string, partition int32, u int64) (int64, offsets.Result)
}

// Flow names what a translation needs from the flow's configuration.
type Flow struct {
	Source, Target string
	Policy         policy.ReplicationPolicy
	Topics         *policy.Filter
}

// Translation is one committed source offset of a group and where it lands
// on the target.
type Translation struct {
	Topic       string         `json:"topic"`      // source topic
	Partition   int32          `json:"partition"`  // same on both sides
	Upstream    int64          `json:"upstream"`   // the group's committed offset on the source
	RemoteTopic string         `json:"remote"`     // the topic name a checkpoint uses on the target
	Downstream  int64          `json:"downstream"` // -1 unless Result is Exact
	Result      offsets.Result `json:"-"`
	Status      string         `json:"status"` // Result in words
	Metadata    string         `json:"metadata"`
}

// TranslateGroup reads a group's committed offsets on the source and
// translates every partition whose topic the flow replicates. It is what
// checkpoints, `strait offsets translate` and the API use.
func TranslateGroup(ctx context.Context, src *kadm.Client, f Flow, tr Translator, group string) ([]Translation, error) {
	resps, err := src.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil, nil
	}
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("reading committed offsets of group %q on %s: %w", group, f.Source, err)
	}
	var out []Translation
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 || !f.Topics.Accepts(o.Topic) {
			return
		}
		down, res := tr.Translate(o.Topic, o.Partition, o.At)
		out = append(out, Translation{
			Topic: o.Topic, Partition: o.Partition, Upstream: o.At,
			RemoteTopic: policy.CheckpointTopic(f.Policy, f.Source, f.Target, o.Topic),
			Downstream:  down, Result: res, Status: res.String(), Metadata: o.Metadata,
		})
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}
