package verify

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/offsets"
)

// at returns records with values vals at offsets from first on.
func at(first int64, vals ...int) []*kgo.Record {
	out := recs(vals...)
	for i, r := range out {
		r.Offset = first + int64(i)
	}
	return out
}

func exact(segs []offsets.Segment, covered, from int64, src, dst []*kgo.Record) PartitionReport {
	e := NewExact(0, segs, covered, from, false)
	for _, r := range src {
		e.Source(r)
	}
	lo, hi := e.TargetRange()
	for _, r := range dst {
		if r.Offset >= lo && r.Offset < hi {
			e.Target(r)
		}
	}
	return e.Report()
}

func TestExact(t *testing.T) {
	src := at(100, 0, 1, 2, 3, 4, 5)
	shifted := []offsets.Segment{{Src: 100, Tgt: 10, Len: 6}}
	changedHeader := at(10, 0, 1, 2, 3, 4, 5)
	changedHeader[3].Headers = []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}
	tests := []struct {
		name    string
		segs    []offsets.Segment
		covered int64
		dst     []*kgo.Record
		want    PartitionReport // counts only
		first   Finding         // the first finding, if any
	}{
		{name: "clean", segs: shifted, covered: 106, dst: at(10, 0, 1, 2, 3, 4, 5),
			want: PartitionReport{Records: 6, Matched: 6}},
		{name: "deleted target record", segs: shifted, covered: 106, dst: at(12, 2, 3, 4, 5),
			want:  PartitionReport{Records: 6, Matched: 4, Missing: 2},
			first: Finding{Kind: Missing, Source: 100, Target: 10}},
		{name: "extra record", segs: []offsets.Segment{{Src: 100, Tgt: 10, Len: 3}, {Src: 103, Tgt: 14, Len: 3}}, covered: 106,
			dst:   append(append(at(10, 0, 1, 2), at(13, 99)...), at(14, 3, 4, 5)...),
			want:  PartitionReport{Records: 6, Matched: 6, Extra: 1},
			first: Finding{Kind: Extra, Source: -1, Target: 13}},
		{name: "changed header", segs: shifted, covered: 106, dst: changedHeader,
			want:  PartitionReport{Records: 6, Matched: 5, Changed: 1},
			first: Finding{Kind: Changed, Source: 103, Target: 13, Detail: "the copy differs in headers"}},
		{name: "swap", segs: shifted, covered: 106, dst: at(10, 0, 2, 1, 3, 4, 5),
			want:  PartitionReport{Records: 6, Matched: 4, Reordered: 2},
			first: Finding{Kind: Reordered, Source: 101, Target: 11, Detail: "the target holds the copy of source offset 102 here"}},
		{name: "replay superseded by the index", segs: []offsets.Segment{{Src: 100, Tgt: 10, Len: 2}, {Src: 102, Tgt: 14, Len: 4}}, covered: 106,
			dst:  append(at(10, 0, 1, 2, 3), at(14, 2, 3, 4, 5)...),
			want: PartitionReport{Records: 6, Matched: 6, Duplicates: 2}},
		{name: "lag is not checked", segs: []offsets.Segment{{Src: 100, Tgt: 10, Len: 4}}, covered: 104, dst: at(10, 0, 1, 2, 3),
			want: PartitionReport{Records: 4, Matched: 4, NotCopied: 2}},
		{name: "a record the index skips", segs: []offsets.Segment{{Src: 100, Tgt: 10, Len: 2}, {Src: 103, Tgt: 12, Len: 3}}, covered: 106,
			dst:   at(10, 0, 1, 3, 4, 5),
			want:  PartitionReport{Records: 6, Matched: 5, Missing: 1},
			first: Finding{Kind: Missing, Source: 102, Target: -1}},
		{name: "coarse index found by content", segs: []offsets.Segment{{Src: 100, Tgt: 10, Len: 6, TgtLen: 7, Mapped: 6}}, covered: 106,
			dst:  at(10, 0, 1, 2, 3, 4, 5),
			want: PartitionReport{Records: 6, Matched: 6, Inexact: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exact(tt.segs, tt.covered, 100, src, tt.dst)
			if got.OK() != (tt.want.Missing+tt.want.Changed+tt.want.Reordered+tt.want.Extra == 0) {
				t.Errorf("OK() = %v for %+v", got.OK(), got)
			}
			findings := got.Findings
			got.Findings, got.Partition, got.From, got.UpTo, got.TargetFrom, got.TargetTo = nil, 0, 0, 0, 0, 0
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v\nfindings %v", got, tt.want, findings)
			}
			if tt.first.Kind == "" {
				return
			}
			if len(findings) == 0 {
				t.Fatalf("no finding, want %v", tt.first)
			}
			f := findings[0]
			if tt.first.Detail == "" {
				f.Detail = ""
			}
			if f != tt.first {
				t.Errorf("first finding %v, want %v", findings[0], tt.first)
			}
		})
	}
}

func TestExactSince(t *testing.T) {
	src := at(100, 0, 1, 2, 3, 4, 5)
	dst := at(10, 0, 1, 2, 3, 4, 5)
	got := exact([]offsets.Segment{{Src: 100, Tgt: 10, Len: 6}}, 106, 103, src, dst)
	if got.Records != 3 || got.Matched != 3 || got.TargetFrom != 13 || got.TargetTo != 16 || !got.OK() {
		t.Fatalf("from 103: %+v", got)
	}
}

func TestExactTimestampIsNamed(t *testing.T) {
	src := at(0, 1)
	dst := at(0, 1)
	dst[0].Timestamp = time.UnixMilli(5)
	got := exact([]offsets.Segment{{Src: 0, Tgt: 0, Len: 1}}, 1, 0, src, dst)
	if got.Changed != 1 || got.Findings[0].Detail != "the copy differs in timestamp (1 ms on the source, 5 on the target)" {
		t.Fatalf("%+v", got)
	}
}
