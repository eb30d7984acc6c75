//go:build integration

package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/dr"
	"strait/internal/flowconn"
	"strait/internal/kafkaclient"
	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
	"strait/internal/preserve"
	"strait/internal/switchover"
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
	// A consumer group on the source stopped at offsets of every kind: after a record,
	// on a marker, on an aborted record, on a compaction hole.
	group := prefix + "-app"
	committed := kadm.Offsets{}
	txnLog := a.ReadAll(t, txn, kgo.ReadCommitted())[0]
	at := map[string]int64{plain: 1_000_100, txn: txnLog[len(txnLog)/2].Offset + 1, compacted: a.EndOffsets(t, compacted, kgo.ReadUncommitted())[0] / 3}
	for topic, o := range at {
		committed.Add(kadm.Offset{Topic: topic, Partition: 0, At: o, LeaderEpoch: -1})
	}
	if _, err := a.Admin(t).CommitOffsets(t.Context(), group, committed); err != nil {
		t.Fatal(err)
	}

	d := runDaemon(t, "topics = "+prefix+"-.*\nA->B.strait.offsets.preserve = true\ngroups = "+group+
		"\nrefresh.groups.interval.seconds = 1\nemit.checkpoints.interval.seconds = 1\nsync.group.offsets.enabled = true\nsync.group.offsets.interval.seconds = 1\n")
	for _, topic := range []string{plain, txn, compacted} {
		waitAligned(t, a, b, topic, "A."+topic)
		sameRecords(t, a, b, topic, "A."+topic)
	}
	if s := b.StartOffsets(t, "A."+plain)[0]; s != 1_000_000 {
		t.Errorf("the remote partition of the plain topic starts at %d, want 1000000 like the source", s)
	}
	// Group offsets synced to the target are the source's own numbers: translation is
	// the identity.
	kafkatest.Eventually(t, time.Minute, func() error {
		got, err := b.Admin(t).FetchOffsets(t.Context(), group)
		if err != nil {
			return err
		}
		for topic, want := range at {
			if o, ok := got.Lookup("A."+topic, 0); !ok || o.At != want {
				return fmt.Errorf("group %s on the target: A.%s[0] at %d (present %v), want %d as on the source", group, topic, o.At, ok, want)
			}
		}
		return nil
	})
	// What read_uncommitted consumers read: on the source the aborted records, on the
	// target filler records (empty key, null value) in their place and in compaction
	// holes wider than one offset; the rest is the same records.
	for _, topic := range []string{txn, compacted} {
		srcAll, dstAll := a.ReadAll(t, topic, kgo.ReadUncommitted()), b.ReadAll(t, "A."+topic, kgo.ReadUncommitted())
		var src, dst, filler, data int
		for p := range srcAll {
			src += len(srcAll[p])
			dst += len(dstAll[p])
			for _, r := range dstAll[p] {
				if len(r.Key) == 0 && r.Value == nil {
					filler++ // the filler's records: empty key, null value
				}
			}
		}
		for _, recs := range b.ReadAll(t, "A."+topic, kgo.ReadCommitted()) {
			data += len(recs)
		}
		t.Logf("%s read_uncommitted: %d records on the source, %d on the target: %d data and %d filler", topic, src, dst, data, filler)
		if dst != data+filler {
			t.Errorf("%s: read_uncommitted reads %d records on the target, not its %d data records and %d filler", topic, dst, data, filler)
		}
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

// TestPreserveRefusesGapsWhereAsked: a topic strait.offsets.preserve.refuse.gaps names
// stops at its first source offset with nothing to copy (here the marker of its first
// transaction, at 500) with an error naming the offsets and the key, after copying what
// came before it; a plain topic of the same flow copies on.
func TestPreserveRefusesGapsWhereAsked(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "refuse")
	plain, txn := prefix+"-plain", prefix+"-txn"
	a.CreateTopic(t, plain, 1, nil)
	a.CreateTopic(t, txn, 1, nil)
	produce(t, plain, 1, 500, kgo.NoCompression(), false)
	produce(t, txn, 1, 1000, kgo.NoCompression(), true) // two committed transactions of 500
	d := runDaemon(t, "topics = "+prefix+"-.*\nA->B.strait.offsets.preserve = true\nA->B.strait.offsets.preserve.refuse.gaps = .*-txn\n")
	waitAligned(t, a, b, plain, "A."+plain)
	var stopped string
	kafkatest.Eventually(t, time.Minute, func() error {
		for _, f := range d.Status().Flows {
			for _, p := range f.Mirror.Partitions {
				if p.Topic == txn && p.Error != "" {
					stopped = p.Error
					return nil
				}
			}
		}
		return fmt.Errorf("the transactional topic still copies")
	})
	if !strings.Contains(stopped, "strait.offsets.preserve.refuse.gaps") || !strings.Contains(stopped, "source offsets 500 to 500") {
		t.Errorf("the transactional topic stopped with %q; want the gap's offsets and the key named", stopped)
	}
	if end := b.EndOffsets(t, "A."+txn, kgo.ReadUncommitted())[0]; end != 500 {
		t.Errorf("the remote transactional partition ends at %d, want 500: the records before the marker, nothing after", end)
	}
}

// TestPreserveStopsAtAForeignWrite: a record another producer writes into a remote
// partition stops that partition with an error naming both offsets, and nothing more is
// written to it; the other partition keeps copying.
func TestPreserveStopsAtAForeignWrite(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "foreign")
	remote := "A." + topic
	a.CreateTopic(t, topic, 2, nil)
	produce(t, topic, 2, 1000, kgo.NoCompression(), false)
	d := runDaemon(t, "topics = "+topic+"\nA->B.strait.offsets.preserve = true\n")
	waitAligned(t, a, b, topic, remote)

	foreign := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := foreign.ProduceSync(t.Context(), &kgo.Record{Topic: remote, Partition: 0, Value: []byte("foreign")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	produce(t, topic, 2, 1000, kgo.NoCompression(), false)
	var stopped string
	kafkatest.Eventually(t, time.Minute, func() error {
		for _, f := range d.Status().Flows {
			for _, p := range f.Mirror.Partitions {
				if p.Topic == topic && p.Partition == 0 && p.Error != "" {
					stopped = p.Error
					return nil
				}
			}
		}
		return fmt.Errorf("partition 0 still copies after a foreign write")
	})
	if !strings.Contains(stopped, "source offset 500 landed at offset 501") {
		t.Errorf("partition 0 stopped with %q; want the source offset 500 and the target offset 501 named", stopped)
	}
	// Partition 1 copies on, to the source's end; partition 0 holds nothing after its
	// first misplaced batch (at most the batches in flight with it).
	kafkatest.Eventually(t, time.Minute, func() error {
		se, de := a.EndOffsets(t, topic, kgo.ReadUncommitted())[1], b.EndOffsets(t, remote, kgo.ReadUncommitted())[1]
		if se != de {
			return fmt.Errorf("partition 1 ends at %d on the source, %d on the target", se, de)
		}
		return nil
	})
	if end := b.EndOffsets(t, remote, kgo.ReadUncommitted())[0]; end > 1001+500 {
		t.Errorf("the remote partition 0 ends at %d after the foreign record at 500: Strait kept writing it", end)
	}
}

// TestPreserveFailoverMovesGroupsAsTheyAre: with strait.offsets.preserve, strait
// failover moves a consumer group to the target at the very offsets it committed on the
// source, also inside an aborted transaction's range, where the default mode's exact
// translation gives another number.
func TestPreserveFailoverMovesGroupsAsTheyAre(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "keepfo")
	group := topic + "-g"
	a.CreateTopic(t, topic, 1, nil)
	produce(t, topic, 1, 2000, kgo.NoCompression(), true) // transactions of 500; the third aborted
	const at = 1200                                       // inside the aborted transaction
	committed := kadm.Offsets{}
	committed.Add(kadm.Offset{Topic: topic, Partition: 0, At: at, LeaderEpoch: -1})
	if _, err := a.Admin(t).CommitOffsets(t.Context(), group, committed); err != nil {
		t.Fatal(err)
	}
	props := env.MM2Properties(fmt.Sprintf("emit.heartbeats.enabled = false\ntopics = %s\ngroups = %s\nrefresh.groups.interval.seconds = 1\nemit.checkpoints.interval.seconds = 1\nA->B.strait.offsets.preserve = true", topic, group))
	cfg, err := config.Parse("keepfo.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := daemon.New(cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), ShutdownTimeout: 10 * time.Second})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	}()
	waitAligned(t, a, b, topic, "A."+topic)

	plan, err := kafkaclient.NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := flowconn.Open(t.Context(), cfg, plan.Flow("A", "B"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer clearFailoverState(t, b)
	var out bytes.Buffer
	err = switchover.Failover(t.Context(), conn, switchover.Options{
		Groups: regexp.MustCompile("^" + regexp.QuoteMeta(group) + "$"), Execute: true, Report: t.TempDir() + "/failover.json",
		GateTimeout: time.Minute, StopTimeout: time.Minute, SourceTimeout: 10 * time.Second, Out: &out, Log: &out,
	})
	if err != nil {
		t.Fatalf("failover: %v\n%s", err, out.String())
	}
	got, err := b.Admin(t).FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.Lookup("A."+topic, 0); !ok || o.At != at {
		t.Errorf("the group on B is at %d (present %v), want %d as on A\n%s", o.At, ok, at, out.String())
	}
}

// clearFailoverState clears flow A->B's failover state on b, for the tests after.
func clearFailoverState(t *testing.T, b *kafkatest.Cluster) {
	t.Helper()
	cl := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := dr.Clear(context.WithoutCancel(t.Context()), cl, "A->B"); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Error(err)
	}
}
