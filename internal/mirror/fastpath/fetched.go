package fastpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/mirror/flow"
)

func (f *Forwarder) handleFetch(ctx context.Context, ev fetchDone) {
	for _, fp := range ev.parts {
		fp.fetching = false
	}
	for tl, n := range ev.reserved {
		f.reserved[tl] -= n
	}
	f.sharesAt = time.Time{} // queues grow now: count them again before the next fetch
	if ev.err != nil {
		if ctx.Err() == nil {
			f.deps.Errors.Count(flow.SideFetch, ev.err)
			f.log.Warn("fast path: fetch failed; retrying", "broker", ev.broker, "err", ev.err)
			f.srcStale = true
			for _, fp := range ev.parts {
				fp.notBefore = time.Now().Add(RetryBackoff)
			}
		}
		return
	}
	answered := make(map[tp]bool, len(ev.parts))
	for _, t := range ev.resp.Topics {
		name := topicName(f.srcNames, t.Topic, t.TopicID)
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			key := tp{name, rp.Partition}
			answered[key] = true
			fp := ev.parts[key]
			if fp == nil || !fp.sending() {
				continue
			}
			if at, ok := ev.at[key]; !ok || at != fp.next {
				continue // fetched at another offset than where the partition stands now
			}
			f.handleFetchPartition(ctx, fp, rp, ev.rebuilt[rp])
		}
	}
	// A fetch session leaves out the partitions with nothing new: no
	// batch this time.
	for key, fp := range ev.parts {
		if !answered[key] {
			fp.active = false
		}
	}
}

func (f *Forwarder) handleFetchPartition(ctx context.Context, fp *Part, rp *kmsg.FetchResponseTopicPartition, rebuilt rebuiltBatches) {
	p := fp.p
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		f.deps.Errors.Count(flow.SideFetch, err)
		switch flow.Classify(err) {
		case flow.Truncated:
			f.listTruncation(ctx, fp, err)
		case flow.Retry:
			f.srcStale = true
			fp.notBefore = time.Now().Add(RetryBackoff)
		default:
			f.fail(fp, fmt.Errorf("reading %s[%d]: %w", p.Source(), p.Partition(), err))
		}
		return
	}
	if d := rp.DivergingEpoch; d.Epoch >= 0 && d.EndOffset >= 0 && d.EndOffset < fp.next {
		f.fail(fp, divergedError(fp, d.Epoch, d.EndOffset))
		return
	}
	end := rp.HighWatermark
	if f.cfg.ReadCommitted && rp.LastStableOffset >= 0 {
		end = rp.LastStableOffset
	}
	p.SetEnd(end)
	fp.active = holdsBatch(rp.RecordBatches)

	var filter *batch.Filter
	if f.cfg.ReadCommitted {
		aborted := make([]batch.AbortedTxn, len(rp.AbortedTransactions))
		for i, a := range rp.AbortedTransactions {
			aborted[i] = batch.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
		}
		filter = batch.NewFilter(aborted)
	} else {
		filter = batch.NewFilter(nil)
	}
	first := len(fp.queue)
	f.walkBatches(fp, rp.RecordBatches, filter, rebuilt)
	if fp.stuck {
		f.detach(fp, first)
	}
	f.grow(fp, len(rp.RecordBatches), fp.next, end)
}

// walkBatches queues the batches of one partition's fetch response from
// fp.next on, in order; a batch that needs rebuilding is queued as rebuilt
// in the fetch goroutine.
func (f *Forwarder) walkBatches(fp *Part, batches []byte, filter *batch.Filter, rebuilt rebuiltBatches) {
	p := fp.p
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		switch {
		case errors.Is(err, batch.ErrPartial):
			return
		case errors.Is(err, batch.ErrOldFormat):
			f.leave(fp, "message format older than v2")
			return
		case err != nil:
			f.fail(fp, fmt.Errorf("reading %s[%d] at %d: %w", p.Source(), p.Partition(), fp.next, err))
			return
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if h.NextOffset() <= fp.next {
			continue // before the fetch offset: a batch the broker returns whole
		}
		if !batch.ValidCRC(b, h) {
			// Corrupted on the wire or on the source's disk. The rewrite
			// would give it a valid CRC, so it must never go further.
			if fp.crcRetried {
				f.fail(fp, fmt.Errorf("source %s[%d]: the batch at offsets %d..%d has a bad CRC twice in a row (corrupt on the source or on the way); the partition is stopped rather than copy corrupt data", p.Source(), p.Partition(), h.BaseOffset, h.LastOffset()))
				return
			}
			fp.crcRetried = true
			fp.notBefore = time.Now().Add(RetryBackoff)
			f.log.Warn("fast path: a fetched batch has a bad CRC; fetching it again", "topic", p.Source(), "partition", p.Partition(), "offset", h.BaseOffset)
			return
		}
		fp.crcRetried = false
		fp.fetchedEpoch = h.PartitionLeaderEpoch
		if filter.Skip(b, h) || f.returned(h) {
			f.queueSkip(fp, h)
			continue
		}
		if batch.NeedsRebuild(h, fp.next) {
			if !f.queueRebuilt(fp, h, rebuilt[h.BaseOffset]) {
				return
			}
			continue
		}
		if f.cfg.Codec >= 0 && h.Codec() != f.cfg.Codec {
			f.leave(fp, fmt.Sprintf("a %s-compressed batch could not be recompressed to %s, the compression.type", h.Codec(), f.cfg.Codec))
			return
		}
		f.enqueue(fp, &qbatch{data: b, h: h, seq: -1}, h.NextOffset())
	}
}

// enqueue queues a batch to send, as fetched or rebuilt, and moves the
// partition's fetch offset to next, the source offset after it.
func (f *Forwarder) enqueue(fp *Part, q *qbatch, next int64) {
	q.next = next
	fp.queue = append(fp.queue, q)
	fp.p.Fetched(q.h.FirstTimestamp, q.h.MaxTimestamp, int(q.h.NumRecords), time.Now())
	f.hold(fp, q.held())
	fp.next = next
}

// queueSkip queues the source batch h, which holds nothing to copy, as a
// skip: progress moves over it once everything before it is acknowledged
// (applySkips).
func (f *Forwarder) queueSkip(fp *Part, h batch.Header) {
	q := &qbatch{h: h, skip: true, seq: -1, next: h.NextOffset()}
	fp.queue = append(fp.queue, q)
	f.hold(fp, q.held())
	fp.next = q.next
}

// hold counts n bytes queued for fp (negative: released) against its
// partition's room and buffer.memory.
func (f *Forwarder) hold(fp *Part, n int) {
	fp.queueBytes += n
	f.buffered += int64(n)
}

// held is the bytes q counts against its partition's room and
// buffer.memory: its data, or for a skip the bytes fetched for it. Skips
// hold no data, but a queue of them behind a head that is not acknowledged
// (or with no lease or producer id) would grow without bound if they
// counted nothing.
func (q *qbatch) held() int {
	if q.skip {
		return int(q.h.Size())
	}
	return len(q.data)
}

// detach copies the batches queued from index first on out of their fetch
// responses into one buffer, so the responses (up to 16 MiB each) can be
// freed and the queue holds only the bytes it counts. Only partitions whose
// target does not acknowledge them are detached: their batches could
// otherwise pin responses for as long as the target is down, while the
// batches of a partition that flows are acknowledged, and their response
// freed, within the time it takes to drain buffer.memory (copying every
// batch doubled the fast path's CPU per GB: 1.7 -> 3.2-3.7 s/GB, measured
// with go run ./bench -tools strait -phases copy -records 1000000).
func (f *Forwarder) detach(fp *Part, first int) {
	if first >= len(fp.queue) {
		return
	}
	n := 0
	for _, q := range fp.queue[first:] {
		n += len(q.data)
	}
	buf := make([]byte, 0, n)
	for _, q := range fp.queue[first:] {
		if q.data == nil {
			continue
		}
		at := len(buf)
		buf = append(buf, q.data...)
		q.data = buf[at:len(buf):len(buf)]
	}
}

// divergedError says that the source leader's log diverged from what fp
// fetched: its epoch ends at end, before the next offset to fetch, so the
// records fetched from end on are no longer on the source (an unclean
// leader election truncated them), and those copied are on the target only.
func divergedError(fp *Part, epoch int32, end int64) error {
	copied := ""
	if acked := fp.p.Position(); acked > end {
		copied = fmt.Sprintf("; the target holds the copies of %d..%d", end, acked-1)
	}
	return fmt.Errorf("source %s[%d]: the log diverged at offset %d after a leader change (leader epoch %d ends there): records %d..%d, which Strait fetched, are no longer on the source (an unclean leader election truncated them)%s; the partition is stopped rather than copy a log that is not the one it began: compare source and target, then reset the progress of %s[%d] to copy again",
		fp.p.Source(), fp.p.Partition(), end, epoch, end, fp.next-1, copied, fp.p.Remote(), fp.p.Partition())
}

// listTruncation lists the source log start after an out-of-range fetch,
// off the loop, to say which records were lost (truncDone).
func (f *Forwarder) listTruncation(ctx context.Context, fp *Part, cause error) {
	fp.resolving = true
	source, num, next := fp.p.Source(), fp.p.Partition(), fp.next
	if acked := fp.p.Position(); acked >= 0 {
		next = acked // everything from acked on is not on the target
	}
	f.spawn(func() any {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		starts, err := kadm.NewClient(f.src).ListStartOffsets(ctx, source)
		td := truncDone{fp: fp, next: next, logStart: -1, listErr: err, cause: cause}
		if err == nil {
			if o, ok := starts.Lookup(source, num); ok {
				td.logStart, td.listErr = o.Offset, o.Err
			} else {
				td.listErr = fmt.Errorf("no start offset listed for %s[%d]", source, num)
			}
		}
		return td
	})
}

// returned reports whether the reverse flow of an active-active pair wrote
// the batch: its records came from this flow's target, and copying them
// would loop. Its producer id was resolved in the fetch goroutine.
func (f *Forwarder) returned(h batch.Header) bool {
	ret := f.deps.Provenance.Returned
	return ret != nil && !h.Control() && ret.Returned(h.ProducerID)
}

// producerIDs lists the distinct producer ids of a fetch response's
// batches.
func producerIDs(resp *kmsg.FetchResponse) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			for rest := p.RecordBatches; len(rest) > 0; {
				h, err := batch.Parse(rest)
				if err != nil {
					break // partial or old-format tail: the walk decides what it is
				}
				rest = rest[h.Size():]
				if !seen[h.ProducerID] && h.ProducerID >= 0 {
					seen[h.ProducerID] = true
					out = append(out, h.ProducerID)
				}
			}
		}
	}
	return out
}
