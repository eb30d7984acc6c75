package fastpath

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

// Recoding and rebuilding on the fast path, in the fetch's goroutine,
// never on the forwarder's loop, with the partitions of one response
// spread over GOMAXPROCS workers (prepareResponse).
//
// Recoding. When the target producer's compression.type names a codec, a
// fetched batch in another codec is recompressed, records section only
// (batch.Recompressor), before it is queued: its offsets, producer fields
// and timestamps stay, so the partition stays on the fast path and its
// offset index stays per batch. Producers leave a batch uncompressed when
// compression does not shrink it, so a source topic is rarely one codec
// throughout; leaving the fast path at the first such batch cost a record
// path that moved a fifth as much.
//
// Rebuilding. A batch with compaction holes, one stamped LogAppendTime, or
// the first one when the partition resumes in its middle, is rebuilt
// (batch.Rebuild) in the target's codec: its records renumbered, stamped
// CreateTime with the timestamps a source consumer reads, and those before
// the fetch offset dropped. The rebuilt batch is kept beside the response
// (rebuiltBatches), which stays as fetched, and walkBatches queues it with
// its records' source offsets. The record path, with a *kgo.Record per
// record, took such partitions before: with 100-byte records it moved
// 1.5 times MM2's throughput, at 40 % of MM2's CPU per GB.
//
// A batch that cannot be recoded or rebuilt (bad CRC, undecodable section)
// is left as it came: walkBatches then refetches it (bad CRC) or moves its
// partition to the record path, which reports what is wrong with its
// records.

var recompressors = sync.Pool{New: func() any { return new(batch.Recompressor) }}

// compression is what the fast path compresses the batches it recodes and
// rebuilds with: the target's compression.type (Codec, -1 when unset) at
// its level.
func (c Config) compression() batch.Compression {
	return batch.Compression{Codec: c.Codec, Level: c.Level}
}

// rebuiltBatches are the rebuilt batches of one partition's fetch, by the
// base offset of the source batch each was rebuilt from.
type rebuiltBatches map[int64]*rebuiltBatch

type rebuiltBatch struct {
	// parts are the batches made of the source batch's records: one, or
	// one per run of consecutive offsets for a partition that keeps the
	// source's offsets (batch.RebuildRuns); none when no record is left.
	parts []batch.Rebuilt
	from  int64 // the fetch offset: records before it were dropped
}

// prepareResponse rebuilds, in resp, the batches that need it, and recodes
// the others that are not in codec to.Codec (none when to.Codec < 0), at
// to.Level (compression.type's compression.<codec>.level). at holds each
// partition's fetch offset, by source topic name; names maps the topic IDs
// of the request to names, for responses that carry IDs only. It returns
// the rebuilt batches of each response partition; those of the partitions
// in split are split at compaction holes.
func prepareResponse(resp *kmsg.FetchResponse, names map[[16]byte]string, at map[tp]int64, split map[tp]bool, to batch.Compression) map[*kmsg.FetchResponseTopicPartition]rebuiltBatches {
	type job struct {
		rp      *kmsg.FetchResponseTopicPartition
		from    int64
		rebuild bool
		recode  bool
		split   bool
		out     rebuiltBatches
	}
	var todo []*job
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		name := topicName(names, t.Topic, t.TopicID)
		for pi := range t.Partitions {
			rp := &t.Partitions[pi]
			from, ok := at[tp{name, rp.Partition}]
			if !ok {
				continue
			}
			rebuild, recode := preparation(rp.RecordBatches, from, to.Codec)
			if rebuild || recode {
				todo = append(todo, &job{rp: rp, from: from, rebuild: rebuild, recode: recode, split: split[tp{name, rp.Partition}]})
			}
		}
	}
	run := func(j *job) {
		r := recompressors.Get().(*batch.Recompressor)
		defer recompressors.Put(r)
		if j.rebuild {
			j.out = rebuildBatches(r, j.rp.RecordBatches, j.from, to, j.split)
		}
		if j.recode {
			j.rp.RecordBatches = recodeBatches(r, j.rp.RecordBatches, j.from, to)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	if workers <= 1 {
		for _, j := range todo {
			run(j)
		}
	} else {
		next := make(chan *job)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for j := range next {
					run(j)
				}
			})
		}
		for _, j := range todo {
			next <- j
		}
		close(next)
		wg.Wait()
	}
	var out map[*kmsg.FetchResponseTopicPartition]rebuiltBatches
	for _, j := range todo {
		if len(j.out) > 0 {
			if out == nil {
				out = map[*kmsg.FetchResponseTopicPartition]rebuiltBatches{}
			}
			out[j.rp] = j.out
		}
	}
	return out
}

// preparation reports whether batches, fetched at from, hold a data batch
// to rebuild, and one to recode into to.
func preparation(batches []byte, from int64, to batch.Codec) (rebuild, recode bool) {
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if err != nil {
			return rebuild, recode
		}
		rest = rest[h.Size():]
		switch {
		case h.NextOffset() <= from || h.Control():
		case batch.NeedsRebuild(h, from):
			rebuild = true
		case to >= 0 && h.Codec() != to:
			recode = true
		}
	}
	return rebuild, recode
}

// rebuildBatches rebuilds the data batches that need it, in to (the
// batch's own codec, at its default level, when to.Codec < 0). A batch
// with a bad CRC or records that do not decode is left out: walkBatches
// refetches it or leaves the fast path. With split, each batch is rebuilt
// into one batch per run of consecutive offsets.
func rebuildBatches(r *batch.Recompressor, batches []byte, from int64, to batch.Compression, split bool) rebuiltBatches {
	out := rebuiltBatches{}
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if err != nil {
			return out
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if h.NextOffset() <= from || !batch.NeedsRebuild(h, from) {
			continue
		}
		codec := to
		if codec.Codec < 0 {
			codec = batch.Compression{Codec: h.Codec()}
		}
		if split {
			if parts, err := r.RebuildRuns(b, h, from, codec); err == nil {
				out[h.BaseOffset] = &rebuiltBatch{parts: parts, from: from}
			}
		} else if rb, err := r.Rebuild(b, h, from, codec); err == nil {
			rebuilt := &rebuiltBatch{from: from}
			if rb.Data != nil {
				rebuilt.parts = []batch.Rebuilt{rb}
			}
			out[h.BaseOffset] = rebuilt
		}
	}
	return out
}

// queueRebuilt queues the batch rebuilt from the source batch h, which
// starts at or before fp.next: as a skip when none of its records is at
// fp.next or after. It reports false, after leaving the fast path, when
// there is no such rebuilt batch.
func (f *Forwarder) queueRebuilt(fp *Part, h batch.Header, rb *rebuiltBatch) bool {
	if rb == nil || max(rb.from, h.BaseOffset) != max(fp.next, h.BaseOffset) {
		reason := "the source stamps batches with LogAppendTime"
		switch {
		case h.BaseOffset < fp.next:
			reason = fmt.Sprintf("starting in the middle of a batch (offset %d of %d..%d)", fp.next, h.BaseOffset, h.LastOffset())
		case !h.Contiguous():
			reason = "compaction left holes in a batch"
		case h.DeleteHorizon():
			reason = "the source's cleaner gave a batch a delete horizon"
		}
		f.leave(fp, reason+" that could not be rebuilt")
		return false
	}
	if len(rb.parts) == 0 {
		f.queueSkip(fp, h)
		return true
	}
	for i, part := range rb.parts {
		next := h.NextOffset()
		if i < len(rb.parts)-1 || fp.keep {
			_, next, _ = (&qbatch{runs: part.Runs}).span()
		}
		f.enqueue(fp, &qbatch{data: part.Data, h: part.Header, seq: -1, runs: part.Runs}, next)
	}
	if fp.next < h.NextOffset() {
		// A partition that keeps offsets: the cleaner emptied the batch's last
		// offsets. Progress passes them only once they are filled (applySkips).
		q := &qbatch{skip: true, seq: -1, next: h.NextOffset()}
		fp.queue = append(fp.queue, q)
		f.hold(fp, q.held())
		fp.next = q.next
	}
	return true
}

// recodeBatches returns batches with every data batch fetched at from on
// in to.Codec (compressed at to.Level), except those to rebuild, in a new
// buffer; batches already in to.Codec, batches it cannot recode, and a
// partial batch at the end, are copied as they are.
func recodeBatches(r *batch.Recompressor, batches []byte, from int64, to batch.Compression) []byte {
	out := make([]byte, 0, len(batches)+len(batches)/8)
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if err != nil {
			return append(out, rest...)
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if h.Control() || h.Codec() == to.Codec || h.NextOffset() <= from || batch.NeedsRebuild(h, from) {
			out = append(out, b...)
			continue
		}
		recoded, _, err := r.Recompress(out, b, h, to)
		if err != nil {
			out = append(out, b...)
			continue
		}
		out = recoded
	}
	return out
}
