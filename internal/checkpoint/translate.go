package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/offsets"
	"strait/internal/policy"
)

// Translator answers exact offset translations for a flow; index.Reader
// and a loaded index.Map both provide one. id is the source topic's current
// ID (zero when the source reports none): a translator whose index holds
// another incarnation of the topic answers offsets.OtherIncarnation.
type Translator interface {
	TranslateID(topic string, partition int32, id [16]byte, u int64) (int64, offsets.Result)
}

// Flow names what a translation needs from the flow's configuration.
type Flow struct {
	Source, Target string
	Policy         policy.ReplicationPolicy
	Topics         *policy.Filter
	// Reverse is the reverse flow when it is enabled too (active-active),
	// else nil. A translation of a topic it copies back into itself is
	// lowered to the first record of either cluster the group has not read.
	Reverse *Reverse
}

// Translation is one committed source offset of a group and where it lands
// on the target.
type Translation struct {
	Topic       string         `json:"topic"`      // source topic
	Partition   int32          `json:"partition"`  // same on both sides
	Upstream    int64          `json:"upstream"`   // the group's committed offset on the source
	RemoteTopic string         `json:"remote"`     // the topic name a checkpoint uses on the target
	Downstream  int64          `json:"downstream"` // -1 unless Result is Exact (or Rounded)
	Result      offsets.Result `json:"-"`
	Status      string         `json:"status"` // Result in words
	Metadata    string         `json:"metadata"`
}

// TranslateGroup reads a group's committed offsets on the source and
// translates every partition whose topic the flow replicates. It is what
// checkpoints, `strait offsets translate` and the API use. A committed
// offset is translated only through the index of the source topic's
// current incarnation (topic ID): the group's offsets belong to it.
func TranslateGroup(ctx context.Context, src *kadm.Client, f Flow, tr Translator, group string) ([]Translation, error) {
	return translateGroup(ctx, src, f, tr, group, newTopicIDs(src))
}

func translateGroup(ctx context.Context, src *kadm.Client, f Flow, tr Translator, group string, ids *topicIDs) ([]Translation, error) {
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
	use := func(o kadm.OffsetResponse) bool { return o.Err == nil && o.At >= 0 && f.Topics.Accepts(o.Topic) }
	var topics []string
	resps.Each(func(o kadm.OffsetResponse) {
		if use(o) {
			topics = append(topics, o.Topic)
		}
	})
	if err := ids.lookup(ctx, topics); err != nil {
		return nil, fmt.Errorf("describing the source topics of group %q on %s: %w", group, f.Source, err)
	}
	var (
		out  []Translation
		errs []error
	)
	resps.Each(func(o kadm.OffsetResponse) {
		if !use(o) {
			return
		}
		t, err := translate(ctx, f, tr, ids, o.Topic, o.Partition, o.At)
		if err != nil {
			errs = append(errs, fmt.Errorf("group %q: %w", group, err))
			return
		}
		t.Metadata = o.Metadata
		out = append(out, t)
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// TranslateOffset translates one source offset of a partition the flow
// replicates, as TranslateGroup does a group's: for consumers that keep
// their offsets outside consumer groups (Flink, Spark, sink connectors).
func TranslateOffset(ctx context.Context, src *kadm.Client, f Flow, tr Translator, topic string, partition int32, offset int64) (Translation, error) {
	if !f.Topics.Accepts(topic) {
		return Translation{}, fmt.Errorf("the flow %s->%s does not replicate %s: its topics and topics.exclude leave it out", f.Source, f.Target, topic)
	}
	ids := newTopicIDs(src)
	if err := ids.lookup(ctx, []string{topic}); err != nil {
		return Translation{}, fmt.Errorf("describing %s on %s: %w", topic, f.Source, err)
	}
	return translate(ctx, f, tr, ids, topic, partition, offset)
}

// translate translates source offset u of a partition through the index
// of the topic's current incarnation (ids must know the topic), lowered
// for active-active flows.
func translate(ctx context.Context, f Flow, tr Translator, ids *topicIDs, topic string, partition int32, u int64) (Translation, error) {
	remote := policy.CheckpointTopic(f.Policy, f.Source, f.Target, topic)
	down, res := int64(-1), offsets.UnknownTopic
	if d := ids.known[topic]; d.Err == nil {
		down, res = tr.TranslateID(topic, partition, d.ID, u)
	}
	if r, ok := f.Reverse.remoteOf(f, topic); ok && r == remote && res.Usable() {
		var err error
		if down, res, err = f.Reverse.lower(ctx, f, remote, partition, u, down, res); err != nil {
			return Translation{}, err
		}
	}
	return Translation{Topic: topic, Partition: partition, Upstream: u, RemoteTopic: remote, Downstream: down, Result: res, Status: res.String()}, nil
}

// topicIDs looks up the current IDs of source topics, each once: the
// checkpointer shares one across the groups of an emission.
type topicIDs struct {
	adm   *kadm.Client
	known map[string]kadm.TopicDetail
}

func newTopicIDs(adm *kadm.Client) *topicIDs {
	return &topicIDs{adm: adm, known: map[string]kadm.TopicDetail{}}
}

// lookup describes the topics not looked up yet. A topic the source does
// not describe keeps its error (no translation); a failed request is an
// error.
func (c *topicIDs) lookup(ctx context.Context, topics []string) error {
	var missing []string
	for _, t := range topics {
		if _, ok := c.known[t]; !ok && !slices.Contains(missing, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	td, err := c.adm.ListTopics(ctx, missing...)
	if err != nil {
		return err
	}
	for _, t := range missing {
		d, ok := td[t]
		if !ok {
			d = kadm.TopicDetail{Topic: t, Err: kerr.UnknownTopicOrPartition}
		}
		c.known[t] = d
	}
	return nil
}
