package mirror

import (
	"context"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/offsets"
)

// newClient is kafkatest.FakeClient.
func newClient(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	return kafkatest.FakeClient(t, c, opts...)
}

// produceN is kafkatest.ProduceN.
func produceN(t *testing.T, cl *kgo.Client, topic string, n int) { kafkatest.ProduceN(t, cl, topic, n) }

func testPartition() *partition {
	ts := &topicState{Topic: Topic{Source: "t", Remote: "A.t", Partitions: 1}}
	p := newPartition(ts, 0, true, offsets.NewPartition(), 100, context.Background())
	ts.parts = []*partition{p}
	return p
}

func testMirror() *Mirror {
	return &Mirror{log: slog.New(slog.DiscardHandler), failed: make(chan *partition, 64), topics: map[string]*topicState{}, shares: newRecordShares(32 << 20), renewWake: make(chan struct{}, 1), begin: &Beginning{}, Counters: &Counters{}}
}

// send hands records at the given source offsets to the (simulated) producer.
func send(p *partition, offs ...int64) []*kgo.Record {
	var recs []*kgo.Record
	for _, o := range offs {
		recs = append(recs, &kgo.Record{Offset: o})
	}
	send, _ := p.sendRecords(recs, 1, 0, func(r *kgo.Record) bool { return r.Attrs.IsControl() })
	return send
}

func acked(p *partition) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

// Path 2: records whose Produce failed at the shutdown deadline get their
// callbacks ahead of in-flight records; progress must never pass a record
// that was not written.
func TestRecordPathDeadlineKeepsProgressExact(t *testing.T) {
	m := testMirror()
	p := testPartition()
	recs := send(p, 10, 11, 12, 13)
	m.promise(recs[2], context.Canceled) // not sent: failed at the deadline
	m.promise(recs[3], context.Canceled)
	recs[0].Offset = 100 // in flight, acknowledged afterwards
	m.promise(recs[0], nil)
	recs[1].Offset = 101
	m.promise(recs[1], nil)
	if got := acked(p); got != 12 {
		t.Fatalf("progress %d after records 10 and 11 were written and 12, 13 failed; want 12", got)
	}
	if tgt, res := p.idx.Translate(11); res != offsets.Exact || tgt != 101 {
		t.Fatalf("source 11 translates to %d (%v), want 101", tgt, res)
	}
}

// Path 5: a marker seen after a record's callback failed must not move
// progress past that record.
func TestSkipPastOnStoppedPartition(t *testing.T) {
	m := testMirror()
	p := testPartition()
	recs := send(p, 10)
	m.promise(recs[0], kerr.MessageTooLarge)
	p.mu.Lock()
	p.markerAt(11) // a marker fetched while the record's callback failed
	p.mu.Unlock()
	if got := acked(p); got > 10 {
		t.Fatalf("progress %d passed record 10, which was never written", got)
	}
}

// batchSizeAlone matches the size of the batch a producer writes for one
// uncompressed record, which is what a broker checks max.message.bytes on.
func TestBatchSizeAlone(t *testing.T) {
	for _, r := range []*kgo.Record{
		{},
		{Key: []byte("k"), Value: make([]byte, 300)},
		{Value: make([]byte, 1_500_000), Headers: []kgo.RecordHeader{{Key: "a", Value: make([]byte, 200)}, {Key: "bb"}}},
	} {
		rec := kmsg.Record{Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		body := rec.AppendTo(nil)
		rec.Length = int32(len(body) - 1)
		b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: rec.AppendTo(nil)}
		if got, want := batchSizeAlone(r), int64(len(b.AppendTo(nil))); got != want {
			t.Errorf("record of %d+%d bytes and %d headers: batchSizeAlone %d, encoded batch %d", len(r.Key), len(r.Value), len(r.Headers), got, want)
		}
	}
}

// A record abandoned because the flow stops (deadline or closed client)
// halts progress at it but does not stop the partition with an error.
func TestShutdownFailuresDoNotStopThePartition(t *testing.T) {
	for _, err := range []error{context.Canceled, kgo.ErrClientClosed} {
		m := testMirror()
		p := testPartition()
		recs := send(p, 10, 11)
		m.promise(recs[1], err)
		recs[0].Offset = 100
		m.promise(recs[0], nil)
		if p.Failed() != nil || acked(p) != 11 {
			t.Errorf("%v: partition error %v, progress %d; want none and 11", err, p.Failed(), acked(p))
		}
	}
}
