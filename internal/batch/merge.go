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

// MergeRecompress appends to dst one batch, compressed with to, of the
// records of the longest prefix of parts (at least one part) that is one
// producer's contiguous run outside transactions and whose records
// section, uncompressed, fits in maxBytes; it returns the extended dst,
// the batch's header and how many parts it took. A part joins the one
// before it when it starts at the offset after it, has no holes, is not
// transactional, and has the first part's producer id, epoch and leader
// epoch, so that the merged batch is one the source producer could have
// written: whatever a reader decides from those fields (written by whom,
// fetched in which epoch) holds for every record in it. Each part must have a valid CRC (ErrBadCRC); a prefix of
// one part is that part recompressed, as Recompress does it.
//
// The fast path recompresses every batch that is not in the target's
// codec anyway, so merging the small ones of a fetch costs no further
// codec pass, and the target takes one batch where the source held many:
// a broker's cost is per batch (it decompresses each compressed batch to
// validate it), and a producer that lingers little over many partitions
// leaves batches of one or two records.
func (r *Recompressor) MergeRecompress(dst []byte, parts []Part, maxBytes int, to Compression) ([]byte, Header, int, error) {
	if len(parts) == 0 {
		return dst, Header{}, 0, errors.New("merging no batches")
	}
	if err := to.check(); err != nil {
		return dst, Header{}, 0, err
	}
	var (
		plain []byte // the parts taken, uncompressed, back to back
		ends  []int
		raw   int
	)
	none := Compression{Codec: None}
	for i, p := range parts {
		if i > 0 && !joins(parts[0].Header, parts[i-1].Header, p.Header) {
			break
		}
		start := len(plain)
		var err error
		if plain, _, err = r.Recompress(plain, p.Data, p.Header, none); err != nil {
			if i == 0 {
				return dst, Header{}, 0, err
			}
			break // merge what came before; the caller meets this part again
		}
		n := len(plain) - start - HeaderSize
		if i > 0 && raw+n > maxBytes {
			plain = plain[:start]
			break
		}
		raw += n
		ends = append(ends, len(plain))
	}
	if len(ends) == 1 {
		out, h, err := r.Recompress(dst, parts[0].Data, parts[0].Header, to)
		return out, h, 1, err
	}
	taken := make([]Part, len(ends))
	start := 0
	for i, end := range ends {
		h, err := Parse(plain[start:end])
		if err != nil {
			return dst, Header{}, 0, err
		}
		taken[i] = Part{Data: plain[start:end], Header: h}
		start = end
	}
	m, err := Merge(taken)
	if err != nil {
		return dst, Header{}, 0, err
	}
	out, h, err := r.Recompress(dst, m.Data, m.Header, to)
	return out, h, len(taken), err
}

// joins reports whether the batch h may be merged after prev in a run
// that starts with first (MergeRecompress).
func joins(first, prev, h Header) bool {
	plain := func(h Header) bool {
		return !h.Transactional() && h.Contiguous() && Mergeable(Header{NumRecords: h.NumRecords, Attributes: h.Attributes &^ codecMask})
	}
	return plain(first) && plain(h) && h.BaseOffset == prev.NextOffset() &&
		h.ProducerID == first.ProducerID && h.ProducerEpoch == first.ProducerEpoch && h.PartitionLeaderEpoch == first.PartitionLeaderEpoch
}
