//go:build integration

package mirror_test

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
	"strait/internal/preserve"
)

// moveLogStart makes partition 0 of topic on c, empty, start at offset at, as retention
// or DeleteRecords would after at records: cheaply, with the filler.
func moveLogStart(t *testing.T, c *kafkatest.Cluster, topic string, at int64) {
	t.Helper()
	g := preserve.NewGaps(c.Client(t, fastpath.TransactionOpts()...), kafkatest.Name(t, "start"), time.Minute)
	if err := g.StartAt(t.Context(), []preserve.Start{{Topic: topic, Partition: 0, At: at}})[0]; err != nil {
		t.Fatal(err)
	}
}

// sameRecords checks that read_committed consumers of topic on a and remote on b read
// the same records at the same offsets, and that both partitions end at the same
// offset.
func sameRecords(t *testing.T, a, b *kafkatest.Cluster, topic, remote string) {
	t.Helper()
	src, dst := a.ReadAll(t, topic, kgo.ReadCommitted()), b.ReadAll(t, remote, kgo.ReadCommitted())
	if len(src) != len(dst) {
		t.Fatalf("%s has %d partitions, %s %d", topic, len(src), remote, len(dst))
	}
	for p := range src {
		if len(src[p]) != len(dst[p]) {
			t.Errorf("partition %d: %d records on the source, %d on the target", p, len(src[p]), len(dst[p]))
			continue
		}
		for i, s := range src[p] {
			if d := dst[p][i]; !sameRecord(s, d) {
				t.Errorf("partition %d record %d:\nsource %s\ntarget %s", p, i, show(s), show(d))
				break
			}
		}
	}
	se, de := a.EndOffsets(t, topic, kgo.ReadUncommitted()), b.EndOffsets(t, remote, kgo.ReadUncommitted())
	if fmt.Sprint(se) != fmt.Sprint(de) {
		t.Errorf("the source ends at %v, the target at %v", se, de)
	}
}

func sameRecord(s, d *kgo.Record) bool {
	if s.Offset != d.Offset || !bytes.Equal(s.Key, d.Key) || (s.Key == nil) != (d.Key == nil) || !bytes.Equal(s.Value, d.Value) ||
		(s.Value == nil) != (d.Value == nil) || !s.Timestamp.Equal(d.Timestamp) || len(s.Headers) != len(d.Headers) {
		return false
	}
	for i, h := range s.Headers {
		if h.Key != d.Headers[i].Key || !bytes.Equal(h.Value, d.Headers[i].Value) {
			return false
		}
	}
	return true
}

func show(r *kgo.Record) string {
	return fmt.Sprintf("offset %d key %q value %q timestamp %d headers %v", r.Offset, r.Key, r.Value, r.Timestamp.UnixMilli(), r.Headers)
}

// waitAligned waits until every partition of remote on b ends where topic's on a does.
func waitAligned(t *testing.T, a, b *kafkatest.Cluster, topic, remote string) {
	t.Helper()
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		se, de := a.EndOffsets(t, topic, kgo.ReadUncommitted()), b.EndOffsets(t, remote, kgo.ReadUncommitted())
		if fmt.Sprint(se) != fmt.Sprint(de) {
			return fmt.Errorf("the source ends at %v, the target at %v", se, de)
		}
		return nil
	})
}

// TestPreserveOffsets: with strait.offsets.preserve, read_committed consumers read the
// same records at the same offsets on both sides, and every remote partition ends where
// its source partition does, for a plain topic whose log starts at 1,000,000, a
// transactional topic with aborted transactions and markers, and a compacted topic with
// the cleaner's holes; the status names the gaps filled.
func TestPreserveOffsets(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "keep")
	plain, txn, compacted := prefix+"-plain", prefix+"-txn", prefix+"-compacted"
	a.CreateTopic(t, plain, 2, nil)
	a.CreateTopic(t, txn, 2, nil)
	a.CreateTopic(t, compacted, 1, kafkatest.CompactedConfig())
	moveLogStart(t, a, plain, 1_000_000)
	produce(t, plain, 2, 3000, kgo.Lz4Compression(), false)
	produce(t, txn, 2, 6000, kgo.NoCompression(), true)
	kafkatest.CompactWithHoles(t, a, compacted)

	d := runDaemon(t, "topics = "+prefix+"-.*\nA->B.strait.offsets.preserve = true\n")
	for _, topic := range []string{plain, txn, compacted} {
		waitAligned(t, a, b, topic, "A."+topic)
		sameRecords(t, a, b, topic, "A."+topic)
	}
	if s := b.StartOffsets(t, "A."+plain)[0]; s != 1_000_000 {
		t.Errorf("the remote partition of the plain topic starts at %d, want 1000000 like the source", s)
	}
	// More records after the start: they land at their offsets too.
	produce(t, txn, 2, 1500, kgo.ZstdCompression(), true)
	waitAligned(t, a, b, txn, "A."+txn)
	sameRecords(t, a, b, txn, "A."+txn)

	// Apache Kafka's Java consumer reads the same on both sides, from the log start.
	for _, topic := range []string{plain, txn, compacted} {
		if diff := env.CompareWithJava(t, a, topic, b, "A."+topic); diff != "" {
			t.Error(diff)
		}
	}
	// An application that stored only the number of the next offset it needed (no group)
	// resumes on the target at that number: nothing skipped, nothing read twice.
	whole := env.ReadWithJava(t, a, txn, nil).Partition(0)
	half := whole[:len(whole)/2]
	stored := javaOffset(t, half[len(half)-1]) + 1
	rest := env.ReadWithJava(t, b, "A."+txn, map[int32]int64{0: stored, 1: b.EndOffsets(t, "A."+txn, kgo.ReadUncommitted())[1]}).Partition(0)
	if got := append(slices.Clone(half), rest...); !slices.Equal(got, whole) {
		t.Errorf("read on the source up to offset %d, then on the target from there: %d records, want the source's %d (first difference: %s)",
			stored, len(got), len(whole), kafkatest.FirstDifference(whole, got))
	}

	gaps := map[string]int64{}
	for _, f := range d.Status().Flows {
		for _, p := range f.Mirror.Partitions {
			if !p.KeepsOffsets {
				t.Errorf("%s[%d] does not say it keeps its offsets", p.Topic, p.Partition)
			}
			gaps[p.Topic] += p.Gaps
		}
	}
	if gaps[plain] != 0 || gaps[txn] == 0 || gaps[compacted] == 0 {
		t.Errorf("gaps filled by topic: %v; want none in the plain topic (its start is filled before copying), some in the others", gaps)
	}
}

// javaOffset is the offset of a line of kafkatest.JavaRead.
func javaOffset(t *testing.T, line string) int64 {
	t.Helper()
	f := strings.Fields(line)
	o, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	return o
}
