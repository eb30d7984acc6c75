package batch

import (
	"errors"
	"fmt"
	"math"
)

// Merging. Kafka takes one batch per partition per produce request, and a
// broker's cost is per batch and per request, not per byte. A producer that
// writes with no linger (one record per batch at a steady rate) leaves
// batches that the fast path would forward one by one: with at most five in
// flight per partition, a target that slows for a moment leaves more
// batches queued than it can take, and the backlog drains at a few batches
// per round trip (the benchmark's latency run at 5 MB/s queued 600 batches
// of one record and took half a second to drain them). Merge makes one
// batch of several queued uncompressed batches, as a producer's
// accumulator would have, touching only each record's three leading
// fields.

// Mergeable reports whether Merge can take the batch h as it is: a data
// batch with records, uncompressed, stamped CreateTime, and without a
// delete horizon (its first timestamp is then not a record's).
func Mergeable(h Header) bool {
	return h.NumRecords > 0 && h.Codec() == None && !h.Control() && !h.LogAppendTime() && !h.DeleteHorizon()
}

// Part is one batch to merge: its bytes and header, and the source
// offsets of its records (nil when they are the header's offsets, as in a
// contiguous batch forwarded as fetched).
type Part struct {
	Data   []byte
	Header Header
	Runs   []Run
}

// runs returns the source offsets of p's records.
func (p Part) runs() []Run {
	if p.Runs != nil {
		return p.Runs
	}
	return []Run{{Offset: p.Header.BaseOffset, Count: int64(p.Header.NumRecords)}}
}

// Merge makes one uncompressed batch of the records of parts, in order,
// each of them Mergeable: record i has offset delta i and keeps its
// timestamp, attributes, key, value and headers. Runs are the source
// offsets of its records, adjacent runs joined. The producer fields and
// the leader epoch are the first part's, for Rewrite to replace. It
// returns an error when a part's records do not decode or do not number
// what its header says.
func Merge(parts []Part) (Rebuilt, error) {
	if len(parts) == 0 {
		return Rebuilt{}, errors.New("merging no batches")
	}
	size := 0
	for _, p := range parts {
		size += len(p.Data)
	}
	out := make([]byte, HeaderSize, size+16)
	var (
		runs  []Run
		n     int64
		first int64
		maxTS = int64(math.MinInt64)
	)
	for pi, p := range parts {
		h := p.Header
		if !Mergeable(h) {
			return Rebuilt{}, fmt.Errorf("merging the batch at offset %d: not an uncompressed CreateTime data batch", h.BaseOffset)
		}
		if len(p.Data) < h.Size() {
			return Rebuilt{}, fmt.Errorf("merging the batch at offset %d: %d bytes, shorter than the %d its header says", h.BaseOffset, len(p.Data), h.Size())
		}
		fail := func(i int32, what string) (Rebuilt, error) {
			return Rebuilt{}, fmt.Errorf("merging the batch at offset %d: record %d: %s", h.BaseOffset, i, what)
		}
		var i int32
		for rest := p.Data[HeaderSize:h.Size()]; len(rest) > 0; i++ {
			if i == h.NumRecords {
				return fail(i, fmt.Sprintf("more records than the %d its header says", h.NumRecords))
			}
			rec, err := nextRecord(&rest)
			if err != nil {
				return fail(i, err.Error())
			}
			ts := h.FirstTimestamp + rec.tsDelta
			if pi == 0 && i == 0 {
				first = ts
			}
			maxTS = max(maxTS, ts)
			rec.tsDelta, rec.offDelta = ts-first, n
			out = appendRecord(out, rec)
			n++
		}
		if i != h.NumRecords {
			return fail(i, fmt.Sprintf("%d records where its header says %d", i, h.NumRecords))
		}
		for _, r := range p.runs() {
			if l := len(runs) - 1; l >= 0 && runs[l].Offset+runs[l].Count == r.Offset {
				runs[l].Count += r.Count
			} else {
				runs = append(runs, r)
			}
		}
	}
	if n == 0 || Records(runs) != n {
		return Rebuilt{}, fmt.Errorf("merging the batches at offsets %d..%d: %d records where their offsets say %d", parts[0].Header.BaseOffset, parts[len(parts)-1].Header.LastOffset(), n, Records(runs))
	}
	if len(out)-12 > math.MaxInt32 || n > math.MaxInt32 {
		return Rebuilt{}, errors.New("the merged records do not fit a batch")
	}
	nh := parts[0].Header
	nh.BaseOffset = runs[0].Offset
	nh.Attributes &^= attrTransactional
	nh.LastOffsetDelta = int32(n - 1)
	nh.NumRecords = int32(n)
	nh.FirstTimestamp, nh.MaxTimestamp = first, maxTS
	writeHeader(out, &nh)
	return Rebuilt{Data: out, Header: nh, Runs: runs}, nil
}
