//go:build integration

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// activeActiveTraffic is how long both clusters take writes while A->B and
// B->A run: the 60 s, long enough for many fetch rounds of each
// flow over the other's writes.
const activeActiveTraffic = 60 * time.Second

// TestActiveActiveCopiesEveryRecordOnce runs A->B and B->A in one config,
// with the default policy (names break the loop, as in MM2) and with the
// identity policy (MM2 loops forever; Strait skips the batches written by
// the reverse flow's registered producer ids). After a minute of writes on
// both sides, each cluster holds every record of both sides exactly once,
// and once both flows have caught up nothing more arrives.
func TestActiveActiveCopiesEveryRecordOnce(t *testing.T) {
	// B->A replicates B's heartbeats to A: other tests' flows from A
	// (under other aliases) would copy that topic too. Removed once both
	// cases are done.
	deleteTopicsAtCleanup(t, env.Clusters[0], func(name string) bool { return name == "B.heartbeats" })
	for _, tc := range []struct {
		name, policy string
		remoteOnA    func(topic string) string // where A's copy of B's records lands
		remoteOnB    func(topic string) string
	}{
		{"default", "DefaultReplicationPolicy", func(s string) string { return "B." + s }, func(s string) string { return "A." + s }},
		{"identity", "IdentityReplicationPolicy", func(s string) string { return s }, func(s string) string { return s }},
	} {
		// One after the other: both cases' nodes would join the same
		// groups (strait-A, strait-B) and share each other's partitions,
		// as nodes of one flow do.
		t.Run(tc.name, func(t *testing.T) {
			a, b := env.Clusters[0], env.Clusters[1]
			topic := kafkatest.Name(t, "aa-"+tc.name)
			a.CreateTopic(t, topic, 3, nil)
			b.CreateTopic(t, topic, 3, nil)
			cfg := writeConfig(t, fmt.Sprintf("B->A.enabled = true\ntopics = %s\nreplication.policy.class = %s", topic, tc.policy))
			p := startStrait(t, "run", cfg)

			ctx, stop := context.WithTimeout(t.Context(), activeActiveTraffic)
			defer stop()
			var wg sync.WaitGroup
			written := map[string]*int64{"A": new(int64), "B": new(int64)}
			errs := make(chan error, 2)
			for origin, c := range map[string]*kafkatest.Cluster{"A": a, "B": b} {
				cl := producer(t, c)
				wg.Go(func() { errs <- writeUntil(ctx, cl, topic, origin, written[origin]) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			nA, nB := *written["A"], *written["B"]
			t.Logf("written: %d records on A, %d on B", nA, nB)

			// Each record of each side, once, on both clusters.
			type place struct {
				c      *kafkatest.Cluster
				topics []string
			}
			places := []place{{a, unique(topic, tc.remoteOnA(topic))}, {b, unique(topic, tc.remoteOnB(topic))}}
			for _, pl := range places {
				kafkatest.Eventually(t, 2*time.Minute, func() error {
					return holdsEachOnce(t, pl.c, pl.topics, nA, nB)
				})
			}
			// Both flows caught up: their progress covers their source's
			// end, including what they skipped. Nothing more may arrive.
			waitFlowCaughtUp(t, a, b, "strait-A", topic, tc.remoteOnB(topic))
			waitFlowCaughtUp(t, b, a, "strait-B", topic, tc.remoteOnA(topic))
			for _, pl := range places {
				if err := holdsEachOnce(t, pl.c, pl.topics, nA, nB); err != nil {
					t.Fatalf("after both flows caught up: %v", err)
				}
				for _, looped := range []string{"A.B." + topic, "B.A." + topic} {
					if n := sum(endOffsets(t, pl.c, looped)); n > 0 {
						t.Fatalf("cluster %s holds %d records in %s: records went round", pl.c.Name, n, looped)
					}
				}
			}
			if err := p.stop(t, syscall.SIGTERM, 30*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func unique(names ...string) []string {
	var out []string
	for _, n := range names {
		if len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	return out
}

// writeUntil writes records "<origin>/<seq>" to every partition of topic
// at about 200 records a second until ctx ends, counting the acknowledged.
func writeUntil(ctx context.Context, cl *kgo.Client, topic, origin string, n *int64) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for seq := int64(0); ; {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var batch []*kgo.Record
		for range 2 {
			batch = append(batch, &kgo.Record{Topic: topic, Partition: int32(seq % 3), Value: []byte(origin + "/" + strconv.FormatInt(seq, 10))})
			seq++
		}
		if err := cl.ProduceSync(context.WithoutCancel(ctx), batch...).FirstErr(); err != nil {
			return fmt.Errorf("writing to %s on %s: %w", topic, origin, err)
		}
		*n = seq
	}
}

// holdsEachOnce checks that topics on c hold records A/0..nA-1 and
// B/0..nB-1, each exactly once.
func holdsEachOnce(t *testing.T, c *kafkatest.Cluster, topics []string, nA, nB int64) error {
	seen := map[string]int{}
	total := 0
	for _, topic := range topics {
		for _, part := range c.ReadAll(t, topic, kgo.ReadUncommitted()) {
			for _, r := range part {
				seen[string(r.Value)]++
				total++
			}
		}
	}
	for origin, n := range map[string]int64{"A": nA, "B": nB} {
		for s := range n {
			v := origin + "/" + strconv.FormatInt(s, 10)
			if seen[v] != 1 {
				return fmt.Errorf("cluster %s (%s): record %s appears %d times", c.Name, strings.Join(topics, ", "), v, seen[v])
			}
		}
	}
	if want := int(nA + nB); total != want {
		return fmt.Errorf("cluster %s (%s) holds %d records, want %d", c.Name, strings.Join(topics, ", "), total, want)
	}
	return nil
}

// waitFlowCaughtUp waits until flow src->dst's progress (group on dst) on
// remote covers the end of topic on src in every partition.
func waitFlowCaughtUp(t *testing.T, src, dst *kafkatest.Cluster, group, topic, remote string) {
	t.Helper()
	want := endOffsets(t, src, topic)
	kafkatest.Eventually(t, time.Minute, func() error {
		resps, err := dst.Admin(t).FetchOffsets(t.Context(), group)
		if err != nil {
			return err
		}
		got := map[int32]int64{}
		resps.Each(func(o kadm.OffsetResponse) {
			if o.Topic == remote && o.Err == nil {
				got[o.Partition] = o.At
			}
		})
		for p, n := range want {
			if got[p] < n {
				return fmt.Errorf("%s on %s [%d]: progress %d of %d", topic, src.Name, p, got[p], n)
			}
		}
		return nil
	})
}
