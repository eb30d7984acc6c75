//go:build integration

package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/policy"
	"strait/internal/tail"
	"strait/internal/wire"
)

// TestActiveActiveFailoverSkipsNothing: A and B both write into one topic,
// A->B and B->A run with the identity policy, so each side holds both
// origins' records in its own order. A group committed on A fails over to
// B at its checkpoint: from there it must read every record it had not
// read on A, whichever cluster wrote it (it may read some again).
func TestActiveActiveFailoverSkipsNothing(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "aa")
	const rounds, perRound = 6, 1000 // records per side, round and partition
	a.CreateTopic(t, topic, partitions, nil)
	b.CreateTopic(t, topic, partitions, nil)
	startDaemon(t, baseConfig(fmt.Sprintf(`B->A.enabled = true
topics = %s
groups = %s.*
replication.policy.class = %s
emit.heartbeats.enabled = false
heartbeats.replication.enabled = false`, topic, topic, policy.IdentityClass)))

	// Each round both sides write at once, so each holds its own records
	// of the round before the other side's copies.
	for round := range rounds {
		var wg sync.WaitGroup
		for _, c := range []*kafkatest.Cluster{a, b} {
			wg.Go(func() { writeRound(t, c, topic, round, perRound) })
		}
		wg.Wait()
		want := int64(2 * (round + 1) * perRound)
		kafkatest.Eventually(t, 2*time.Minute, func() error { return holds(t, topic, want, a, b) })
	}

	type groupAt struct {
		group string
		at    int64
	}
	var groups []groupAt
	committedAt := map[string]int64{}
	for at := int64(500); at < 2*rounds*perRound; at += 1700 {
		g := fmt.Sprintf("%s-%d", topic, at)
		commit(t, a, g, topic, partitions, at)
		groups = append(groups, groupAt{g, at})
		committedAt[g] = at
	}

	pol, err := policy.New(policy.IdentityClass, ".", true, "A")
	if err != nil {
		t.Fatal(err)
	}
	cpTopic := pol.CheckpointsTopic("A")
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		cps := checkpoints(t, b, cpTopic)
		for _, g := range groups {
			for p := range int32(partitions) {
				cp, ok := cps[fmt.Sprintf("%s/%s/%d", g.group, topic, p)]
				if !ok || cp.UpstreamOffset != g.at {
					return fmt.Errorf("no checkpoint of %s[%d] at %d on %s yet", g.group, p, g.at, cpTopic)
				}
			}
		}
		return nil
	})

	// Java's RemoteClusterUtils, with the identity policy, reads the
	// latest checkpoints. A checkpoint may still advance meanwhile: one
	// written before the reverse flow's index covered the group's position
	// rounds down (to 0 at worst), and the next one moves on.
	ask := []kafkatest.Translation{{RemoteAlias: "A", Group: groups[0].group}, {RemoteAlias: "A", Group: groups[len(groups)/2].group}}
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		view := env.MirrorClient(t, b, kafkatest.MirrorClientOpts{PolicyClass: policy.IdentityClass, SourceAlias: "A", Translate: ask})
		latest := checkpoints(t, b, cpTopic)
		for _, q := range ask {
			tr := view.Translated("A", q.Group)
			for p := range int32(partitions) {
				want := latest[fmt.Sprintf("%s/%s/%d", q.Group, topic, p)].DownstreamOffset
				if have, ok := tr[fmt.Sprintf("%s-%d", topic, p)]; !ok || have != want {
					return fmt.Errorf("RemoteClusterUtils.translateOffsets(%s) %s-%d = %d (present %v), want %d", q.Group, topic, p, have, ok, want)
				}
			}
		}
		return nil
	})

	// Every checkpoint written, not only the latest: a consumer may fail
	// over at any of them.
	skipped, reread, checked := 0, 0, 0
	for key, cps := range checkpointHistory(t, b, cpTopic) {
		for _, cp := range cps {
			at, ok := committedAt[cp.Group]
			if !ok || cp.Topic != topic || cp.UpstreamOffset != at {
				continue
			}
			checked++
			unread := valuesFrom(t, a, topic, cp.Partition, at)
			onB := valuesFrom(t, b, topic, cp.Partition, cp.DownstreamOffset)
			var missing []string
			for v := range unread {
				if !onB[v] {
					missing = append(missing, v)
				}
			}
			skipped += len(missing)
			reread += len(onB) - (len(unread) - len(missing))
			if len(missing) > 0 {
				t.Errorf("%s committed at %d on A, checkpointed at %d on B: a consumer failing over to B never reads %d of the %d records the group had not read on A (e.g. %s)",
					key, at, cp.DownstreamOffset, len(missing), len(unread), strings.Join(missing[:min(3, len(missing))], ", "))
			}
		}
	}
	t.Logf("%d checkpoints: %d records skipped, %d read again", checked, skipped, reread)
}

// checkpointHistory returns every checkpoint in topic on c, by
// "group/topic/partition", in the order they were written.
func checkpointHistory(t *testing.T, c *kafkatest.Cluster, topic string) map[string][]wire.Checkpoint {
	t.Helper()
	cl := c.Client(t, tail.ClientOpts()...)
	out := map[string][]wire.Checkpoint{}
	if _, err := tail.ReadToEnd(t.Context(), cl, topic, func(r *kgo.Record) {
		if cp, err := wire.DecodeCheckpoint(r.Key, r.Value); err == nil {
			key := fmt.Sprintf("%s/%s/%d", cp.Group, cp.Topic, cp.Partition)
			out[key] = append(out[key], cp)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeRound writes perRound records "<cluster>-<round>-<partition>-<i>"
// to every partition of topic on c.
func writeRound(t *testing.T, c *kafkatest.Cluster, topic string, round, perRound int) {
	cl := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range int32(partitions) {
		for i := range perRound {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d-%d", c.Name, round, p, i)})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Errorf("writing round %d on %s: %v", round, c.Name, err)
	}
}

// holds reports whether every partition of topic holds n records on each
// cluster.
func holds(t *testing.T, topic string, n int64, clusters ...*kafkatest.Cluster) error {
	for _, c := range clusters {
		ends := endOffsets(t, c, topic, kgo.ReadCommitted())
		for p := range int32(partitions) {
			if ends[p] != n {
				return fmt.Errorf("%s[%d] on %s ends at %d, want %d", topic, p, c.Name, ends[p], n)
			}
		}
	}
	return nil
}

// valuesFrom returns the values of the records of topic[partition] on c
// from offset to the end.
func valuesFrom(t *testing.T, c *kafkatest.Cluster, topic string, partition int32, offset int64) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	end := endOffsets(t, c, topic, kgo.ReadCommitted())[partition]
	if offset >= end {
		return out
	}
	cl := c.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for next := offset; next < end; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s[%d] on %s from %d: %v", topic, partition, c.Name, offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[string(r.Value)] = true
			next = r.Offset + 1
		})
	}
	return out
}
