//go:build integration

package mirror_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/kafkatest"
)

// horizonBit is the batch attribute Kafka's log cleaner sets (KIP-534) on
// a batch holding tombstones: its base timestamp is then the delete
// horizon, after which the cleaner may drop them.
const horizonBit = 0x40

// tombstones returns the offsets of the tombstones of keys t0..t4 in
// partition 0 of topic on c, read by a consumer.
func tombstones(t *testing.T, c *kafkatest.Cluster, topic string) []int64 {
	t.Helper()
	var out []int64
	for _, r := range c.ReadAll(t, topic, kgo.ReadUncommitted())[0] {
		if r.Value == nil && len(r.Key) == 2 && r.Key[0] == 't' {
			out = append(out, r.Offset)
		}
	}
	return out
}

// batchAt returns the batch of hs that holds offset.
func batchAt(hs []batch.Header, offset int64) (batch.Header, bool) {
	for _, h := range hs {
		if h.BaseOffset <= offset && offset <= h.LastOffset() {
			return h, true
		}
	}
	return batch.Header{}, false
}

// TestTombstonesKeepTheTargetsDeleteHorizon: Kafka's cleaner rewrites a
// compacted batch holding tombstones with the delete-horizon attribute and
// the horizon (its clean time plus delete.retention.ms) as the batch's
// base timestamp. Forwarded as it is, such a batch lands on the target
// with the source's horizon, and the target's cleaner drops the tombstones
// as soon as that horizon passed, whatever the remote topic's own
// delete.retention.ms: a target consumer behind by more than the source's
// delete.retention.ms never learns of the deletes. The copy must carry no
// horizon, so the target's cleaner sets its own.
func TestTombstonesKeepTheTargetsDeleteHorizon(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "horizon")
	remote := "A." + topic
	cfg := func(deleteRetention string) map[string]*string {
		m := map[string]string{
			"cleanup.policy": "compact", "segment.ms": "500", "min.cleanable.dirty.ratio": "0.01",
			"min.compaction.lag.ms": "0", "delete.retention.ms": deleteRetention,
		}
		out := map[string]*string{}
		for k, v := range m {
			out[k] = &v
		}
		return out
	}
	const sourceRetention = 8 * time.Second
	a.CreateTopic(t, topic, 1, cfg(strconv.Itoa(int(sourceRetention.Milliseconds()))))
	b.CreateTopic(t, remote, 1, cfg("86400000")) // one day

	cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceOne := func(recs ...*kgo.Record) {
		t.Helper()
		for _, r := range recs {
			r.Topic, r.Partition = topic, 0
		}
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// One batch of values for t0..t9, then one batch of tombstones for t0..t4.
	var values, deletes []*kgo.Record
	for i := range 10 {
		values = append(values, &kgo.Record{Key: []byte("t" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))})
	}
	for i := range 5 {
		deletes = append(deletes, &kgo.Record{Key: []byte("t" + strconv.Itoa(i))})
	}
	produceOne(values...)
	produceOne(deletes...)
	firstTombstone := deletes[0].Offset

	// Roll the source's segment by writing more (segment.ms is 500) until
	// its cleaner has rewritten the tombstones' batch with a horizon.
	var src batch.Header
	fill := 0
	kafkatest.Eventually(t, 90*time.Second, func() error {
		h, ok := batchAt(a.RawBatches(t, topic, 0), firstTombstone)
		if ok && h.Attributes&horizonBit != 0 {
			src = h
			return nil
		}
		fill++
		produceOne(&kgo.Record{Key: []byte("fill" + strconv.Itoa(fill)), Value: []byte("x")})
		return fmt.Errorf("the source's batch of tombstones at %d has no delete horizon yet (%+v, found %v)", firstTombstone, h, ok)
	})
	t.Logf("source: tombstones' batch %d..%d, %d records, attributes %#x, base timestamp %d (%s from now), max timestamp %d",
		src.BaseOffset, src.LastOffset(), src.NumRecords, src.Attributes, src.FirstTimestamp,
		time.Until(time.UnixMilli(src.FirstTimestamp)).Round(time.Millisecond), src.MaxTimestamp)
	if !src.Contiguous() {
		t.Fatalf("the source's batch of tombstones has holes; the test needs one forwarded as it is")
	}

	copied := time.Now()
	runDaemon(t, "topics = "+topic+"\nsync.topic.configs.enabled = false")
	waitProgress(t, topic)
	if got := tombstones(t, b, remote); len(got) != 5 {
		t.Fatalf("the target holds %d tombstones after the copy, want 5", len(got))
	}
	// What the target broker kept: a horizon on the target that is not one
	// its own cleaner set (now plus a day) is the source's.
	dst := b.RawBatches(t, remote, 0)
	for _, h := range dst {
		t.Logf("target: batch %d..%d, %d records, attributes %#x, base timestamp %d, max timestamp %d",
			h.BaseOffset, h.LastOffset(), h.NumRecords, h.Attributes, h.FirstTimestamp, h.MaxTimestamp)
		if h.Attributes&horizonBit != 0 && h.FirstTimestamp < copied.Add(12*time.Hour).UnixMilli() {
			t.Errorf("target batch %d..%d carries the delete horizon %d (%s from now), the source's, not the target's own (a day on)",
				h.BaseOffset, h.LastOffset(), h.FirstTimestamp, time.Until(time.UnixMilli(h.FirstTimestamp)).Round(time.Millisecond))
		}
	}

	// After the source's horizon passed, the target's cleaner runs again:
	// a probe record written after that is superseded by a later one with
	// the same key, and the cleaner removing it shows it ran.
	kafkatest.Eventually(t, sourceRetention+30*time.Second, func() error {
		if now := time.Now().UnixMilli(); now <= src.FirstTimestamp {
			return fmt.Errorf("the source's horizon %d has not passed yet (now %d)", src.FirstTimestamp, now)
		}
		return nil
	})
	probe := &kgo.Record{Key: []byte("probe"), Value: []byte("first")}
	produceOne(probe)
	probes := 0
	kafkatest.Eventually(t, 90*time.Second, func() error {
		for _, r := range b.ReadAll(t, remote, kgo.ReadUncommitted())[0] {
			if string(r.Key) == "probe" && string(r.Value) == "first" {
				probes++ // roll the target's segments: Strait copies each
				produceOne(&kgo.Record{Key: []byte("probe"), Value: []byte("again" + strconv.Itoa(probes))})
				return fmt.Errorf("the target's cleaner has not removed the first probe record yet (%d written after it)", probes)
			}
		}
		return nil
	})
	got := tombstones(t, b, remote)
	for _, h := range b.RawBatches(t, remote, 0) {
		t.Logf("target after its cleaner ran: batch %d..%d, %d records, attributes %#x, base timestamp %d",
			h.BaseOffset, h.LastOffset(), h.NumRecords, h.Attributes, h.FirstTimestamp)
	}
	if len(got) != 5 {
		t.Errorf("the target holds %d of the 5 tombstones a day's delete.retention.ms should keep: its cleaner dropped them on the source's horizon", len(got))
	}
}
