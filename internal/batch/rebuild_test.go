package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// buildSparse is build with record i at offset delta deltas[i] (holes where
// compaction removed records) and the last offset delta last.
func buildSparse(tb testing.TB, recs []*kgo.Record, deltas []int32, last int32, codec Codec, attrs int16) []byte {
	tb.Helper()
	b := build(tb, recs, None, 0)
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		tb.Fatal(err)
	}
	parsed, err := rawRecords(rb)
	if err != nil {
		tb.Fatal(err)
	}
	var raw []byte
	for i, r := range parsed {
		r.OffsetDelta = deltas[i]
		// AppendTo writes Length as given: compute it from the body.
		body := r.AppendTo(nil)
		_, n := binary.Varint(body)
		r.Length = int32(len(body) - n)
		raw = r.AppendTo(raw)
	}
	if codec != None {
		c, err := kgo.DefaultCompressor(kgoCodec(codec))
		if err != nil {
			tb.Fatal(err)
		}
		raw, _ = c.Compress(new(bytes.Buffer), raw)
	}
	rb.Records, rb.Attributes, rb.LastOffsetDelta = raw, attrs|int16(codec), last
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[offLength:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[offCRC:], crc32.Checksum(out[offAttributes:], castagnoli))
	return out
}

// rebuildCase is a source batch and where copying starts.
type rebuildCase struct {
	name   string
	deltas []int32 // nil: contiguous
	attrs  int16
	from   int64 // relative to the base offset
}

var rebuildCases = []rebuildCase{
	{name: "holes", deltas: []int32{0, 2, 3, 7, 8, 9, 15, 16, 30, 31, 32, 40}},
	{name: "holes, first removed", deltas: []int32{3, 4, 9, 12, 13, 14, 20, 21, 22, 23, 24, 25}},
	{name: "log append time", attrs: attrLogAppendTime},
	{name: "from the middle", from: 5},
	{name: "holes, log append time, delete horizon, from the middle", deltas: []int32{0, 2, 3, 7, 8, 9, 15, 16, 30, 31, 32, 40}, attrs: attrLogAppendTime | attrDeleteHorizon, from: 8},
}

func (c rebuildCase) batch(tb testing.TB, codec Codec) []byte {
	recs := testRecords(12)
	if c.deltas == nil {
		return build(tb, recs, codec, c.attrs)
	}
	return buildSparse(tb, recs, c.deltas, c.deltas[len(c.deltas)-1]+2, codec, c.attrs)
}

// TestRebuildEveryPair rebuilds batches with holes, LogAppendTime and a
// start in the middle, from each codec into each codec, and checks the
// result against the source as a consumer reads it: the same records from
// the start offset on, with their source offsets and timestamps, numbered
// from 0, CreateTime.
func TestRebuildEveryPair(t *testing.T) {
	var r Recompressor
	for _, c := range rebuildCases {
		for _, from := range codecs {
			for _, to := range codecs {
				t.Run(fmt.Sprintf("%s/%s-%s", c.name, from, to), func(t *testing.T) {
					src := c.batch(t, from)
					h, err := Parse(src)
					if err != nil {
						t.Fatal(err)
					}
					start := h.BaseOffset + c.from
					if !NeedsRebuild(h, start) {
						t.Fatalf("NeedsRebuild(%+v, %d) = false", h, start)
					}
					got, err := r.Rebuild(src, h, start, Compression{Codec: to})
					if err != nil {
						t.Fatal(err)
					}
					checkRebuilt(t, src, h, start, got, to)
				})
			}
		}
	}
}

// consumed is a record of a batch as a consumer reads it.
type consumed struct {
	offset, ts int64
	rec        kmsg.Record
}

func consume(t *testing.T, b []byte) (Header, []consumed) {
	t.Helper()
	h, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := decoded(t, b)
	out := make([]consumed, len(recs))
	for i, r := range recs {
		ts := h.FirstTimestamp + r.TimestampDelta64
		if h.LogAppendTime() {
			ts = h.MaxTimestamp
		}
		out[i] = consumed{offset: h.BaseOffset + int64(r.OffsetDelta), ts: ts, rec: r}
	}
	return h, out
}

func checkRebuilt(t *testing.T, src []byte, sh Header, start int64, got Rebuilt, to Codec) {
	t.Helper()
	_, srcRecs := consume(t, src)
	var want []consumed
	for _, r := range srcRecs {
		if r.offset >= start {
			want = append(want, r)
		}
	}
	h, out := consume(t, got.Data)
	if h != got.Header || h.Size() != len(got.Data) || !ValidCRC(got.Data, h) {
		t.Fatalf("header %+v, parsed %+v, size %d of %d, CRC valid %v", got.Header, h, h.Size(), len(got.Data), ValidCRC(got.Data, h))
	}
	if h.Codec() != to || h.LogAppendTime() || h.Attributes&attrDeleteHorizon != 0 || !h.Contiguous() || int(h.NumRecords) != len(want) {
		t.Fatalf("header %+v: want codec %s, CreateTime, no delete horizon, %d contiguous records", h, to, len(want))
	}
	if h.ProducerID != sh.ProducerID || h.ProducerEpoch != sh.ProducerEpoch || h.BaseSequence != sh.BaseSequence || h.Transactional() != sh.Transactional() {
		t.Fatalf("producer fields %+v, source %+v", h, sh)
	}
	var offsets []int64
	for _, run := range got.Runs {
		for i := range run.Count {
			offsets = append(offsets, run.Offset+i)
		}
	}
	for i, run := range got.Runs[1:] {
		if prev := got.Runs[i]; prev.Offset+prev.Count == run.Offset {
			t.Fatalf("runs %v: %d and %d are one run", got.Runs, i, i+1)
		}
	}
	if len(out) != len(want) || len(offsets) != len(want) || Records(got.Runs) != int64(len(want)) {
		t.Fatalf("%d records, %d source offsets, want %d", len(out), len(offsets), len(want))
	}
	for i, r := range out {
		w := want[i]
		if offsets[i] != w.offset || r.rec.OffsetDelta != int32(i) || r.ts != w.ts ||
			!bytes.Equal(r.rec.Key, w.rec.Key) || (r.rec.Key == nil) != (w.rec.Key == nil) ||
			!bytes.Equal(r.rec.Value, w.rec.Value) || (r.rec.Value == nil) != (w.rec.Value == nil) ||
			r.rec.Attributes != w.rec.Attributes || fmt.Sprint(r.rec.Headers) != fmt.Sprint(w.rec.Headers) {
			t.Fatalf("record %d at source offset %d:\n got %+v ts %d\nwant %+v ts %d at %d", i, offsets[i], r.rec, r.ts, w.rec, w.ts, w.offset)
		}
	}
	if h.BaseOffset != want[0].offset {
		t.Fatalf("base offset %d, want the first record's source offset %d", h.BaseOffset, want[0].offset)
	}
}

// TestRebuildProducerBatches rebuilds, from each offset inside it, the
// batches a franz-go producer wrote with each codec.
func TestRebuildProducerBatches(t *testing.T) {
	var r Recompressor
	for _, codec := range codecs {
		b := capture(t, codec, false)[0]
		h, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		for from := h.BaseOffset + 1; from <= h.LastOffset(); from += max(1, int64(h.NumRecords)/7) {
			got, err := r.Rebuild(b, h, from, Compression{Codec: codec})
			if err != nil {
				t.Fatal(err)
			}
			checkRebuilt(t, b, h, from, got, codec)
		}
	}
}

// A batch whose records all lie before the start gives no batch; nothing
// else needs rebuilding.
func TestRebuildNothingLeft(t *testing.T) {
	var r Recompressor
	src := rebuildCases[0].batch(t, Lz4)
	h, _ := Parse(src)
	got, err := r.Rebuild(src, h, h.BaseOffset+41, Compression{Codec: Lz4}) // the last record is at delta 40
	if err != nil || got.Data != nil || got.Runs != nil {
		t.Fatalf("Rebuild past the last record = %+v, %v; want no batch", got, err)
	}
	plain, _ := Parse(build(t, testRecords(5), Lz4, 0))
	if NeedsRebuild(plain, plain.BaseOffset) || NeedsRebuild(plain, plain.BaseOffset-10) {
		t.Fatal("a contiguous CreateTime batch read from its start needs no rebuild")
	}
	marker := plain
	marker.Attributes |= attrControl | attrLogAppendTime
	if NeedsRebuild(marker, marker.BaseOffset) {
		t.Fatal("a control batch is never rebuilt")
	}
}

func TestRebuildErrors(t *testing.T) {
	var r Recompressor
	src := rebuildCases[0].batch(t, Snappy)
	h, _ := Parse(src)
	corrupt := slices.Clone(src)
	corrupt[len(corrupt)-1] ^= 0xff
	if _, err := r.Rebuild(corrupt, h, h.BaseOffset, Compression{Codec: Lz4}); !errors.Is(err, ErrBadCRC) {
		t.Errorf("corrupt batch: %v, want ErrBadCRC", err)
	}
	ctl := slices.Clone(src)
	binary.BigEndian.PutUint16(ctl[offAttributes:], uint16(h.Attributes|attrControl))
	binary.BigEndian.PutUint32(ctl[offCRC:], crc32.Checksum(ctl[offAttributes:], castagnoli))
	ch, _ := Parse(ctl)
	if _, err := r.Rebuild(ctl, ch, h.BaseOffset, Compression{Codec: Lz4}); !errors.Is(err, ErrControl) {
		t.Errorf("control batch: %v, want ErrControl", err)
	}
	// Twelve records, the header says eleven.
	short := slices.Clone(src)
	binary.BigEndian.PutUint32(short[offNumRecords:], 11)
	binary.BigEndian.PutUint32(short[offCRC:], crc32.Checksum(short[offAttributes:], castagnoli))
	sh, _ := Parse(short)
	if _, err := r.Rebuild(short, sh, h.BaseOffset, Compression{Codec: Lz4}); err == nil {
		t.Error("a batch with more records than its header says rebuilt without error")
	}
}

func BenchmarkRebuild(b *testing.B) {
	var r Recompressor
	src := buildSparse(b, testRecords(12), rebuildCases[0].deltas, 42, Lz4, attrLogAppendTime)
	big := jsonBatch(b, Lz4)
	bh, _ := Parse(big)
	b.Run("holes", func(b *testing.B) {
		h, _ := Parse(src)
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := r.Rebuild(src, h, h.BaseOffset, Compression{Codec: Lz4}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-lz4-from-middle", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			if _, err := r.Rebuild(big, bh, bh.BaseOffset+1, Compression{Codec: Lz4}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRebuildRunsSplitsAtHoles rebuilds each case into one batch per run of
// consecutive source offsets: each is what Rebuild makes of that run alone
// (checkRebuilt on a copy of the source restricted to it), and together
// they hold every record from the start offset on.
func TestRebuildRunsSplitsAtHoles(t *testing.T) {
	var r Recompressor
	for _, c := range rebuildCases {
		t.Run(c.name, func(t *testing.T) {
			src := c.batch(t, Zstd)
			h, _ := Parse(src)
			start := h.BaseOffset + c.from
			whole, err := r.Rebuild(src, h, start, Compression{Codec: Lz4})
			if err != nil {
				t.Fatal(err)
			}
			parts, err := r.RebuildRuns(src, h, start, Compression{Codec: Lz4})
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) != len(whole.Runs) {
				t.Fatalf("%d batches for the runs %v", len(parts), whole.Runs)
			}
			var records int64
			for i, part := range parts {
				run := whole.Runs[i]
				if len(part.Runs) != 1 || part.Runs[0] != run || part.Header.BaseOffset != run.Offset || int64(part.Header.NumRecords) != run.Count {
					t.Fatalf("batch %d: header %+v, runs %v; want the run %v", i, part.Header, part.Runs, run)
				}
				_, out := consume(t, part.Data)
				_, all := consume(t, whole.Data)
				for j, rec := range out {
					w := all[records+int64(j)]
					if !bytes.Equal(rec.rec.Value, w.rec.Value) || rec.ts != w.ts {
						t.Fatalf("batch %d record %d: %+v, want %+v", i, j, rec.rec, w.rec)
					}
				}
				records += run.Count
			}
			if got, err := r.RebuildRuns(src, h, h.LastOffset()+1, Compression{Codec: Lz4}); err != nil || got != nil {
				t.Fatalf("past the last record: %v, %v; want no batch", got, err)
			}
		})
	}
}
