package daemon

// Exactly-once mode's edges on kfake: the shutdown deadline, where
// auto.offset.reset=latest resumes after an abort, and index records beyond
// the index topic's batch limit. Each failed before its fix.

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/mirror"
)

// TestShutdownDeadlineBoundsAnExactlyOnceStop: the shutdown deadline
// (Options.ShutdownTimeout, 1 s here) bounds the stop also when a batch the
// target does not acknowledge keeps the last transaction from committing.
// Before the fix the forwarder resent it with the cancelled produce context
// until half the transaction timeout had passed: 20 s here.
func TestShutdownDeadlineBoundsAnExactlyOnceStop(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	var failing atomic.Bool
	var injected atomic.Int64
	b.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		if !failing.Load() || len(pr.Topics) != 1 || pr.Topics[0].Topic != "A.orders" {
			return nil, nil, false
		}
		injected.Add(1)
		return produceFailure(pr, kerr.NotLeaderForPartition.Code), nil, true
	})
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cfg := fakeConfig(t, a, b, "strait.exactly.once = true\nB.offset.flush.interval.ms = 100\nB.producer.transaction.timeout.ms = 40000")
	d, stop := runDaemonWith(t, cfg, Options{ShutdownTimeout: time.Second})
	produce(t, src, "orders", 1, 0, 100)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if flowStatus(d).Transactions == 0 {
			return fmt.Errorf("no transaction committed yet")
		}
		return nil
	})
	failing.Store(true)
	produce(t, src, "orders", 1, 100, 100)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if injected.Load() == 0 {
			return fmt.Errorf("no produce failed yet")
		}
		return nil
	})
	start := time.Now()
	_ = stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("stop took %v with a 1 s shutdown deadline", took.Round(100*time.Millisecond))
	}
}

// TestLatestResumesWhereItBeganAfterAnAbort: with auto.offset.reset =
// latest, records produced after the flow began are copied even when its
// first transactions abort (here every EndTxn commit fails for a while):
// each new attempt starts where the first resolved "latest", not at the
// source's end as it is then (which lost the 20 records before the fix).
func TestLatestResumesWhereItBeganAfterAnAbort(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	var injecting atomic.Bool
	injecting.Store(true)
	failed := failEndTxnCommits(b, injecting.Load)
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, src, "orders", 1, 0, 10) // before the flow: skipped by latest
	cfg := fakeConfig(t, a, b, "strait.exactly.once = true\nB.offset.flush.interval.ms = 100\nA->B.consumer.auto.offset.reset = latest")
	d, stop := runDaemon(t, cfg)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if failed.Load() == 0 {
			return fmt.Errorf("the flow has not tried to commit yet")
		}
		return nil
	})
	produce(t, src, "orders", 1, 10, 20) // after the flow began: to be copied
	before := failed.Load()
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if failed.Load() < before+2 {
			return fmt.Errorf("waiting for an attempt that started after the records")
		}
		return nil
	})
	injecting.Store(false)
	waitProgressAtEnd(t, a, b, d, "orders", 30*time.Second) // 30: the 10 before the flow and the 20 after
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	dst := kafkatest.ReadAll(t, b.ListenAddrs(), "A.orders", kgo.ReadCommitted())
	if n := len(dst[0]); n != 20 {
		t.Fatalf("the target holds %d of the 20 records produced after the flow began", n)
	}
}

// TestIndexRecordsSplitBelowTheTopicLimit: a transaction whose offset index
// changes exceed the index topic's max.message.bytes (here 20 000 bytes;
// Kafka's default is 1 MiB, about 12 000 segment changes of 88 bytes, which
// a transactional or compacted source reaches at one new segment per source
// transaction or hole) writes them in several batches. When they went as
// one batch, it was refused as too large, the attempt aborted, the next
// copied the same records and made the same changes: the flow never
// committed (0 commits and 5 aborts in 30 s).
func TestIndexRecordsSplitBelowTheTopicLimit(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	badm := kadm.NewClient(client(t, b))
	if _, err := badm.CreateTopic(t.Context(), 1, 1, map[string]*string{
		"cleanup.policy": kmsg.StringPtr("compact"), "max.message.bytes": kmsg.StringPtr("20000"),
	}, "strait-index.A.internal"); err != nil {
		t.Fatal(err)
	}
	// 300 source transactions of one record: each commit marker takes a
	// source offset, so each transaction is a segment of its own.
	txn := client(t, a, kgo.TransactionalID("src"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 300 {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(t.Context(), &kgo.Record{Topic: "orders", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(t.Context(), kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeConfig(t, a, b, "strait.exactly.once = true\nB.offset.flush.interval.ms = 2000")
	d, _ := runDaemon(t, cfg)
	waitProgressAtEnd(t, a, b, d, "orders", 30*time.Second)
}

// TestRejectedBatchStopsOnlyItsPartition: in exactly-once mode a batch the
// target refuses (here larger than the remote topic's max.message.bytes)
// stops its partition, with its error, while the others go on committing.
// The refusal aborted the attempt, the next attempt started the partition
// again and was refused again, so no transaction of the flow ever
// committed (the path 4).
func TestRejectedBatchStopsOnlyItsPartition(t *testing.T) {
	a := kafkatest.NewFake(t, kfake.SeedTopics(2, "orders"))
	b := kafkatest.NewFake(t)
	if _, err := kadm.NewClient(client(t, b)).CreateTopic(t.Context(), 2, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("3000")}, "A.orders"); err != nil {
		t.Fatal(err)
	}
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var recs []*kgo.Record
	for i := range 50 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(fmt.Sprint("small-", i))})
	}
	recs = append(recs, &kgo.Record{Topic: "orders", Partition: 1, Value: make([]byte, 5000)})
	if err := src.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cfg := fakeConfig(t, a, b, "strait.exactly.once = true\nB.offset.flush.interval.ms = 100\ntopics = orders\nsync.topic.configs.enabled = false")
	logs := &kafkatest.SyncBuffer{}
	d, _ := runDaemonWith(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs)
		}
	})
	adm := kadm.NewClient(client(t, b))
	kafkatest.Eventually(t, 30*time.Second, func() error {
		st := flowStatus(d)
		stored, err := adm.FetchOffsets(t.Context(), ProgressGroup("A"))
		if err != nil {
			return err
		}
		if o, ok := stored.Lookup("A.orders", 0); !ok || o.At != 50 {
			return fmt.Errorf("orders[0] progress %d, want 50 (%d transactions committed, %d aborted)", o.At, st.Transactions, st.AbortedTransactions)
		}
		for _, p := range st.Partitions {
			if p.Partition == 1 && p.State == mirror.StateStopped && strings.Contains(p.Error, "MESSAGE_TOO_LARGE") {
				return nil
			}
		}
		return fmt.Errorf("orders[1] has not stopped with the target's refusal: %+v", st.Partitions)
	})

	// An abort for another reason: the next attempt starts orders[1]
	// stopped, with its error, and orders[0] goes on.
	var injecting atomic.Bool
	injecting.Store(true)
	failed := failEndTxnCommits(b, injecting.Load)
	var more []*kgo.Record
	for i := range 50 {
		more = append(more, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(fmt.Sprint("more-", i))})
	}
	if err := src.ProduceSync(t.Context(), more...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if failed.Load() == 0 {
			return fmt.Errorf("no commit failed yet")
		}
		return nil
	})
	injecting.Store(false)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		st := flowStatus(d)
		stored, err := adm.FetchOffsets(t.Context(), ProgressGroup("A"))
		if err != nil {
			return err
		}
		if o, _ := stored.Lookup("A.orders", 0); o.At != 100 || st.AbortedTransactions == 0 {
			return fmt.Errorf("orders[0] progress %d, want 100 after an abort (%d aborted)", o.At, st.AbortedTransactions)
		}
		for _, p := range st.Partitions {
			if p.Partition == 1 && p.State == mirror.StateStopped && strings.Contains(p.Error, "MESSAGE_TOO_LARGE") {
				return nil
			}
		}
		return fmt.Errorf("after the abort orders[1] is not stopped with its error: %+v", st.Partitions)
	})
}
