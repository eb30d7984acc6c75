package daemon

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/coord"
	"strait/internal/kafkatest"
)

// TestReleaseCutOffFencesTheMirror: a node gives a partition up while its
// mirror cannot finish (the target holds its produce requests, and the
// record path's producer waits up to the shutdown timeout for them), so
// the member cuts the release off at the rebalance timeout and the next
// node takes the partition and copies on. The old mirror must then write and
// commit nothing: before the fix its grant was the member's live
// membership, so once the target answered, it committed its own, lower,
// progress over the new owner's (the paths 2 and 6: a release cut
// off at rebalance.timeout.ms let two nodes write one partition).
func TestReleaseCutOffFencesTheMirror(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(2, "orders"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, src, "orders", 2, 0, 200)
	cfg := fakeConfig(t, a, b, "emit.heartbeats.enabled = false\nstrait.fast.path = false\nB.session.timeout.ms = 1500\nB.heartbeat.interval.ms = 300\nB.rebalance.timeout.ms = 3000\n")
	logs := &kafkatest.SyncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("logs:\n%s", logs)
		}
	})
	d1, _ := runDaemonWith(t, cfg, Options{Logger: log.With("node", 1), ShutdownTimeout: time.Minute})
	adm := kadm.NewClient(client(t, b))
	committed := func(p int32) int64 {
		offs, err := adm.FetchOffsets(t.Context(), ProgressGroup("A"))
		if err != nil {
			return -1
		}
		o, ok := offs.Lookup("A.orders", p)
		if !ok {
			return -1
		}
		return o.At
	}
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if c0, c1 := committed(0), committed(1); c0 != 100 || c1 != 100 {
			return fmt.Errorf("progress %d, %d; want 100 each", c0, c1)
		}
		return nil
	})
	md, err := adm.Metadata(t.Context(), "A.orders")
	if err != nil {
		t.Fatal(err)
	}
	ordersID := md.Topics["A.orders"].ID

	// Hold every produce request of node 1's data producer until released.
	hold := make(chan struct{})
	var held, heldPID atomic.Int64
	heldPID.Store(-1)
	b.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		pid := dataProducer(req.(*kmsg.ProduceRequest), ordersID)
		if pid >= 0 && (heldPID.CompareAndSwap(-1, pid) || heldPID.Load() == pid) {
			held.Add(1)
			b.SleepControl(func() { <-hold })
		}
		return nil, nil, false
	})
	produce(t, src, "orders", 2, 200, 200)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if held.Load() == 0 {
			return fmt.Errorf("node 1 sent nothing yet")
		}
		return nil
	})

	d2, _ := runDaemonWith(t, cfg, Options{Logger: log.With("node", 2), ShutdownTimeout: time.Minute})
	var moved int32 = -1
	kafkatest.Eventually(t, 60*time.Second, func() error {
		units, _ := sharesOf(d1, d2)
		if units[0] != 1 || units[1] != 1 {
			return fmt.Errorf("partitions %v, want one each", units)
		}
		for _, f := range d2.Status().Flows {
			if f.Share != nil && len(f.Share.Units) == 1 {
				moved = f.Share.Units[0].Partition
			}
		}
		return nil
	})
	// The new owner copies what node 1 could not, and more.
	var more []*kgo.Record
	for i := range 100 {
		more = append(more, &kgo.Record{Topic: "orders", Partition: moved, Value: []byte(fmt.Sprint("more-", i))})
	}
	if err := src.ProduceSync(t.Context(), more...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() error {
		if c := committed(moved); c != 300 {
			return fmt.Errorf("progress of %d is %d, want 300 from its new owner", moved, c)
		}
		return nil
	})

	// The target answers node 1 at last; its old mirror ends.
	close(hold)
	kafkatest.Eventually(t, 90*time.Second, func() error {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"node":1`) && strings.Contains(l, `"msg":"released partitions"`) && strings.Contains(l, coord.Unit{Topic: "orders", Partition: moved}.String()) {
				return nil
			}
		}
		return fmt.Errorf("node 1 has not released %d", moved)
	})
	if c := committed(moved); c != 300 {
		t.Fatalf("progress of partition %d is %d after node 1's old mirror ended, want its new owner's 300: the fenced mirror committed", moved, c)
	}
}

// dataProducer returns the producer id of a produce request's batch for the
// topic with id, -1 when it holds none.
func dataProducer(req *kmsg.ProduceRequest, id [16]byte) int64 {
	for _, rt := range req.Topics {
		if rt.TopicID != id && rt.Topic != "A.orders" {
			continue
		}
		for _, rp := range rt.Partitions {
			if h, err := batch.Parse(rp.Records); err == nil {
				return h.ProducerID
			}
		}
	}
	return -1
}
