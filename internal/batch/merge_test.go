package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// at moves batch b to base offset base (the base offset is outside the CRC).
func at(tb testing.TB, b []byte, base int64) Part {
	tb.Helper()
	b = bytes.Clone(b)
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(base))
	h, err := Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	return Part{Data: b, Header: h}
}

// TestMergeKeepsEveryRecord merges batches as the fast path queues them
// (forwarded as fetched, one record each, and one rebuilt from a batch
// with compaction holes) and checks the result as a consumer reads it:
// the records in order with their keys, values, headers and timestamps,
// numbered from 0, and runs giving each record's source offset.
func TestMergeKeepsEveryRecord(t *testing.T) {
	recs := testRecords(40)
	// Timestamps out of order, across batches: the merged deltas go negative.
	recs[3].Timestamp = recs[0].Timestamp.Add(-time.Hour)
	recs[25].Timestamp = recs[0].Timestamp.Add(time.Hour)
	var parts []Part
	var want []consumed
	add := func(p Part) {
		parts = append(parts, p)
		_, cs := consume(t, p.Data)
		if p.Runs != nil {
			var offs []int64
			for _, r := range p.Runs {
				for i := range r.Count {
					offs = append(offs, r.Offset+i)
				}
			}
			for i := range cs {
				cs[i].offset = offs[i]
			}
		}
		want = append(want, cs...)
	}
	add(at(t, build(t, recs[0:1], None, 0), 100))
	add(at(t, build(t, recs[1:2], None, 0), 101))
	add(at(t, build(t, recs[2:12], None, 0), 102)) // contiguous with the run before
	// After a gap (a marker, or a batch compaction removed), a batch whose
	// first timestamp is not the others': Rebuild stamps its first record's.
	var r Recompressor
	moved := at(t, build(t, recs[12:14], None, 0), 120)
	rebuilt, err := r.Rebuild(moved.Data, moved.Header, 120, Compression{Codec: None})
	if err != nil || rebuilt.Header.FirstTimestamp == parts[0].Header.FirstTimestamp {
		t.Fatalf("rebuilding: %v, first timestamp %d", err, rebuilt.Header.FirstTimestamp)
	}
	add(Part(rebuilt))
	sparse := at(t, rebuildCases[0].batch(t, None), 130)
	rb, err := r.Rebuild(sparse.Data, sparse.Header, 130, Compression{Codec: None})
	if err != nil {
		t.Fatal(err)
	}
	add(Part(rb))
	add(at(t, build(t, recs[25:40], None, attrTransactional), 200))

	got, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	h, out := consume(t, got.Data)
	if h != got.Header || h.Size() != len(got.Data) || !ValidCRC(got.Data, h) {
		t.Fatalf("header %+v, parsed %+v, size %d of %d, CRC valid %v", got.Header, h, h.Size(), len(got.Data), ValidCRC(got.Data, h))
	}
	if !Mergeable(h) || h.Transactional() || !h.Contiguous() || int(h.NumRecords) != len(want) || h.BaseOffset != 100 {
		t.Fatalf("header %+v: want an uncompressed CreateTime batch of %d contiguous records at 100", h, len(want))
	}
	if h.ProducerID != parts[0].Header.ProducerID || h.PartitionLeaderEpoch != parts[0].Header.PartitionLeaderEpoch {
		t.Fatalf("producer fields %+v, first part %+v", h, parts[0].Header)
	}
	var offsets []int64
	for i, run := range got.Runs {
		if i > 0 && got.Runs[i-1].Offset+got.Runs[i-1].Count == run.Offset {
			t.Fatalf("runs %v: adjacent runs %d and %d not joined", got.Runs, i-1, i)
		}
		for j := range run.Count {
			offsets = append(offsets, run.Offset+j)
		}
	}
	if len(offsets) != len(want) || len(out) != len(want) {
		t.Fatalf("%d records, %d offsets in runs, want %d", len(out), len(offsets), len(want))
	}
	maxTS := want[0].ts
	for i, w := range want {
		g := out[i]
		maxTS = max(maxTS, w.ts)
		if offsets[i] != w.offset || g.offset != h.BaseOffset+int64(i) || g.ts != w.ts || g.rec.Attributes != w.rec.Attributes ||
			!bytes.Equal(g.rec.Key, w.rec.Key) || !bytes.Equal(g.rec.Value, w.rec.Value) || (g.rec.Value == nil) != (w.rec.Value == nil) ||
			len(g.rec.Headers) != len(w.rec.Headers) {
			t.Fatalf("record %d: got offset %d (source %d), ts %d, %+v; want source offset %d, ts %d, %+v", i, g.offset, offsets[i], g.ts, g.rec, w.offset, w.ts, w.rec)
		}
		for j := range w.rec.Headers {
			if g.rec.Headers[j].Key != w.rec.Headers[j].Key || !bytes.Equal(g.rec.Headers[j].Value, w.rec.Headers[j].Value) {
				t.Fatalf("record %d header %d: %+v, want %+v", i, j, g.rec.Headers[j], w.rec.Headers[j])
			}
		}
	}
	if h.FirstTimestamp != want[0].ts || h.MaxTimestamp != maxTS {
		t.Fatalf("timestamps first %d max %d, want %d %d", h.FirstTimestamp, h.MaxTimestamp, want[0].ts, maxTS)
	}
}

// Merge takes only what it can merge without decompressing or restamping,
// and refuses a batch whose records do not match its header.
func TestMergeErrors(t *testing.T) {
	recs := testRecords(3)
	plain := at(t, build(t, recs, None, 0), 10)
	short := at(t, build(t, recs, None, 0), 20)
	binary.BigEndian.PutUint32(short.Data[offNumRecords:], 4)
	short.Header.NumRecords = 4
	for _, c := range []struct {
		name  string
		parts []Part
		want  string
	}{
		{"none", nil, "no batches"},
		{"compressed", []Part{plain, at(t, build(t, recs, Lz4, 0), 20)}, "not an uncompressed CreateTime data batch"},
		{"log append time", []Part{plain, at(t, build(t, recs, None, attrLogAppendTime), 20)}, "not an uncompressed CreateTime data batch"},
		{"delete horizon", []Part{at(t, build(t, recs, None, attrDeleteHorizon), 5), plain}, "not an uncompressed CreateTime data batch"},
		{"fewer records than its header says", []Part{plain, short}, "3 records where its header says 4"},
		{"cut off", []Part{plain, {Data: short.Data[:HeaderSize+5], Header: short.Header}}, "shorter than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Merge(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one saying %q", err, c.want)
			}
		})
	}
}

// A merged batch reads back through franz-go's own decoder as the records
// it was made of.
func TestMergeReadsBackAsKafkaRecords(t *testing.T) {
	recs := testRecords(5)
	var parts []Part
	for i, r := range recs {
		parts = append(parts, at(t, build(t, []*kgo.Record{r}, None, 0), int64(i)))
	}
	got, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	_, out := decoded(t, got.Data)
	if len(out) != len(recs) {
		t.Fatalf("%d records, want %d", len(out), len(recs))
	}
	for i, r := range out {
		if int(r.OffsetDelta) != i || !bytes.Equal(r.Value, recs[i].Value) {
			t.Fatalf("record %d: %+v, want offset delta %d and value %q", i, r, i, recs[i].Value)
		}
	}
}

// smallBatches returns n batches of one or two of recs each, in codec,
// back to back from offset base, as a producer that lingers little leaves
// them, and the records a consumer reads from them.
func smallBatches(t *testing.T, recs []*kgo.Record, codec Codec, base int64) ([]Part, []consumed) {
	t.Helper()
	var parts []Part
	var want []consumed
	for i := 0; i < len(recs); {
		n := 1 + i%2
		if i+n > len(recs) {
			n = len(recs) - i
		}
		p := at(t, build(t, recs[i:i+n], codec, 0), base+int64(i))
		_, cs := consume(t, p.Data)
		parts, want = append(parts, p), append(want, cs...)
		i += n
	}
	return parts, want
}

// rewritten returns p with its bytes changed by edit and its CRC made valid.
func rewritten(t *testing.T, p Part, edit func([]byte)) Part {
	t.Helper()
	b := bytes.Clone(p.Data)
	edit(b)
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	h, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return Part{Data: b, Header: h}
}

// TestMergeRecompress merges small snappy batches into zstd batches of at
// most maxBytes of records, and checks every record as a consumer reads
// it: same offsets, timestamps, keys, values and headers, in order.
func TestMergeRecompress(t *testing.T) {
	recs := testRecords(60)
	parts, want := smallBatches(t, recs, Snappy, 1000)
	for _, maxBytes := range []int{1 << 20, 600, 1} {
		t.Run(fmt.Sprint(maxBytes), func(t *testing.T) {
			var r Recompressor
			var got []consumed
			batches := 0
			for rest := parts; len(rest) > 0; {
				out, h, n, err := r.MergeRecompress(nil, rest, maxBytes, Compression{Codec: Zstd})
				if err != nil {
					t.Fatal(err)
				}
				ph, cs := consume(t, out)
				if ph != h || h.Codec() != Zstd || !ValidCRC(out, h) || h.Size() != len(out) || !h.Contiguous() {
					t.Fatalf("batch %d: header %+v, parsed %+v, %d bytes", batches, h, ph, len(out))
				}
				if h.ProducerID != rest[0].Header.ProducerID || h.PartitionLeaderEpoch != rest[0].Header.PartitionLeaderEpoch {
					t.Fatalf("batch %d: producer fields %+v, first part %+v", batches, h, rest[0].Header)
				}
				if raw, _ := decoded(t, out); n > 1 && len(raw) > maxBytes {
					t.Fatalf("batch %d merges %d parts into %d bytes of records, more than %d", batches, n, len(raw), maxBytes)
				}
				got = append(got, cs...)
				rest = rest[n:]
				batches++
			}
			switch {
			case maxBytes == 1 && batches != len(parts):
				t.Fatalf("%d batches from %d parts: a part larger than maxBytes goes alone", batches, len(parts))
			case maxBytes == 1<<20 && batches != 1:
				t.Fatalf("%d batches, want the %d parts in one", batches, len(parts))
			case maxBytes == 600 && (batches < 3 || batches >= len(parts)):
				t.Fatalf("%d batches from %d parts", batches, len(parts))
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				if g.offset != w.offset || g.ts != w.ts || !bytes.Equal(g.rec.Key, w.rec.Key) || !bytes.Equal(g.rec.Value, w.rec.Value) ||
					(g.rec.Value == nil) != (w.rec.Value == nil) || len(g.rec.Headers) != len(w.rec.Headers) {
					t.Fatalf("record %d: got offset %d ts %d %+v, want offset %d ts %d %+v", i, g.offset, g.ts, g.rec, w.offset, w.ts, w.rec)
				}
			}
		})
	}
}

// A run ends where a batch could not have come from the same producer
// write: another producer or epoch, a gap (a marker took an offset), a
// transaction, another leader epoch; and at a batch with a bad CRC.
func TestMergeRecompressStopsAtARunsEnd(t *testing.T) {
	recs := testRecords(6)
	parts, _ := smallBatches(t, recs, Lz4, 50) // 4 parts: 1, 2, 1, 2 records
	third := parts[2]
	for _, c := range []struct {
		name  string
		third Part
	}{
		{"another producer", rewritten(t, third, func(b []byte) { binary.BigEndian.PutUint64(b[offProducerID:], 10) })},
		{"another producer epoch", rewritten(t, third, func(b []byte) { binary.BigEndian.PutUint16(b[offProducerEpoch:], 4) })},
		{"another leader epoch", rewritten(t, third, func(b []byte) { binary.BigEndian.PutUint32(b[offLeaderEpoch:], 8) })},
		{"a gap", at(t, third.Data, third.Header.BaseOffset+1)},
		{"transactional", at(t, build(t, recs[3:4], Lz4, attrTransactional), third.Header.BaseOffset)},
		{"bad CRC", Part{Data: append(bytes.Clone(third.Data[:len(third.Data)-1]), third.Data[len(third.Data)-1]^1), Header: third.Header}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := []Part{parts[0], parts[1], c.third, parts[3]}
			var r Recompressor
			out, h, n, err := r.MergeRecompress(nil, run, 1<<20, Compression{Codec: Gzip})
			if err != nil || n != 2 || h.NumRecords != 3 || h.BaseOffset != 50 || h.Codec() != Gzip || !ValidCRC(out, h) {
				t.Fatalf("took %d parts into %+v, err %v; want the first two, 3 records at 50", n, h, err)
			}
		})
	}
	var r Recompressor
	bad := Part{Data: bytes.Clone(parts[0].Data), Header: parts[0].Header}
	bad.Data[len(bad.Data)-1] ^= 1
	if _, _, n, err := r.MergeRecompress(nil, []Part{bad, parts[1]}, 1<<20, Compression{Codec: Gzip}); !errors.Is(err, ErrBadCRC) || n != 0 {
		t.Fatalf("a first part with a bad CRC: took %d, err %v", n, err)
	}
	tx := at(t, build(t, recs[:1], Lz4, attrTransactional), 50)
	if _, h, n, err := r.MergeRecompress(nil, []Part{tx, parts[1]}, 1<<20, Compression{Codec: Gzip}); err != nil || n != 1 || !h.Transactional() {
		t.Fatalf("a transactional first part: took %d into %+v, err %v; want it alone, still transactional", n, h, err)
	}
}
