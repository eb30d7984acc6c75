package fastpath

import (
	"context"
	"strings"
	"testing"
)

// fakeReturned is a reverse flow's registry: pids in ours are its.
type fakeReturned struct {
	ours     map[int64]bool
	resolved map[int64]bool
}

func (r *fakeReturned) Resolve(_ context.Context, pids []int64) error {
	for _, pid := range pids {
		r.resolved[pid] = true
	}
	return nil
}

func (r *fakeReturned) Returned(pid int64) bool { return r.resolved[pid] && r.ours[pid] }

// An active-active pair: the batches the reverse flow wrote on the source
// are skipped (progress moves over them), the others are forwarded.
func TestFastPathSkipsBatchesTheReverseFlowWrote(t *testing.T) {
	x := newFastFixture(0)
	ret := &fakeReturned{ours: map[int64]bool{42: true}, resolved: map[int64]bool{}}
	x.f.deps.Provenance.Returned = ret
	resp := fetchResp("t", cat(encodeBatch(0, 2, 0, 7, nil), encodeBatch(2, 3, 0, 42, nil), encodeBatch(5, 1, 0, -1, nil)))
	if err := ret.Resolve(t.Context(), producerIDs(resp)); err != nil { // as the fetch goroutine does
		t.Fatal(err)
	}
	if !ret.resolved[7] || !ret.resolved[42] || ret.resolved[-1] {
		t.Fatalf("producerIDs gave %v, want 7 and 42 (never -1)", ret.resolved)
	}
	x.fetched(t.Context(), resp)
	var kinds []string
	for _, q := range x.fp.queue {
		kind := "copy"
		if q.skip {
			kind = "skip"
		}
		kinds = append(kinds, kind)
	}
	if got, want := strings.Join(kinds, " "), "copy skip copy"; got != want {
		t.Fatalf("queued %q, want %q (the reverse flow's batch at 2..4 skipped)", got, want)
	}
	if x.fp.next != 6 {
		t.Fatalf("next offset %d, want 6", x.fp.next)
	}
}
