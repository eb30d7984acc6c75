package batch

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEncodeReadsBackAsKafkaRecords checks a batch Encode made, rewritten
// for a transactional producer, against kmsg's decoding: every key, value
// and tombstone, the offsets 0..n-1, the timestamp and a valid CRC.
func TestEncodeReadsBackAsKafkaRecords(t *testing.T) {
	recs := []KV{{Key: []byte("k0"), Value: []byte("v0")}, {Key: []byte("k1")}, {Key: []byte("k2"), Value: []byte{}}}
	h, b, err := Encode(recs, 1234)
	if err != nil {
		t.Fatal(err)
	}
	Rewrite(b, h, 42, 3, 17, true)
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidCRC(b, got) || !got.Transactional() || got.ProducerID != 42 || got.ProducerEpoch != 3 || got.BaseSequence != 17 ||
		got.NumRecords != 3 || got.LastOffsetDelta != 2 || got.Codec() != None || got.LogAppendTime() || got.Size() != len(b) {
		t.Fatalf("header %+v", got)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if rb.FirstTimestamp != 1234 || rb.MaxTimestamp != 1234 {
		t.Fatalf("timestamps %d %d", rb.FirstTimestamp, rb.MaxTimestamp)
	}
	rest := rb.Records
	for i, want := range recs {
		var r kmsg.Record
		if err := r.ReadFrom(rest); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		rest = rest[varintSize(rest)+int(r.Length):]
		if r.OffsetDelta != int32(i) || r.TimestampDelta64 != 0 || !bytes.Equal(r.Key, want.Key) ||
			(want.Value == nil) != (r.Value == nil) || !bytes.Equal(r.Value, want.Value) || len(r.Headers) != 0 {
			t.Fatalf("record %d: %+v, want %+v", i, r, want)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the records", len(rest))
	}
	Rewrite(b, got, 42, 3, 17, false)
	if h2, _ := Parse(b); h2.Transactional() || !ValidCRC(b, h2) {
		t.Fatalf("clearing the transactional bit: %+v", h2)
	}
	if _, _, err := Encode(nil, 0); err == nil {
		t.Fatal("no records: no error")
	}
}

// varintSize is the length of the varint at the start of b.
func varintSize(b []byte) int {
	for i, c := range b {
		if c < 0x80 {
			return i + 1
		}
	}
	return len(b)
}
