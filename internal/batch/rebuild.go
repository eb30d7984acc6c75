package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Rebuilding. A broker takes a produced batch only if its records are
// numbered 0..n-1 and it is stamped CreateTime. Three kinds of source
// batch are not: a batch compaction left holes in, a batch of a
// LogAppendTime topic, and the first batch when a partition resumes in its
// middle. A fourth must not be copied as it is: a batch the source's
// cleaner gave a delete horizon, whose first timestamp is that horizon.
// Rebuild renumbers such a batch's records, drops those before the
// resume offset, and stamps each record with the timestamp a consumer of
// the source reads for it, then compresses the records section once. It
// touches each record's three leading fields and copies its key, value and
// headers as bytes: no record objects, so such partitions stay on the fast
// path at its cost, plus one decompression and one compression.

// NeedsRebuild reports whether the data batch h cannot be produced as it
// is when copying starts at source offset from: it has compaction holes,
// it is stamped LogAppendTime, it starts before from, or it carries a
// delete horizon. The first timestamp of a batch with a horizon is the
// source's horizon, not its first record's (the fast path's lag would take
// it for the oldest record's time); rebuilt, it is the batch a producer
// would have written, and the target's cleaner keeps its tombstones for
// the target's own delete.retention.ms.
func NeedsRebuild(h Header, from int64) bool {
	return !h.Control() && (!h.Contiguous() || h.LogAppendTime() || h.DeleteHorizon() || h.BaseOffset < from)
}

// Rebuilt is a batch Rebuild made.
type Rebuilt struct {
	// Data is the batch, empty when no record is at or after from.
	Data []byte
	// Header is Data's header: base offset the source offset of its first
	// record, CreateTime, codec to.Codec, the source's producer fields.
	Header Header
	// Runs are the source offsets of its records, in order, as runs of
	// consecutive offsets: one run unless compaction left holes.
	Runs []Run
}

// Run is Count consecutive source offsets from Offset.
type Run struct{ Offset, Count int64 }

// Records is the number of records runs hold.
func Records(runs []Run) int64 {
	var n int64
	for _, r := range runs {
		n += r.Count
	}
	return n
}

// Rebuild makes, from the v2 data batch b with header h, a batch of its
// records at source offset from or after, compressed with to (its codec,
// at its level: Compression.Kgo): record i has offset delta i, and its
// timestamp is the one a consumer of b reads (the batch's max timestamp
// when b is stamped LogAppendTime, else its first timestamp plus the
// record's delta), now as CreateTime. Keys, values, headers and record
// attributes are byte for byte b's. The new batch keeps b's producer
// fields and transactional bit; the LogAppendTime and delete-horizon bits
// are cleared.
//
// It returns an error for a batch with a bad CRC (ErrBadCRC), a control
// batch (ErrControl), records that do not decode, or more records than
// the header says.
func (r *Recompressor) Rebuild(b []byte, h Header, from int64, to Compression) (Rebuilt, error) {
	recs, runs, err := r.keep(b, h, from, to)
	if err != nil || len(recs) == 0 {
		return Rebuilt{Header: h}, err
	}
	return r.build(h, recs, runs, to)
}

// RebuildRuns is Rebuild with one batch per run of consecutive source
// offsets, so that each lands at its own offsets where the target's log
// end is its first offset (the offset-preserving mode fills the holes
// between them). It returns no batch when no record is at or after from.
func (r *Recompressor) RebuildRuns(b []byte, h Header, from int64, to Compression) ([]Rebuilt, error) {
	recs, runs, err := r.keep(b, h, from, to)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	out := make([]Rebuilt, 0, len(runs))
	for _, run := range runs {
		rb, err := r.build(h, recs[:run.Count], []Run{run}, to)
		if err != nil {
			return nil, err
		}
		out = append(out, rb)
		recs = recs[run.Count:]
	}
	return out, nil
}

// kept is one record Rebuild keeps: its timestamp as a consumer reads it,
// its attributes, and its key, value and headers as bytes.
type kept struct {
	ts   int64
	rest []byte // attributes byte excluded: key, value, headers
	attr byte
}

// keep decodes the records of b at source offset from or after, with the
// runs of source offsets they are at.
func (r *Recompressor) keep(b []byte, h Header, from int64, to Compression) ([]kept, []Run, error) {
	fail := func(err error) ([]kept, []Run, error) {
		return nil, nil, fmt.Errorf("rebuilding the batch at offsets %d..%d: %w", h.BaseOffset, h.LastOffset(), err)
	}
	if err := r.check(b, h, to); err != nil {
		return fail(err)
	}
	raw, err := r.decompress(b[HeaderSize:h.Size()], h.Codec())
	if err != nil {
		return fail(fmt.Errorf("decompressing its records: %w", err))
	}
	recs := make([]kept, 0, h.NumRecords)
	var runs []Run
	for rest, i := raw, int32(0); len(rest) > 0; i++ {
		if i == h.NumRecords {
			return fail(fmt.Errorf("more records than the %d its header says", h.NumRecords))
		}
		rec, err := nextRecord(&rest)
		if err == nil && (rec.offDelta < 0 || rec.offDelta > int64(h.LastOffsetDelta)) {
			err = errors.New("bad offset delta")
		}
		if err != nil {
			return fail(fmt.Errorf("record %d: %w", i, err))
		}
		offset := h.BaseOffset + rec.offDelta
		if offset < from {
			continue
		}
		ts := h.FirstTimestamp + rec.tsDelta
		if h.LogAppendTime() {
			ts = h.MaxTimestamp
		}
		recs = append(recs, kept{ts: ts, rest: rec.rest, attr: rec.attr})
		if l := len(runs) - 1; l >= 0 && runs[l].Offset+runs[l].Count == offset {
			runs[l].Count++
		} else {
			runs = append(runs, Run{Offset: offset, Count: 1})
		}
	}
	return recs, runs, nil
}

// build makes a batch of recs, at the source offsets of runs, from the
// source batch h, compressed with to.
func (r *Recompressor) build(h Header, recs []kept, runs []Run, to Compression) (Rebuilt, error) {
	first, maxTS := recs[0].ts, int64(math.MinInt64)
	for _, k := range recs {
		maxTS = max(maxTS, k.ts)
	}
	out := r.built[:0]
	for i, k := range recs {
		out = appendRecord(out, record{attr: k.attr, tsDelta: k.ts - first, offDelta: int64(i), rest: k.rest})
	}
	r.built = out[:0] // kept for the next batch
	var err error
	if to.Codec != None {
		if out, err = r.compress(out, to); err != nil {
			return Rebuilt{}, fmt.Errorf("rebuilding the batch at offsets %d..%d: %w", h.BaseOffset, h.LastOffset(), err)
		}
	}
	if HeaderSize+len(out)-12 > math.MaxInt32 {
		return Rebuilt{}, fmt.Errorf("rebuilding the batch at offsets %d..%d: its records do not fit a batch", h.BaseOffset, h.LastOffset())
	}

	nh := h
	nh.BaseOffset = runs[0].Offset
	nh.Attributes = h.Attributes&^(codecMask|attrLogAppendTime|attrDeleteHorizon) | int16(to.Codec)
	nh.LastOffsetDelta = int32(len(recs) - 1)
	nh.NumRecords = int32(len(recs))
	nh.FirstTimestamp, nh.MaxTimestamp = first, maxTS

	nb := assemble(&nh, out)
	return Rebuilt{Data: nb, Header: nh, Runs: runs}, nil
}

// record is one record of an uncompressed records section, read as far
// as Rebuild and Merge need: its attributes and deltas, then its key,
// value and headers as bytes.
type record struct {
	attr              byte
	tsDelta, offDelta int64
	rest              []byte
}

// nextRecord reads the record at the start of *raw and moves *raw past it.
func nextRecord(raw *[]byte) (record, error) {
	rest := *raw
	length, n := binary.Varint(rest)
	if n <= 0 || length < 1 || int64(len(rest)-n) < length {
		return record{}, errors.New("bad length")
	}
	body := rest[n : n+int(length)]
	*raw = rest[n+int(length):]
	tsDelta, n1 := binary.Varint(body[1:])
	if n1 <= 0 {
		return record{}, errors.New("bad timestamp delta")
	}
	offDelta, n2 := binary.Varint(body[1+n1:])
	if n2 <= 0 {
		return record{}, errors.New("bad offset delta")
	}
	return record{attr: body[0], tsDelta: tsDelta, offDelta: offDelta, rest: body[1+n1+n2:]}, nil
}

// appendRecord appends r, with its length, to a records section.
func appendRecord(out []byte, r record) []byte {
	var fields [2 * binary.MaxVarintLen64]byte
	n := binary.PutVarint(fields[:], r.tsDelta)
	n += binary.PutVarint(fields[n:], r.offDelta)
	out = binary.AppendVarint(out, int64(1+n+len(r.rest)))
	out = append(out, r.attr)
	out = append(out, fields[:n]...)
	return append(out, r.rest...)
}

// assemble writes a batch of header h and the records section recs (in
// h's codec), computing h's length and CRC.
func assemble(h *Header, recs []byte) []byte {
	nb := make([]byte, HeaderSize, HeaderSize+len(recs))
	nb = append(nb, recs...)
	writeHeader(nb, h)
	return nb
}

// writeHeader writes h into the first HeaderSize bytes of b, the batch
// whose records section follows, with h's length and CRC computed from b.
func writeHeader(b []byte, h *Header) {
	h.Length = int32(len(b) - 12)
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(b[offLength:], uint32(h.Length))
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = 2
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(b[offFirstTimestamp:], uint64(h.FirstTimestamp))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(b[offNumRecords:], uint32(h.NumRecords))
	h.CRC = crc32.Checksum(b[offAttributes:], castagnoli)
	binary.BigEndian.PutUint32(b[offCRC:], h.CRC)
}
