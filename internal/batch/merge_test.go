package batch

import (
	"bytes"
	"encoding/binary"
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
