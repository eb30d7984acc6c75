package mirror

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/offsets"
)

// recordPathFixture runs the record path's poll loop between two kfake
// clusters: source topic t and remote topic A.t, two partitions each. The
// target holds every produce request until release is called, so nothing
// handed to the producer is acknowledged before then.
type recordPathFixture struct {
	m        *Mirror
	consumer *kgo.Client
	src      *kgo.Client // source producer, to write the backlog
	dst      *kgo.Client
	parts    []*partition
	release  func()
}

func newRecordPathFixture(t *testing.T, bufferMemory int64, dstOpts ...kgo.Opt) *recordPathFixture {
	t.Helper()
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(2, "t", "A.t"))
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release) // before the clusters close: no sleeping control is left behind
	b.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		b.SleepControl(func() { <-hold })
		return nil, nil, false
	})

	consumer := newClient(t, a, SourceOpts(false, 0)...)
	dst := newClient(t, b, append(TargetOpts(bufferMemory), dstOpts...)...)
	m := newTestMirror(t, Config{Flow: "A->B", MaxBuffered: bufferMemory}, Deps{Clients: Clients{Source: consumer, Target: dst}})

	produceCtx, cancelProduce := context.WithCancel(context.Background())
	t.Cleanup(cancelProduce)
	ts := &topicState{Topic: Topic{Source: "t", Remote: "A.t", Partitions: 2}}
	for n := range int32(2) {
		p := newPartition(ts, n, true, offsets.NewPartition(), 100, produceCtx)
		p.startAt(0, false)
		ts.parts = append(ts.parts, p)
	}
	m.topics["t"] = ts

	src := newClient(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	return &recordPathFixture{m: m, consumer: consumer, src: src, dst: dst, parts: ts.parts, release: release}
}

// start consumes both partitions from offset 0 and runs the poll loop
// until the test ends. A backlog written before is whole in the first
// fetch; one written after may come in several, as the producer's batches
// land.
func (x *recordPathFixture) start(t *testing.T) {
	x.consumer.AddConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().At(0), 1: kgo.NewOffset().At(0)}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		x.m.poll(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		x.release()
		x.dst.Close() // unblocks a Produce blocked on franz-go's buffer
		<-done
	})
}

// write appends n records of size bytes to source partition num.
func (x *recordPathFixture) write(t *testing.T, num int32, n, size int) {
	t.Helper()
	value := make([]byte, size)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "t", Partition: num, Value: value}
	}
	if err := x.src.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// fetched waits until the poll loop has received source partition num up
// to end, failing at once when the poll loop is blocked inside Produce
// (franz-go counts the bytes of a blocked Produce in BufferedProduceBytes,
// above its MaxBufferedBytes).
func (x *recordPathFixture) fetched(t *testing.T, num int32, end int64) {
	t.Helper()
	bufCap := x.dst.OptValue(kgo.MaxBufferedBytes).(int64)
	kafkatest.Eventually(t, 10*time.Second, func() error {
		if buffered := x.dst.BufferedProduceBytes(); buffered > bufCap {
			t.Fatalf("the poll loop is blocked in Produce: %d bytes handed to franz-go, whose buffer holds %d (MaxBufferedBytes)", buffered, bufCap)
		}
		if got := x.parts[num].end.Load(); got != end {
			return fmt.Errorf("the poll loop has seen t[%d] up to %d, want %d", num, got, end)
		}
		return nil
	})
}

// The record path's poll loop never blocks in Produce and never hands the
// producer more than a target broker's share of buffer.memory: a fetch of
// many small records goes to the producer only as far as the share and
// franz-go's buffer have room, the rest waits with its partition paused,
// and another partition's fetch is still handled meanwhile. Once the
// target answers, everything is copied, in order, without a poll timeout.
func TestRecordPathPollLoopNeverBlocksNorOvershoots(t *testing.T) {
	const records, size = 2000, 100
	for _, tc := range []struct {
		name         string
		bufferMemory int64
		dstOpts      []kgo.Opt
	}{
		// 32 KiB share for the one target broker; one fetch of 2,000
		// records costs 2,000 x (100 + recordOverhead) bytes.
		{name: "broker share", bufferMemory: 64 << 10},
		// franz-go's own buffer is the smaller limit: 80 records.
		{name: "producer buffer", bufferMemory: 1 << 20, dstOpts: []kgo.Opt{kgo.MaxBufferedBytes(8000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newRecordPathFixture(t, tc.bufferMemory, tc.dstOpts...)
			// Written before the poll loop starts, so that its first fetch
			// holds all of it, far more than the share. (Written after, the
			// first fetch could hold only the producer's first batch, and
			// the partition, paused after it, would see no more.)
			x.write(t, 0, records, size)
			x.start(t)
			x.fetched(t, 0, records)
			// A fetch of the other partition is handled while the first
			// waits for room: the poll loop is not stuck in Produce.
			x.write(t, 1, 1, size)
			x.fetched(t, 1, 1)

			// Every broker, and the partitions without a known leader
			// (-1, before the producer has the remote topic's metadata),
			// hold at most their share and one record.
			share := x.m.shares.share(x.dst)
			for _, leader := range []int32{-1, 0} {
				if used := x.m.shares.usedBy(leader); used > share+size+recordOverhead {
					t.Errorf("the poll loop handed %d bytes to the producer for target broker %d, whose share is %d (%.1fx)", used, leader, share, float64(used)/float64(share))
				}
			}
			bufCap := x.dst.OptValue(kgo.MaxBufferedBytes).(int64)
			if buffered := x.dst.BufferedProduceBytes(); buffered > bufCap {
				t.Errorf("franz-go holds %d bytes, above its MaxBufferedBytes %d", buffered, bufCap)
			}

			x.release()
			kafkatest.Eventually(t, 30*time.Second, func() error {
				if got := x.parts[0].Position(); got != records {
					return fmt.Errorf("t[0] progress %d, want %d", got, records)
				}
				if got := x.parts[1].Position(); got != 1 {
					return fmt.Errorf("t[1] progress %d, want 1", got)
				}
				return nil
			})
			for _, p := range x.parts {
				if err := p.Failed(); err != nil {
					t.Fatalf("t[%d] stopped: %v", p.num, err)
				}
			}
			// Order per partition: source offset i is at target offset i.
			for _, src := range []int64{0, 1, records / 2, records - 1} {
				if tgt, res := x.parts[0].idx.Translate(src); res != offsets.Exact || tgt != src {
					t.Errorf("source t[0] offset %d translates to %d (%v), want %d", src, tgt, res, src)
				}
			}
		})
	}
}
