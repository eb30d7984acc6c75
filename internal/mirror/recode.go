package mirror

import (
	"runtime"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

// Recoding on the fast path. When the target producer's compression.type
// names a codec, a fetched batch in another codec is recompressed, records
// section only (batch.Recompressor), before it is queued: its offsets,
// producer fields and timestamps stay, so the partition stays on the fast
// path and its offset index stays per batch. Producers leave a batch
// uncompressed when compression does not shrink it, so a source topic is
// rarely one codec throughout; leaving the fast path at the first such
// batch cost a record path that moved a fifth as much.
//
// Recoding runs in the fetch's goroutine, never on the forwarder's loop,
// with the partitions of one response spread over GOMAXPROCS workers. A
// batch that cannot be recoded (bad CRC, undecodable section) is left as
// it came: walkBatches then refetches it (bad CRC) or moves its partition
// to the record path, which reports what is wrong with its records.

var recompressors = sync.Pool{New: func() any { return new(batch.Recompressor) }}

// recodeResponse recodes, in resp, the batches of every partition that are
// not in codec to.
func recodeResponse(resp *kmsg.FetchResponse, to batch.Codec) {
	var todo []*kmsg.FetchResponseTopicPartition
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			if rp := &resp.Topics[ti].Partitions[pi]; needsRecode(rp.RecordBatches, to) {
				todo = append(todo, rp)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	if workers <= 1 {
		for _, rp := range todo {
			rp.RecordBatches = recodeBatches(rp.RecordBatches, to)
		}
		return
	}
	next := make(chan *kmsg.FetchResponseTopicPartition)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for rp := range next {
				rp.RecordBatches = recodeBatches(rp.RecordBatches, to)
			}
		})
	}
	for _, rp := range todo {
		next <- rp
	}
	close(next)
	wg.Wait()
}

// needsRecode reports whether batches hold a data batch in another codec
// than to.
func needsRecode(batches []byte, to batch.Codec) bool {
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if err != nil {
			return false
		}
		if !h.Control() && h.Codec() != to {
			return true
		}
		rest = rest[h.Size():]
	}
	return false
}

// recodeBatches returns batches with every data batch in codec to, in a
// new buffer; batches it cannot recode, and a partial batch at the end,
// are copied as they are.
func recodeBatches(batches []byte, to batch.Codec) []byte {
	r := recompressors.Get().(*batch.Recompressor)
	defer recompressors.Put(r)
	out := make([]byte, 0, len(batches)+len(batches)/8)
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if err != nil {
			return append(out, rest...)
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if h.Control() || h.Codec() == to {
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
