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
		// A writer cut short in the middle of a replay, and the next one
		// resuming from the progress the first committed within it.
		{name: "replay inside a replay", dst: recs(0, 1, 2, 3, 4, 5, 2, 3, 4, 3, 4, 5), dups: 6},
		// Committed progress never moves back: a replay never starts before
		// the one it interrupts.
		{name: "replay from before the replay it cuts", dst: recs(0, 1, 2, 3, 4, 5, 3, 4, 2, 3, 4, 5), dups: 6, reordered: 1},
		{name: "replay that skips ahead", dst: recs(0, 1, 2, 3, 4, 5, 1, 2, 4, 5), dups: 4, reordered: 1},
		{name: "empty target", dst: nil, lost: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(0, src, tt.dst)
			if r.Lost != tt.lost || r.Duplicates != tt.dups || r.Phantoms != tt.phantoms || r.Reordered != tt.reordered {
				t.Fatalf("got %v", r)
			}
			// The streaming checker walks the same way.
			c := NewChecker(0)
			for _, r := range src {
				c.Source(r)
			}
			for _, r := range tt.dst {
				c.Target(r)
			}
			if got := c.Report(); got.String() != r.String() {
				t.Fatalf("Checker: %v\nCompare: %v", got, r)
			}
		})
	}
}

func TestCheckerTellsRecordsApartAsSameDoes(t *testing.T) {
	base := func() *kgo.Record {
		return &kgo.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: time.UnixMilli(7), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}}}
	}
	tests := []struct {
		name   string
		change func(r *kgo.Record)
	}{
		{name: "nil key", change: func(r *kgo.Record) { r.Key = nil }},
		{name: "empty key", change: func(r *kgo.Record) { r.Key = []byte{} }},
		{name: "nil value", change: func(r *kgo.Record) { r.Value = nil }},
		{name: "key and value run together", change: func(r *kgo.Record) { r.Key, r.Value = []byte("kv"), []byte{} }},
		{name: "timestamp", change: func(r *kgo.Record) { r.Timestamp = time.UnixMilli(8) }},
		{name: "no headers", change: func(r *kgo.Record) { r.Headers = nil }},
		{name: "header value", change: func(r *kgo.Record) { r.Headers[0].Value = []byte("2") }},
		{name: "header value nil", change: func(r *kgo.Record) { r.Headers[0].Value = nil }},
		{name: "another header", change: func(r *kgo.Record) { r.Headers = append(r.Headers, kgo.RecordHeader{Key: "h"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := base()
			tt.change(other)
			c := NewChecker(3)
			c.Source(base())
			c.Target(other)
			rep := c.Report()
			if rep.Phantoms != 1 || rep.Lost != 1 {
				t.Fatalf("a changed record matched its original: %v", rep)
			}
			c = NewChecker(3)
			c.Source(base())
			same := base()
			same.Timestamp = same.Timestamp.Add(300 * time.Microsecond) // Kafka keeps milliseconds
			c.Target(same)
			if rep := c.Report(); !rep.OK() || rep.Duplicates != 0 {
				t.Fatalf("an identical record did not match: %v", rep)
			}
		})
	}
}

func TestCheckerCountsReplays(t *testing.T) {
	c := NewChecker(1)
	for _, r := range recs(0, 1, 2, 3, 4, 5) {
		c.Source(r)
	}
	for _, r := range recs(0, 1, 2, 1, 2, 3, 4, 3, 4, 5) {
		c.Target(r)
	}
	if rep := c.Report(); !rep.OK() || rep.Duplicates != 4 || rep.Replays != 2 {
		t.Fatalf("got %v, want 4 duplicates in 2 replays", rep)
	}
	if !panics(func() { c.Source(recs(9)[0]) }) {
		t.Fatal("Source after Target did not panic")
	}
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
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
