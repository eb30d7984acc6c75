package fastpath

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/offsets"
)

const attrLogAppendTime = 0x08

// encodeSparse builds a v2 batch from base with a record at each offset
// delta of deltas (holes between them, as compaction leaves) and the
// given last offset delta, first timestamp 1000 and max timestamp 5000.
func encodeSparse(base int64, deltas []int32, last int32, attrs int16) []byte {
	var recs []byte
	for i, d := range deltas {
		r := kmsg.Record{OffsetDelta: d, TimestampDelta64: int64(i), Key: []byte(fmt.Sprint("k", d)), Value: []byte(fmt.Sprint("v", base+int64(d)))}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1)
		recs = append(recs, r.AppendTo(nil)...)
	}
	b := kmsg.RecordBatch{
		FirstOffset: base, PartitionLeaderEpoch: 1, Magic: 2, Attributes: attrs,
		LastOffsetDelta: last, FirstTimestamp: 1000, MaxTimestamp: 5000,
		ProducerID: 3, NumRecords: int32(len(deltas)), Records: recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// Batches a broker would not take as they are (compaction holes,
// LogAppendTime, the first one when the partition resumes in its middle)
// are queued rebuilt and the partition stays on the fast path; their
// acknowledgement maps each record's source offset to its target offset.
func TestRebuiltBatchesStayOnTheFastPath(t *testing.T) {
	type want struct{ src, tgt int64 }
	for _, c := range []struct {
		name    string
		next    int64
		batches []byte
		queued  []int32 // records per queued batch
		acked   int64
		offsets []want // after the batches are acknowledged at target 100, 100+n...
	}{
		{
			name:    "compaction holes",
			batches: encodeSparse(0, []int32{0, 2, 5}, 6, 0),
			queued:  []int32{3}, acked: 7,
			offsets: []want{{0, 100}, {1, 101}, {2, 101}, {3, 102}, {5, 102}, {6, 103}},
		},
		{
			name:    "log append time",
			batches: cat(encodeBatch(0, 4, attrLogAppendTime, 3, nil), encodeBatch(4, 2, 0, 3, nil)),
			queued:  []int32{4, 2}, acked: 6,
			offsets: []want{{0, 100}, {3, 103}, {4, 104}, {5, 105}},
		},
		{
			name: "resumed in the middle", next: 3,
			batches: encodeBatch(0, 6, 0, 3, nil),
			queued:  []int32{3}, acked: 6,
			offsets: []want{{3, 100}, {5, 102}},
		},
		{
			name: "nothing left after the start", next: 5,
			batches: cat(encodeSparse(0, []int32{0, 2}, 6, 0), encodeBatch(7, 1, 0, 3, nil)),
			queued:  []int32{1}, acked: 8,
			offsets: []want{{5, 100}, {7, 100}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := newFastFixture(c.next)
			left := ""
			x.f.deps.ToRecordPath = func(_ Ledger, _ int64, reason string) { left = reason }
			x.p.startAt(c.next, false)
			x.fetched(t.Context(), fetchResp("t", c.batches))
			x.f.finishLeaving()
			if left != "" || x.fp.state != flowing || x.p.Failed() != nil {
				t.Fatalf("left the fast path (%q, %s), error %v", left, x.fp.state, x.p.Failed())
			}
			var counts []int32
			for _, q := range x.fp.queue {
				if q.skip {
					continue
				}
				h, err := batch.Parse(q.data)
				if err != nil || h != q.h || !h.Contiguous() || h.LogAppendTime() || !batch.ValidCRC(q.data, h) {
					t.Fatalf("queued batch %+v (%v): want a contiguous CreateTime batch with a valid CRC", h, err)
				}
				counts = append(counts, h.NumRecords)
			}
			if fmt.Sprint(counts) != fmt.Sprint(c.queued) {
				t.Fatalf("queued batches of %v records, want %v", counts, c.queued)
			}
			tgt := int64(100)
			for len(x.fp.queue) > 0 {
				if x.fp.queue[0].skip {
					x.f.applySkips(x.fp)
					continue
				}
				q := x.fp.takeHead()
				x.f.ack(x.fp, q, tgt)
				tgt += int64(q.h.NumRecords)
			}
			if got := acked(x.p); got != c.acked {
				t.Fatalf("progress %d, want %d", got, c.acked)
			}
			for _, w := range c.offsets {
				if got, res := x.p.idx.Translate(w.src); got != w.tgt || res != offsets.Exact {
					t.Errorf("Translate(%d) = %d (%v), want %d exactly", w.src, got, res, w.tgt)
				}
			}
		})
	}
}
