package preserve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TopicGaps says why a source topic holds offsets with nothing to copy, which the
// offset-preserving mode fills on the target: read before copying, for `check --plan`.
type TopicGaps struct {
	Source string `json:"source"`
	Remote string `json:"remote"`
	// Compacted: its cleanup.policy compacts, so the cleaner leaves holes.
	Compacted bool `json:"compacted,omitempty"`
	// Transactional: a producer the partitions remember wrote transactions, so
	// markers (and perhaps aborted records) take offsets.
	Transactional bool `json:"transactional,omitempty"`
	// Refused: strait.offsets.preserve.refuse.gaps names the topic, so its partitions
	// stop at the first gap instead of filling it.
	Refused bool `json:"refused,omitempty"`
}

// String describes the topic's gaps for the plan.
func (g TopicGaps) String() string {
	var why []string
	if g.Compacted {
		why = append(why, "compaction holes")
	}
	if g.Transactional {
		why = append(why, "transaction markers")
	}
	if len(why) == 0 {
		return "no gaps seen"
	}
	what := "filled with filler read_committed consumers never read"
	if g.Refused {
		what = "refused: its partitions stop at the first (strait.offsets.preserve.refuse.gaps)"
	}
	return "gaps: " + strings.Join(why, ", ") + "; " + what
}

// Survey reads, on the source, what gaps each topic of names (source to remote) will
// have: its cleanup.policy, and whether the producers its partitions remember
// (DescribeProducers) wrote transactions. refused names the topics whose gaps are
// refused.
func Survey(ctx context.Context, adm *kadm.Client, names map[string]string, refused func(string) bool) ([]TopicGaps, error) {
	topics := slices.Sorted(maps.Keys(names))
	out := make([]TopicGaps, 0, len(topics))
	if len(topics) == 0 {
		return out, nil
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describing the configs of the topics that keep offsets: %w", err)
	}
	compacted := map[string]bool{}
	for _, rc := range configs {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil && strings.Contains(*c.Value, "compact") {
				compacted[rc.Name] = true
			}
		}
	}
	set := kadm.TopicsSet{}
	for _, t := range topics {
		set.Add(t) // no partitions: all of them, from metadata
	}
	described, err := adm.DescribeProducers(ctx, set)
	if err != nil {
		return nil, fmt.Errorf("describing the producers of the topics that keep offsets: %w", err)
	}
	transactional := map[string]bool{}
	described.EachProducer(func(p kadm.DescribedProducer) {
		if p.CoordinatorEpoch >= 0 || p.CurrentTxnStartOffset >= 0 {
			transactional[p.Topic] = true
		}
	})
	for _, t := range topics {
		out = append(out, TopicGaps{Source: t, Remote: names[t], Compacted: compacted[t], Transactional: transactional[t], Refused: refused(t)})
	}
	return out, nil
}
