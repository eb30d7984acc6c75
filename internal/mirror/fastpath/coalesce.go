package fastpath

import "strait/internal/batch"

// Coalescing. The fast path forwards a partition's batches as the source
// holds them, and Kafka takes one batch per partition per produce request,
// with at most maxPartitionInflight in flight. A producer that writes with
// no linger leaves batches of one or a few records: at 5 MB/s of 1 KiB
// records the latency benchmark's source held about 500 batches a second
// per partition. Forwarded one by one, they left no headroom: when the
// target slowed for a moment (produce round trips of 20-50 ms instead of
// 2), 600 batches queued and drained at 2,200 a second against 4,000
// arriving, so a pause of a few tens of milliseconds became a p99 of
// hundreds (traced per fetch and produce on 2026-12-02). Before a
// partition sends, coalesce merges its queued small uncompressed batches
// into batches of up to mergeMaxBytes (batch.Merge), as a producer's
// accumulator would have built them: a backlog then drains in a few
// requests. A partition without a backlog sends what it has at once, as
// before, so coalescing adds no wait.
//
// Only batches never sent are merged: a batch sent before goes again as
// it was, with its sequence, so that the broker can tell a duplicate.
// Compressed batches are not merged (that would cost a decompression and a
// compression on the forwarder's loop); producers that compress usually
// linger, and their batches are larger.

// mergeMaxBytes caps a merged batch at the Java producer's default
// batch.size: any topic a default Java producer writes to takes it.
const mergeMaxBytes = 16 << 10

// mergeable reports whether q may be merged with its neighbours into
// batches of at most limit bytes.
func mergeable(q *qbatch, limit int) bool {
	return !q.skip && q.seq < 0 && q.sendID == 0 && len(q.data) < limit && batch.Mergeable(q.h)
}

// mergeLimit is the most bytes a merged batch of fp holds: mergeMaxBytes,
// or the remote topic's max.message.bytes when that is lower (a merged
// batch is never larger than the batches it merges together).
func mergeLimit(fp *Part) int {
	if n := fp.p.MaxMessageBytes(); n > 0 {
		return int(min(n, mergeMaxBytes))
	}
	return mergeMaxBytes
}

// coalesce merges, in the first n batches of fp's queue, each run of
// mergeable batches whose total stays within mergeLimit into one batch.
// A run whose records do not decode is left as it is: it is forwarded as
// fetched, and the target judges it.
func (f *Forwarder) coalesce(fp *Part, n int) {
	limit := mergeLimit(fp)
	for i := 0; i < n && i < len(fp.queue); i++ {
		if !mergeable(fp.queue[i], limit) {
			continue
		}
		size, j := len(fp.queue[i].data), i+1
		for ; j < len(fp.queue) && mergeable(fp.queue[j], limit) && size+len(fp.queue[j].data) <= limit && adjacent(fp, j); j++ {
			size += len(fp.queue[j].data)
		}
		if j-i < 2 {
			continue
		}
		merged, err := merge(fp.queue[i:j])
		if err != nil {
			f.log.Debug("fast path: queued batches not merged", "topic", fp.p.Source(), "partition", fp.p.Partition(), "err", err)
			i = j - 1
			continue
		}
		f.hold(fp, len(merged.data)-size)
		fp.queue[i] = merged
		removed := copy(fp.queue[i+1:], fp.queue[j:])
		clear(fp.queue[i+1+removed:]) // no pointer left to a merged batch's fetch response
		fp.queue = fp.queue[:i+1+removed]
	}
}

// adjacent reports whether fp's queued batch j may join the one before it
// in a merge: always, unless fp keeps offsets and a hole lies between them
// (a merged batch lands at consecutive offsets).
func adjacent(fp *Part, j int) bool {
	if !fp.keep {
		return true
	}
	_, end, _ := fp.queue[j-1].span()
	first, _, _ := fp.queue[j].span()
	return first == end
}

// merge makes one queued batch of qs, consecutive queued batches of one
// partition.
func merge(qs []*qbatch) (*qbatch, error) {
	parts := make([]batch.Part, len(qs))
	for i, q := range qs {
		parts[i] = batch.Part{Data: q.data, Header: q.h, Runs: q.runs}
	}
	m, err := batch.Merge(parts)
	if err != nil {
		return nil, err
	}
	return &qbatch{data: m.Data, h: m.Header, runs: m.Runs, next: qs[len(qs)-1].next, seq: -1}, nil
}
