package verify

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func recs(vals ...int) []*kgo.Record {
	out := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		out[i] = &kgo.Record{Offset: int64(i), Value: []byte(strconv.Itoa(v)), Timestamp: time.UnixMilli(int64(v))}
	}
	return out
}

func TestCompare(t *testing.T) {
	src := recs(0, 1, 2, 3, 4, 5)
	tests := []struct {
		name                            string
		dst                             []*kgo.Record
		lost, dups, phantoms, reordered int
	}{
		{name: "identical", dst: recs(0, 1, 2, 3, 4, 5)},
		{name: "replay of a suffix", dst: recs(0, 1, 2, 3, 2, 3, 4, 5), dups: 2},
		{name: "replay from the start", dst: recs(0, 1, 2, 0, 1, 2, 3, 4, 5), dups: 3},
		{name: "tail missing", dst: recs(0, 1, 2, 3), lost: 2},
		{name: "hole", dst: recs(0, 1, 3, 4, 5), lost: 1, reordered: 1},
		{name: "swapped", dst: recs(0, 2, 1, 3, 4, 5), reordered: 1},
		{name: "stranger", dst: recs(0, 1, 2, 3, 4, 5, 99), phantoms: 1},
		{name: "non-contiguous replay", dst: recs(0, 1, 2, 3, 1, 0, 2, 3, 4, 5), dups: 4, reordered: 2},
		{name: "empty target", dst: nil, lost: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(0, src, tt.dst)
			if r.Lost != tt.lost || r.Duplicates != tt.dups || r.Phantoms != tt.phantoms || r.Reordered != tt.reordered {
				t.Fatalf("got %v", r)
			}
		})
	}
}

func TestSameDistinguishesNilAndEmpty(t *testing.T) {
	a := &kgo.Record{Key: nil, Value: []byte("v")}
	b := &kgo.Record{Key: []byte{}, Value: []byte("v")}
	if Same(a, b) {
		t.Fatal("nil key equals empty key")
	}
	c := &kgo.Record{Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}}}
	if Same(a, c) {
		t.Fatal("headers ignored")
	}
	d := &kgo.Record{Value: []byte("v"), Timestamp: time.UnixMilli(5)}
	if Same(a, d) {
		t.Fatal("timestamp ignored")
	}
}
