package wire

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// TestIndexSegmentVectors pins the bytes of index records: version 0 as
// every Strait has written it (exact segments), version 1 for coarse ones.
func TestIndexSegmentVectors(t *testing.T) {
	id := [16]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	key := "0006" + hex.EncodeToString([]byte("orders")) + "00000003" + "00000000000003e6" // orders, 3, tgt 998
	tests := []struct {
		name  string
		seg   IndexSegment
		value string
	}{
		{
			name: "v0 exact",
			seg:  IndexSegment{Topic: "orders", Partition: 3, Src: 1000, Tgt: 998, Len: 42, Covered: 1043, Start: -1, TopicID: id},
			value: "0000" + "00000000000003e8" + "00000000000003e6" + "000000000000002a" + "0000000000000413" + "ffffffffffffffff" +
				"0102030405060708090a0b0c0d0e0f10",
		},
		{
			name: "v1 coarse",
			seg:  IndexSegment{Topic: "orders", Partition: 3, Src: 1000, Tgt: 998, Len: 42, Covered: 1043, Start: 7, TopicID: id, TgtLen: 30, Mapped: 25},
			value: "0001" + "00000000000003e8" + "00000000000003e6" + "000000000000002a" + "0000000000000413" + "0000000000000007" +
				"0102030405060708090a0b0c0d0e0f10" + "000000000000001e" + "0000000000000019",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := tt.seg.Key().AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(k); got != key {
				t.Errorf("key %s, want %s", got, key)
			}
			if got := hex.EncodeToString(tt.seg.AppendValue(nil)); got != tt.value {
				t.Errorf("value %s, want %s", got, tt.value)
			}
			v, _ := hex.DecodeString(tt.value)
			kb, _ := hex.DecodeString(key)
			got, err := DecodeIndexSegment(kb, v)
			if err != nil || got != tt.seg {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, tt.seg)
			}
		})
	}
}

func TestIndexSegmentRejects(t *testing.T) {
	key, _ := IndexSegment{Topic: "t", Tgt: 5}.Key().AppendKey(nil)
	coarse := IndexSegment{Topic: "t", Src: 1, Tgt: 5, Len: 10, TgtLen: 8, Mapped: 6}
	tests := []struct {
		name      string
		value     []byte
		wantField string
	}{
		{name: "unknown version", value: func() []byte { v := coarse.AppendValue(nil); v[1] = 2; return v }(), wantField: "version"},
		{name: "coarse without its fields", value: func() []byte { v := coarse.AppendValue(nil); return v[:len(v)-16] }(), wantField: "tgtLen"},
		{name: "coarse, mapped over len", value: IndexSegment{Topic: "t", Tgt: 5, Len: 3, TgtLen: 8, Mapped: 4}.AppendValue(nil), wantField: "mapped"},
		{name: "coarse, negative mapped", value: IndexSegment{Topic: "t", Tgt: 5, Len: 3, TgtLen: 8, Mapped: -1}.AppendValue(nil), wantField: "mapped"},
		{name: "coarse, empty", value: IndexSegment{Topic: "t", Tgt: 5, Len: 0, TgtLen: 8}.AppendValue(nil), wantField: "mapped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeIndexSegment(key, tt.value)
			var de *DecodeError
			if !errors.As(err, &de) || de.Field != tt.wantField || !strings.Contains(err.Error(), "Strait") {
				t.Fatalf("err %v, want a DecodeError on field %q", err, tt.wantField)
			}
		})
	}
}

func TestIndexSegmentRoundTrip(t *testing.T) {
	s := IndexSegment{Topic: "orders", Partition: 3, Src: 1000, Tgt: 998, Len: 42, Covered: 1043, TopicID: [16]byte{1, 2, 3}}
	key, err := s.Key().AppendKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndexSegment(key, s.AppendValue(nil))
	if err != nil || got != s {
		t.Fatalf("got %+v, %v", got, err)
	}
	tomb, err := DecodeIndexSegment(key, nil)
	if !errors.Is(err, ErrTombstone) || tomb.Tgt != 998 || tomb.Topic != "orders" {
		t.Fatalf("tombstone: %+v %v", tomb, err)
	}
	if _, err := DecodeIndexSegment(key, s.AppendValue(nil)[:20]); err == nil {
		t.Fatal("short value accepted")
	}
	other := s
	other.Tgt = 5
	if _, err := DecodeIndexSegment(key, other.AppendValue(nil)); err == nil {
		t.Fatal("mismatched key accepted")
	}
}

func FuzzDecodeIndexSegment(f *testing.F) {
	s := IndexSegment{Topic: "t", Partition: 1, Src: 5, Tgt: 6, Len: 7, Covered: 12}
	key, _ := s.Key().AppendKey(nil)
	f.Add(key, s.AppendValue(nil))
	c := s
	c.TgtLen, c.Mapped = 5, 3
	f.Add(key, c.AppendValue(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeIndexSegment(key, value)
		if err != nil {
			return
		}
		k2, err := got.Key().AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeIndexSegment(k2, got.AppendValue(nil))
		if err != nil || again != got {
			t.Fatalf("round trip: %+v %v, want %+v", again, err, got)
		}
	})
}
