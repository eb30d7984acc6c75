package checkpoint

import (
	"testing"

	"strait/internal/offsets"
)

// TestFirstUnread: the reverse flow's map of R[p] (B offsets to copies in
// T[p] on A) inverted at a group's committed offset u on A. B holds its
// own records at 0-9 and 20-29, copied to A at 5-14 and 25-34; B's 10-19
// and 30-39 are copies of A's records, which the reverse flow skips.
func TestFirstUnread(t *testing.T) {
	exact := []offsets.Segment{{Src: 0, Tgt: 5, Len: 10}, {Src: 20, Tgt: 25, Len: 10}}
	coarse := []offsets.Segment{{Src: 0, Tgt: 5, Len: 10, TgtLen: 12, Mapped: 8}, {Src: 20, Tgt: 25, Len: 10}}
	tests := []struct {
		name    string
		segs    []offsets.Segment
		covered int64
		u       int64
		want    int64
	}{
		{name: "before every copy", segs: exact, covered: 40, u: 0, want: 0},
		{name: "inside a copied run", segs: exact, covered: 40, u: 7, want: 2},
		{name: "between copied runs: the next run's first record", segs: exact, covered: 40, u: 15, want: 20},
		{name: "at a run's first copy", segs: exact, covered: 40, u: 25, want: 20},
		{name: "inside the last run", segs: exact, covered: 40, u: 30, want: 25},
		{name: "every copy read: the records not copied yet", segs: exact, covered: 40, u: 35, want: 40},
		{name: "far beyond", segs: exact, covered: 40, u: 1000, want: 40},
		{name: "unknown coverage: after the last copied record", segs: exact, covered: -1, u: 35, want: 30},
		{name: "inside a coarse segment: its start", segs: coarse, covered: 40, u: 9, want: 0},
		{name: "past a coarse segment", segs: coarse, covered: 40, u: 17, want: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstUnread(tt.segs, tt.covered, tt.u); got != tt.want {
				t.Errorf("firstUnread(u=%d) = %d, want %d", tt.u, got, tt.want)
			}
		})
	}
}

// TestAtFirstUnread is the rule min(t1, t2): exact only when the flow's
// own exact translation t1 is at or before the first unread record t2.
func TestAtFirstUnread(t *testing.T) {
	tests := []struct {
		t1      int64
		res     offsets.Result
		t2      int64
		want    int64
		wantRes offsets.Result
	}{
		{t1: 10, res: offsets.Exact, t2: 12, want: 10, wantRes: offsets.Exact},
		{t1: 10, res: offsets.Exact, t2: 10, want: 10, wantRes: offsets.Exact},
		{t1: 10, res: offsets.Rounded, t2: 12, want: 10, wantRes: offsets.Rounded},
		{t1: 10, res: offsets.Exact, t2: 4, want: 4, wantRes: offsets.Rounded},
	}
	for _, tt := range tests {
		if got, res := atFirstUnread(tt.t1, tt.res, tt.t2); got != tt.want || res != tt.wantRes {
			t.Errorf("atFirstUnread(%d %v, %d) = %d %v, want %d %v", tt.t1, tt.res, tt.t2, got, res, tt.want, tt.wantRes)
		}
	}
}
