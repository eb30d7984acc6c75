package fastpath

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// newClient is kafkatest.FakeClient.
func newClient(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	return kafkatest.FakeClient(t, c, opts...)
}

// produceN is kafkatest.ProduceN.
func produceN(t *testing.T, cl *kgo.Client, topic string, n int) { kafkatest.ProduceN(t, cl, topic, n) }

// encodeBatch builds a v2 batch with n records from base.
func encodeBatch(base int64, n int, attrs int16, pid int64, key []byte) []byte {
	var recs []byte
	for d := 0; d < n; d++ {
		r := kmsg.Record{OffsetDelta: int32(d), Key: key, Value: []byte(fmt.Sprint("v", base+int64(d)))}
		if key == nil {
			r.Key = []byte(fmt.Sprint("k", d))
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1)
		recs = append(recs, r.AppendTo(nil)...)
	}
	b := kmsg.RecordBatch{
		FirstOffset: base, PartitionLeaderEpoch: 1, Magic: 2, Attributes: attrs,
		LastOffsetDelta: int32(n - 1), FirstTimestamp: 1000, MaxTimestamp: 1000,
		ProducerID: pid, ProducerEpoch: 0, FirstSequence: 0, NumRecords: int32(n), Records: recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

const (
	attrTxn     = 0x10
	attrControl = 0x20
)

func abortMarker(offset, pid int64) []byte {
	return encodeBatch(offset, 1, attrTxn|attrControl, pid, []byte{0, 0, 0, 0})
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// fastPartitions adds partitions t[0..n) to f's fast path, every one led by
// broker 1 on both sides, loads the shares, and returns their keys.
func fastPartitions(f *Forwarder, n int32) []tp {
	leaders := make([]int32, n)
	for i := range leaders {
		leaders[i] = 1
	}
	f.srcMeta["t"] = topicMeta{leaders: leaders}
	f.dstMeta["A.t"] = topicMeta{leaders: slices.Clone(leaders)}
	var keys []tp
	for i := range n {
		p := testPartition()
		p.num = i
		f.parts[tp{"t", i}] = NewPart(p, 0)
		keys = append(keys, tp{"t", i})
	}
	f.share, f.used = f.shares()
	return keys
}

func testForwarder(m *flowFixture) *Forwarder {
	return New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1, ReadCommitted: true, Idempotent: true, Acks: -1}, Deps{
		Totals: &m.totals, ToRecordPath: func(Ledger, int64, string) {}, Log: m.log,
	})
}

// fastFixture is a forwarder with one fast-path partition t[0] at next.
type fastFixture struct {
	f  *Forwarder
	p  *testLedger
	fp *Part
}

func newFastFixture(next int64) fastFixture {
	f := testForwarder(testFlow())
	p := testPartition()
	fp := NewPart(p, next)
	f.parts[tp{"t", 0}] = fp
	return fastFixture{f, p, fp}
}

// fetched hands the forwarder a response to a fetch of t[0] at the
// partition's current offset, or at the given one.
func (x fastFixture) fetched(ctx context.Context, resp *kmsg.FetchResponse, at ...int64) {
	off := x.fp.next
	if len(at) > 0 {
		off = at[0]
	}
	key := tp{"t", 0}
	offs := map[tp]int64{key: off}
	var split map[tp]bool
	if x.fp.keep {
		split = map[tp]bool{key: true}
	}
	rebuilt := prepareResponse(resp, nil, offs, split, x.f.cfg.compression()) // as the fetch goroutine does
	x.f.handleFetch(ctx, fetchDone{broker: 1, parts: map[tp]*Part{key: x.fp}, at: offs, resp: resp, rebuilt: rebuilt})
}

func fetchResp(topic string, offsetBatches []byte, aborted ...kmsg.FetchResponseTopicPartitionAbortedTransaction) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.HighWatermark, rp.LastStableOffset = 100, 100
	rp.RecordBatches = offsetBatches
	rp.AbortedTransactions = aborted
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

func abortedTxn(pid, first int64) kmsg.FetchResponseTopicPartitionAbortedTransaction {
	a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
	a.ProducerID, a.FirstOffset = pid, first
	return a
}

// Path 3: two fetches of one partition overlap (a leader change); the
// later response repeats batches already handled and must be discarded,
// or the transaction filter misses the abort marker and drops a committed
// batch of the same producer.
func TestOverlappingFetchesKeepCommittedBatches(t *testing.T) {
	x := newFastFixture(0)
	fp := x.fp
	aborted := abortedTxn(7, 0)
	first := fetchResp("t", cat(encodeBatch(0, 2, attrTxn, 7, nil), abortMarker(2, 7)), aborted)
	second := fetchResp("t", cat(encodeBatch(0, 2, attrTxn, 7, nil), abortMarker(2, 7), encodeBatch(3, 2, attrTxn, 7, nil)), aborted)
	ctx := context.Background()
	x.fetched(ctx, first, 0)
	x.fetched(ctx, second, 0)
	for _, q := range fp.queue {
		if q.skip && q.h.LastOffset() >= 3 {
			t.Fatalf("committed batch %d..%d of producer 7 was dropped as aborted", q.h.BaseOffset, q.h.LastOffset())
		}
	}
}

// Path 4: OFFSET_OUT_OF_RANGE before the first acknowledgement is a
// truncation like any other: the partition stops, with the lost range.
func TestOutOfRangeBeforeFirstAckStops(t *testing.T) {
	src, _ := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "t"))
	cl := newClient(t, src)
	produceN(t, cl, "t", 10)
	if _, err := kadm.NewClient(cl).DeleteRecords(t.Context(), kadm.Offsets{"t": {0: {Topic: "t", Partition: 0, At: 8}}}); err != nil {
		t.Fatal(err)
	}
	x := newFastFixture(5)
	f, p := x.f, x.p
	f.src = cl
	resp := fetchResp("t", nil)
	resp.Topics[0].Partitions[0].ErrorCode = kerr.OffsetOutOfRange.Code
	x.fetched(t.Context(), resp, 5)
	for f.running > 0 { // the log start is listed off the loop
		ev := <-f.events
		f.running--
		f.handle(t.Context(), ev)
	}
	err := p.Failed()
	if err == nil {
		t.Fatal("the partition keeps going after records from offset 5 were deleted before they were copied")
	}
	if want := "records 5..7 were deleted before they were replicated"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// Path 6: a corrupt source batch is never forwarded: refetched once, then
// the partition stops.
func TestCorruptBatchIsNotForwarded(t *testing.T) {
	x := newFastFixture(0)
	fp := x.fp
	b := encodeBatch(0, 3, 0, -1, nil)
	b[len(b)-2] ^= 0xff // a flipped byte in a record value
	x.fetched(context.Background(), fetchResp("t", b), 0)
	for _, q := range fp.queue {
		if !q.skip {
			t.Fatalf("a batch with a bad CRC was queued for the target: %+v", q.h)
		}
	}
}

// A corrupt batch is fetched once more; a second bad CRC at the same
// offset stops the partition, and a good copy the second time goes on.
func TestCorruptBatchRefetchedOnceThenStops(t *testing.T) {
	for _, secondGood := range []bool{false, true} {
		t.Run(fmt.Sprint("second good ", secondGood), func(t *testing.T) {
			x := newFastFixture(0)
			p, fp := x.p, x.fp
			good := encodeBatch(0, 3, 0, -1, nil)
			bad := append([]byte(nil), good...)
			bad[len(bad)-2] ^= 0xff
			fetch := func(b []byte) {
				x.fetched(t.Context(), fetchResp("t", b))
			}
			fetch(bad)
			if p.Failed() != nil || len(fp.queue) != 0 || fp.next != 0 {
				t.Fatalf("after one bad CRC: err %v, %d queued, next %d; want a refetch at 0", p.Failed(), len(fp.queue), fp.next)
			}
			if secondGood {
				fetch(good)
				if p.Failed() != nil || len(fp.queue) != 1 || fp.next != 3 {
					t.Fatalf("a good copy after a bad one: err %v, %d queued, next %d", p.Failed(), len(fp.queue), fp.next)
				}
				return
			}
			fetch(bad)
			if err := p.Failed(); err == nil || !strings.Contains(err.Error(), "bad CRC") {
				t.Fatalf("two bad CRCs in a row: partition error %v", err)
			}
		})
	}
}

// After a discarded overlapping response, the next fetch at the
// partition's offset is used: the committed batch is forwarded.
func TestOverlappingFetchThenNextFetchForwards(t *testing.T) {
	x := newFastFixture(0)
	fp := x.fp
	aborted := abortedTxn(7, 0)
	ctx := t.Context()
	x.fetched(ctx, fetchResp("t", cat(encodeBatch(0, 2, attrTxn, 7, nil), abortMarker(2, 7)), aborted), 0)
	x.fetched(ctx, fetchResp("t", cat(encodeBatch(0, 2, attrTxn, 7, nil), abortMarker(2, 7), encodeBatch(3, 2, attrTxn, 7, nil)), aborted), 0)
	x.fetched(ctx, fetchResp("t", encodeBatch(3, 2, attrTxn, 7, nil)), 3)
	var data []int64
	for _, q := range fp.queue {
		if !q.skip {
			data = append(data, q.h.BaseOffset)
		}
	}
	if len(data) != 1 || data[0] != 3 || fp.next != 5 {
		t.Fatalf("queued data batches at %v, next %d; want the committed batch at 3 and next 5", data, fp.next)
	}
}

// Path 1 on the fast path: metadata with a new topic ID stops the topic's
// partitions instead of fetching the new incarnation at the old offsets.
func TestNewTopicIDInMetadataStops(t *testing.T) {
	m := testFlow()
	f := testForwarder(m)
	p := testPartition()
	p.topic.ID = [16]byte{1}
	fp := NewPart(p, 1000)
	f.parts[tp{"t", 0}] = fp
	f.metaInflight = 1
	f.handle(t.Context(), metaDone{source: true, meta: map[string]topicMeta{"t": {id: [16]byte{1}, leaders: []int32{1}}}})
	if p.Failed() != nil {
		t.Fatalf("same topic ID: %v", p.Failed())
	}
	f.metaInflight = 1
	f.handle(t.Context(), metaDone{source: true, meta: map[string]topicMeta{"t": {id: [16]byte{2}, leaders: []int32{1}}}})
	if err := p.Failed(); err == nil || !strings.Contains(err.Error(), "deleted and recreated") {
		t.Fatalf("new topic ID: partition error %v", err)
	}
}

// Path 9: partitions whose target broker is dead hold at most that
// broker's share of buffer.memory, so the others keep fetching.
func TestDeadTargetBrokerKeepsItsShare(t *testing.T) {
	m := testFlow()
	f := New(Config{FetchMaxBytes: 50 << 20, Codec: -1, MaxBuffered: 1000, PartitionFetchSize: 1000}, Deps{Totals: &m.totals, Log: m.log})
	f.dstMeta["A.t"] = topicMeta{leaders: []int32{1, 2}}
	stuck, healthy := testPartition(), testPartition()
	healthy.num = 1
	fs, fh := NewPart(stuck, 0), NewPart(healthy, 0)
	f.parts[tp{"t", 0}], f.parts[tp{"t", 1}] = fs, fh
	// The stuck partition (leader 1) fills its queue fetch after fetch.
	for range 10 {
		if !wantsFetch(f, fs) {
			break
		}
		fs.queue = append(fs.queue, &qbatch{data: make([]byte, 100)})
		fs.queueBytes += 100
		f.buffered += 100
	}
	if fs.queueBytes > 500 {
		t.Fatalf("the partitions of a dead broker hold %d of 1000 buffered bytes, more than their broker's share", fs.queueBytes)
	}
	if !wantsFetch(f, fh) {
		t.Fatal("a healthy broker's partition stopped fetching while another broker is dead")
	}
}

// Path 11: InitProducerID failures back off exponentially, with a cap.
func TestInitProducerIDBacksOff(t *testing.T) {
	m := testFlow()
	f := testForwarder(m)
	var waits []time.Duration
	for range 12 {
		f.pidInflight = true
		before := time.Now()
		f.handle(t.Context(), pidDone{err: kerr.CoordinatorNotAvailable})
		waits = append(waits, f.pidNotBefore.Sub(before))
	}
	if waits[0] > PIDBackoffMin+time.Millisecond || waits[5] < 1*time.Second || waits[11] > PIDBackoffMax+time.Millisecond {
		t.Fatalf("waits after repeated failures: %v", waits)
	}
	f.pidInflight = true
	f.handle(t.Context(), pidDone{pid: 5})
	if f.pidBackoff != 0 || f.pid != 5 {
		t.Fatalf("after a success: backoff %v, pid %d", f.pidBackoff, f.pid)
	}
}

func wantsFetch(f *Forwarder, fp *Part) bool {
	f.share, f.used = f.shares()
	_, _, ok := f.fetchable(fp, time.Now())
	return ok
}

// Path 10: a queued batch of a partition whose target does not answer
// holds a copy of its bytes, not the whole fetch response it came in (up to
// 16 MiB that buffer accounting does not see), for as long as the target is
// down.
func TestQueuedBatchDoesNotPinResponse(t *testing.T) {
	x := newFastFixture(0)
	fp := x.fp
	x.f.retry(fp, time.Now())                    // the target refused its last batch
	partial := encodeBatch(5, 20000, 0, -1, nil) // the response ends inside a large batch
	resp := fetchResp("t", cat(encodeBatch(0, 3, 0, -1, nil), encodeBatch(3, 2, 0, -1, nil), partial[:len(partial)/2]))
	raw := resp.Topics[0].Partitions[0].RecordBatches
	x.fetched(t.Context(), resp, 0)
	if len(fp.queue) != 2 {
		t.Fatalf("%d batches queued, want 2", len(fp.queue))
	}
	before := append([]byte(nil), fp.queue[0].data...)
	clear(raw)
	if string(before) != string(fp.queue[0].data) {
		t.Fatal("a queued batch changed with its fetch response: it pins the response")
	}
}

// An acknowledged batch frees its fetch response: the queue and the sent
// list must not keep it in the slots they popped (an idle partition fetches
// nothing new that would overwrite them, so the response stayed pinned: at
// 5,000 idle partitions, the whole backlog).
func TestAckedBatchFreesItsResponse(t *testing.T) {
	x := newFastFixture(0)
	first := fetchResp("t", cat(encodeBatch(0, 3, 0, -1, nil), encodeBatch(3, 2, 0, -1, nil)))
	freed := weak.Make(&first.Topics[0].Partitions[0].RecordBatches[0])
	x.fetched(t.Context(), first, 0)
	first = nil
	x.fetched(t.Context(), fetchResp("t", encodeBatch(5, 2, 0, -1, nil))) // still in flight below
	for id := range uint64(3) {
		q := x.fp.takeHead()
		q.sendID = id
		x.fp.sent = append(x.fp.sent, q)
	}
	for id := range uint64(2) {
		x.f.record(sentRef{x.fp, id}, sendResult{state: sendAcked, base: int64(id) * 3}, time.Now())
	}
	if len(x.fp.queue) != 0 || len(x.fp.sent) != 1 || acked(x.p) != 5 {
		t.Fatalf("queue %d, sent %d, progress %d; want 0, 1, 5", len(x.fp.queue), len(x.fp.sent), acked(x.p))
	}
	runtime.GC()
	if freed.Value() != nil {
		t.Fatal("the first fetch response is still reachable after both its batches were acknowledged")
	}
	runtime.KeepAlive(x.fp) // the partition lives on, as it does in the forwarder
}

// A partition whose fetch failed waits out its retry backoff and is then
// fetched again, with all its room (the fetch once asked about the room
// at the zero time, which is before any backoff's end: after one failed
// fetch a partition was never fetched again).
func TestFetchAfterRetryBackoff(t *testing.T) {
	x := newFastFixture(0)
	x.f.srcMeta["t"] = topicMeta{leaders: []int32{1}}
	x.f.dstMeta["A.t"] = topicMeta{leaders: []int32{1}}
	x.f.share, x.f.used = x.f.shares()
	x.fp.notBefore = time.Now().Add(-time.Second) // a backoff that has ended
	req, parts, _, rooms := x.f.fetchRequest([]tp{{"t", 0}}, time.Now(), fetchSlots{})
	room := 2 * x.f.cfg.PartitionFetchSize // two asks, nothing queued
	if len(parts) != 1 || len(req.Topics) != 1 || req.Topics[0].Partitions[0].PartitionMaxBytes != room || rooms[1] != int64(room) {
		t.Fatalf("after its backoff the partition is not fetched with all its room: %d partitions, rooms %v", len(parts), rooms)
	}
}

// Every partition that may fetch is listed with all its room, even when
// the rooms add up to more than its target broker's share has left: the
// response as a whole is capped instead. (A partition given less than a
// batch gets a cut-off one, and one left out waited for fetch rounds of
// long polls: at 512 partitions the last records took minutes.)
func TestFetchListsEveryPartitionWithItsRoom(t *testing.T) {
	m := testFlow()
	f := New(Config{FetchMaxBytes: 50 << 20, Codec: -1, MaxBuffered: 1000, PartitionFetchSize: 600}, Deps{Totals: &m.totals, Log: m.log})
	keys := fastPartitions(f, 3)
	req, parts, _, rooms := f.fetchRequest(keys, time.Now(), fetchSlots{})
	if len(parts) != 3 || len(req.Topics[0].Partitions) != 3 {
		t.Fatalf("%d of 3 partitions listed", len(parts))
	}
	for _, rp := range req.Topics[0].Partitions {
		if rp.PartitionMaxBytes != 600 {
			t.Errorf("partition %d asks for %d bytes, want all its room, 600 (max.partition.fetch.bytes)", rp.Partition, rp.PartitionMaxBytes)
		}
	}
	if req.MaxBytes != 1000 || rooms[1] != 1000 {
		t.Errorf("the fetch asks for %d bytes and reserves %d, want the share, 1000", req.MaxBytes, rooms[1])
	}
}

// Path 9, before the target's metadata is known: a partition without a
// known target leader has nowhere to write, so it fetches nothing. (It
// used to fetch against a share of the whole buffer.memory, and when its
// leader turned out to be a dead broker that broker's partitions held the
// whole buffer and the healthy broker's partitions never fetched.)
func TestFetchWaitsForTargetLeader(t *testing.T) {
	m := testFlow()
	f := New(Config{FetchMaxBytes: 50 << 20, Codec: -1, MaxBuffered: 1000, PartitionFetchSize: 600}, Deps{Totals: &m.totals, Log: m.log})
	f.srcMeta["t"] = topicMeta{leaders: []int32{1, 1}}
	keys := []tp{{"t", 0}, {"t", 1}}
	for _, key := range keys {
		p := testPartition()
		p.num = key.partition
		f.parts[key] = NewPart(p, 0)
	}
	for _, dst := range []map[string]topicMeta{
		{},                                  // not loaded yet
		{"A.t": {leaders: []int32{-1, -1}}}, // leaderless
	} {
		f.dstMeta = dst
		f.share, f.used = f.shares()
		if _, parts, _, _ := f.fetchRequest(keys, time.Now(), fetchSlots{}); len(parts) != 0 {
			t.Fatalf("target metadata %v: %d partitions fetch with no known target leader", dst, len(parts))
		}
		if !f.dstStale {
			t.Errorf("target metadata %v: no refresh asked for", dst)
		}
		f.dstStale = false
	}
	f.dstMeta = map[string]topicMeta{"A.t": {leaders: []int32{1, 2}}}
	f.share, f.used = f.shares()
	if _, parts, _, _ := f.fetchRequest(keys, time.Now(), fetchSlots{}); len(parts) != 2 {
		t.Fatalf("%d of 2 partitions fetch once their target leaders are known", len(parts))
	}
}

// A partition pipelines only once its leader acknowledged its latest
// answered batch under the current producer id (sendLimit): not at its
// start, not on a new leader or producer id, not after a failure until an
// acknowledgement again.
func TestPipelineOpensOnlyAfterAnAck(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.fetched(t.Context(), fetchResp("t", cat(encodeBatch(0, 3, 0, -1, nil), encodeBatch(3, 2, 0, -1, nil), encodeBatch(5, 2, 0, -1, nil))), 0)
	answer := func(res sendResult) {
		q := x.fp.takeHead()
		q.pid, x.fp.sentOn = x.f.pid, laneKey{broker: 1}
		x.fp.sendIDs++
		q.sendID = x.fp.sendIDs
		x.fp.sent = append(x.fp.sent, q)
		x.f.record(sentRef{x.fp, q.sendID}, res, time.Now())
	}
	limits := func() (l [3]int) {
		l[0], l[1] = x.f.sendLimit(x.fp, 1, time.Now()), x.f.sendLimit(x.fp, 2, time.Now())
		x.f.pid = 8
		l[2] = x.f.sendLimit(x.fp, 1, time.Now())
		x.f.pid = 7
		return l
	}
	if got := x.f.sendLimit(x.fp, 1, time.Now()); got != 1 {
		t.Fatalf("before any acknowledgement the limit is %d, want 1", got)
	}
	answer(sendResult{state: sendAcked, base: 0})
	if got := limits(); got != [3]int{5, 1, 1} {
		t.Fatalf("after an ack from broker 1, limits (broker 1, broker 2, new producer id) are %v, want [5 1 1]", got)
	}
	answer(sendResult{state: sendFailed, err: kerr.NotLeaderForPartition})
	if got := x.f.sendLimit(x.fp, 1, time.Now()); got != 1 {
		t.Fatalf("after a failure the limit is %d, want 1", got)
	}
}

// A batch acknowledged behind a head batch that the target did not write
// (NOT_LEADER) means the target holds it without the one before it: the
// partition stops and says from which target offset it is out of order.
// A head whose fate is open (a timeout) is sent again instead.
func TestBatchWrittenPastAFailedHeadStops(t *testing.T) {
	for _, tc := range []struct {
		headErr error
		stops   bool
	}{
		{kerr.NotLeaderForPartition, true},
		{kerr.RequestTimedOut, false},
	} {
		x := newFastFixture(0)
		x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
		x.fetched(t.Context(), fetchResp("t", cat(encodeBatch(0, 3, 0, -1, nil), encodeBatch(3, 2, 0, -1, nil))), 0)
		for range 2 {
			q := x.fp.takeHead()
			x.fp.sendIDs++
			q.sendID, q.pid = x.fp.sendIDs, 7
			x.fp.sent = append(x.fp.sent, q)
		}
		x.f.record(sentRef{x.fp, 1}, sendResult{state: sendFailed, err: tc.headErr}, time.Now())
		x.f.record(sentRef{x.fp, 2}, sendResult{state: sendAcked, base: 0}, time.Now())
		err := x.p.Failed()
		if stopped := err != nil; stopped != tc.stops {
			t.Fatalf("head failed with %v: partition stopped %v (%v), want %v", tc.headErr, stopped, err, tc.stops)
		}
		if tc.stops && !strings.Contains(err.Error(), "out of source order from target offset 0") {
			t.Errorf("the error does not say where the target is out of order: %v", err)
		}
		if !tc.stops && (len(x.fp.queue) != 2 || x.fp.queue[0].h.BaseOffset != 0) {
			t.Errorf("after a timed-out head, the queue holds %d batches, want both again from offset 0", len(x.fp.queue))
		}
		if x.f.buffered != int64(x.fp.queueBytes) {
			t.Errorf("buffered %d, queued bytes %d", x.f.buffered, x.fp.queueBytes)
		}
	}
}
