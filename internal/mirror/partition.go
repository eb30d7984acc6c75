package mirror

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/mirror/flow"
	"strait/internal/offsets"
)

// partition is the replication state of one source partition, shared by the
// path that copies it (record path or fast path), the committer and the
// status. Its fields change together under mu, and only through the methods
// in this file, which keep these invariants:
//
//   - acked, the next source offset after everything the target
//     acknowledged, only grows, and never passes a record that failed: once
//     the record at source offset h failed, acked stays at most h (halt);
//   - the offset map and the MM2 sync state learn only acknowledged
//     records, in source order;
//   - a stopped partition (err set) sends nothing more and is not resumed
//     in this run; records it sent before still count when the target
//     acknowledges them, up to halt.
//
// The record path attaches a recordCtx to every record it hands to the
// producer, so each acknowledgement carries its own source offset: nothing
// pairs callbacks with offsets by their order.
type partition struct {
	topic   *topicState
	num     int32
	initial bool // present when the flow started: auto.offset.reset applies
	// keepsOffsets: its records land at their source offsets on the
	// target (strait.offsets.preserve), set before it starts.
	keepsOffsets bool
	// owned: this node copies the partition (Share.Owns, asked once). An
	// unowned partition is never started, committed or shown.
	owned bool

	// ctx is the produce context (cancelled at the shutdown deadline) that
	// every record of this partition carries, inside its recordCtx.
	ctx context.Context

	mu        sync.Mutex
	acked     int64 // next source offset after the last acknowledged one; -1 before any
	began     int64 // the listed log start a new partition began at; -1 when it began elsewhere or unlisted
	committed int64 // last progress committed to the target; -1 before any
	inflight  int   // record path: records handed to the producer and not answered yet
	skipTo    int64 // record path: past the markers seen while records were in flight
	halt      int64 // source offset of the first record that failed; MaxInt64 while none did
	err       error // why the partition stopped

	idx   *offsets.Partition   // exact offset map, fed by acknowledgements
	syncs *offsets.SyncEmitter // MM2 offset-sync emission state
	purge []offsets.Change     // tombstones of an older incarnation's index segments, written first

	removed atomic.Bool  // its topic was deleted on the source
	fast    atomic.Bool  // on the fast path (forwarder) rather than the record path
	end     atomic.Int64 // source end offset (LSO when read_committed): the last fetch's or listing's; -1 before either
	records atomic.Int64 // records acknowledged by the target
	// gaps and filled count the gaps filled on the target and the offsets
	// they held, when the partition keeps the source's offsets.
	gaps, filled atomic.Int64
	bytes        atomic.Int64 // key+value+header bytes acknowledged (record path), batch bytes (fast path)

	timing timing // record timestamps: latency, age, lag in seconds
}

func newPartition(ts *topicState, num int32, initial bool, idx *offsets.Partition, lagMax int64, produceCtx context.Context) *partition {
	p := &partition{
		topic: ts, num: num, initial: initial, ctx: produceCtx,
		acked: -1, began: -1, committed: -1, halt: math.MaxInt64,
		idx: idx, syncs: offsets.NewSyncEmitter(lagMax),
	}
	p.end.Store(-1)
	return p
}

// recordCtx travels with one record through the producer: its partition
// and its source offset.
type recordCtx struct {
	context.Context
	p      *partition
	src    int64
	leader int32 // target broker the record's bytes were charged to
	size   int64 // its bytes in the producer's buffer (recordSize)
}

// advance moves progress to next, never past a failed record. The caller
// holds mu.
func (p *partition) advance(next int64) {
	next = min(next, p.halt)
	if next > p.acked {
		p.acked = next
		p.idx.Cover(next)
	}
}

// ---- record path ----

// sendRecords prepares the records of one fetch for the producer: data
// records get the remote topic and a recordCtx, markers only move progress
// once everything before them is acknowledged. It returns the records to
// produce, none when the partition is stopped; leader is the target broker
// their bytes are charged to (recordShares). With limit > 0 (the remote
// topic's max.message.bytes, when the producer does not compress), a record
// that cannot fit in a batch the target accepts halts the partition before
// it is produced and is returned as tooBig: the producer would otherwise
// write the records after it and leave a hole on the target.
func (p *partition) sendRecords(recs []*kgo.Record, leader int32, limit int64, notCopied func(*kgo.Record) bool) (send []*kgo.Record, tooBig *kgo.Record) {
	ctxs := make([]recordCtx, len(recs)) // one allocation per fetch, not per record (see recordOverhead)
	out := recs[:0:0]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || p.halt != math.MaxInt64 {
		return nil, nil
	}
	for i, r := range recs {
		if notCopied(r) {
			p.markerAt(r.Offset) // a marker, or a record the reverse flow wrote
			continue
		}
		if limit > 0 && batchSizeAlone(r) > limit {
			p.halt = r.Offset
			return out, r
		}
		ctxs[i] = recordCtx{Context: p.ctx, p: p, src: r.Offset, leader: leader, size: recordSize(r)}
		r.Topic = p.topic.Remote
		r.Context = &ctxs[i]
		p.inflight++
		out = append(out, r)
	}
	p.fetchedRecords(out)
	return out, nil
}

// fetchedRecords feeds the records entering the record path to timing.
func (p *partition) fetchedRecords(recs []*kgo.Record) {
	if len(recs) == 0 {
		return
	}
	newest := recs[0].Timestamp.UnixMilli()
	for _, r := range recs[1:] {
		newest = max(newest, r.Timestamp.UnixMilli())
	}
	p.timing.fetched(recs[0].Timestamp.UnixMilli(), newest, len(recs), time.Now())
}

// batchSizeAlone is the size of an uncompressed v2 batch holding only r,
// as a broker compares it with max.message.bytes.
func batchSizeAlone(r *kgo.Record) int64 {
	vlen := func(n int) int64 { return int64(varintLen(int64(n))) }
	body := 1 + 1 + 1 // attributes, timestamp delta 0, offset delta 0
	n := int64(body) + vlen(len(r.Key)) + int64(len(r.Key)) + vlen(len(r.Value)) + int64(len(r.Value)) + vlen(len(r.Headers))
	for _, h := range r.Headers {
		n += vlen(len(h.Key)) + int64(len(h.Key)) + vlen(len(h.Value)) + int64(len(h.Value))
	}
	return batch.HeaderSize + int64(varintLen(n)) + n
}

// varintLen is the length of v as a zigzag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// markerAt records that offset holds a transaction marker, which is not
// copied. The caller holds mu.
func (p *partition) markerAt(offset int64) {
	if p.err != nil || offset >= p.halt {
		return
	}
	if p.inflight == 0 {
		p.advance(offset + 1)
		return
	}
	p.skipTo = max(p.skipTo, offset+1)
}

// ackRecord records that the record at source offset src is at target
// offset tgt. It reports whether the record counts as copied, and whether
// records are still in flight after it.
func (p *partition) ackRecord(src, tgt int64) (copied, more bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if src >= p.halt || src < p.acked {
		return false, p.inflight > 0
	}
	p.idx.Ack(src, tgt)
	p.syncs.Ack(src, tgt)
	p.advance(src + 1)
	if p.inflight == 0 && p.skipTo > p.acked {
		p.advance(p.skipTo)
	}
	return true, p.inflight > 0
}

// failRecord records that the record at source offset src was not
// written: progress never passes it. A record abandoned when the flow
// stops (the shutdown deadline cancelled it, or the client closed) is
// copied again after a restart and does not stop the partition; any other
// error does, and failRecord reports whether it was the first.
func (p *partition) failRecord(src int64, err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	p.halt = min(p.halt, src)
	if flow.Classify(err) == flow.Shutdown || p.err != nil {
		return false
	}
	p.err = err
	return true
}

// ---- fast path ----

// AckBatch records a forwarded batch the target acknowledged: the n source
// offsets from src are at target offsets from tgt on, and next is the
// source offset after the batch.
func (p *partition) AckBatch(src, tgt, n, next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next > p.halt {
		return
	}
	p.ackRunLocked(src, tgt, n)
	p.advance(next)
}

// ackRunLocked maps n consecutive source offsets from src to target
// offsets from tgt in the offset map and the MM2 sync state. The caller
// holds mu.
func (p *partition) ackRunLocked(src, tgt, n int64) {
	p.idx.AckRange(src, tgt, n)
	p.syncs.AckRange(src, tgt, n)
}

// AckRebuilt records a rebuilt batch the target acknowledged: its records,
// at the source offsets of runs, are at target offsets from tgt on, and
// next is the source offset after the batch it was rebuilt from.
func (p *partition) AckRebuilt(runs []batch.Run, tgt, next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next > p.halt {
		return
	}
	for _, r := range runs {
		p.ackRunLocked(r.Offset, tgt, r.Count)
		tgt += r.Count
	}
	p.advance(next)
}

// Filled records that source offsets from..to-1, which hold nothing to
// copy, are filled on the target at the same offsets: the offset map and
// MM2's syncs translate them to themselves, and progress moves past them.
func (p *partition) Filled(from, to int64) {
	p.gaps.Add(1)
	p.filled.Add(to - from)
	p.mu.Lock()
	defer p.mu.Unlock()
	if to > p.halt {
		return
	}
	p.ackRunLocked(from, from, to-from)
	p.advance(to)
}

// SkipBefore records that every offset below next holds nothing to copy
// (markers, aborted data) once everything before it is acknowledged.
func (p *partition) SkipBefore(next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.advance(next)
	}
}

// ResumeOffset is where another path continues the partition: after the
// last acknowledged record, else where replication of it began, else -1.
func (p *partition) ResumeOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acked >= 0 {
		return p.acked
	}
	return p.idx.Start()
}

// ---- start ----

// reset gives a partition that has not started the offset map and the
// index deletions its previous owner's records call for (a shared flow's
// partition taken over, Mirror.refreshShared).
func (p *partition) reset(idx *offsets.Partition, purge []offsets.Change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idx, p.purge = idx, purge
}

// startAt sets where the partition resumes: every record before next is
// on the target. committed says next is stored progress.
func (p *partition) startAt(next int64, committed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked = next
	p.idx.SetStart(next) // kept when the loaded index knows an earlier start
	if committed {
		p.committed = next
	}
}

// startAtEnd starts at the source's end offset (auto.offset.reset=latest):
// the position counts as progress, so a restart before the first record
// does not skip what arrived in between.
func (p *partition) startAtEnd(end int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked = end
	p.idx.SetStart(end)
	p.idx.Cover(end)
}

// startAtLogStart notes that replication begins at the source log start
// offset, so offsets between it and the first record still translate.
func (p *partition) startAtLogStart(offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idx.SetStart(offset)
	p.began = offset
}

// uncopied is the first source offset that is not on the target for sure:
// progress, or before the first acknowledgement the log start the
// partition began at; -1 when neither is known.
func (p *partition) uncopied() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acked >= 0 {
		return p.acked
	}
	return p.began
}

// ---- stop, commit, status ----

// Stop stops the partition with err unless it already stopped; it reports
// whether this call stopped it.
func (p *partition) Stop(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return false
	}
	p.err = err
	return true
}

// Failed returns why the partition stopped, or nil.
func (p *partition) Failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Position returns acked: every source offset below it is on the target.
func (p *partition) Position() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

// drain takes what the committer must persist: progress, the stored
// progress, the offset map's changes and the MM2 syncs due.
func (p *partition) drain() (next, committed int64, changes []offsets.Change, syncs []offsets.Sync) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changes = append(p.purge, p.idx.Drain()...)
	p.purge = nil
	return p.acked, p.committed, changes, p.syncs.Flush()
}

// setCommitted records progress stored on the target.
func (p *partition) setCommitted(next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.committed = max(p.committed, next)
}

// prune drops offset map segments below the source log start.
func (p *partition) prune(logStart int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idx.Prune(logStart)
}

// snapshot returns the fields the status shows; position is next, or
// before the first acknowledgement where the partition began (uncopied).
func (p *partition) snapshot() (next, position, committed int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	position = p.acked
	if position < 0 {
		position = p.began
	}
	return p.acked, position, p.committed, p.err
}
