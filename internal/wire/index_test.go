package wire

import (
	"errors"
	"testing"
)

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
