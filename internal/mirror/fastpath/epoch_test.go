package fastpath

import (
	"strings"
	"testing"
	"time"
)

// TestFetchCarriesTheLeaderEpochs: fetches name the source leader's epoch
// as the metadata gives it (KIP-320), so a broker that is not the leader
// of that epoch any more, or not yet, refuses them instead of answering
// from a log that may be truncated; and the epoch of the last batch
// fetched, so the leader says where its log diverged from what was
// fetched. They sent -1 for both (the path 12).
func TestFetchCarriesTheLeaderEpochs(t *testing.T) {
	x := newFastFixture(0)
	x.f.srcMeta["t"] = topicMeta{leaders: []int32{1}, epochs: []int32{5}}
	x.f.dstMeta["A.t"] = topicMeta{leaders: []int32{1}}
	x.f.share, x.f.sharesAt = 1<<30, time.Now()
	req, parts, _, _ := x.f.fetchRequest([]tp{{"t", 0}}, time.Now(), fetchSlots{})
	if len(parts) != 1 {
		t.Fatalf("%d partitions in the fetch, want 1", len(parts))
	}
	rp := req.Topics[0].Partitions[0]
	if rp.CurrentLeaderEpoch != 5 || rp.LastFetchedEpoch != -1 {
		t.Fatalf("first fetch: current leader epoch %d, last fetched epoch %d; want 5, -1", rp.CurrentLeaderEpoch, rp.LastFetchedEpoch)
	}
	x.fp.fetching = false
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 3, 0, -1, nil)), 0) // leader epoch 1
	req, _, _, _ = x.f.fetchRequest([]tp{{"t", 0}}, time.Now(), fetchSlots{})
	if rp := req.Topics[0].Partitions[0]; rp.CurrentLeaderEpoch != 5 || rp.LastFetchedEpoch != 1 {
		t.Fatalf("next fetch: current leader epoch %d, last fetched epoch %d; want 5, 1", rp.CurrentLeaderEpoch, rp.LastFetchedEpoch)
	}
}

// TestDivergedSourceLogStops: after a leader change the new leader answers
// that the source's log diverged from what was fetched (an unclean leader
// election truncated it): the records fetched past the point of divergence
// are gone from the source, and those copied are on the target only. The
// partition stops and names the range, instead of fetching on.
func TestDivergedSourceLogStops(t *testing.T) {
	x := newFastFixture(0)
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 10, 0, -1, nil)), 0)
	resp := fetchResp("t", nil)
	rp := &resp.Topics[0].Partitions[0]
	rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = 1, 6
	x.fetched(t.Context(), resp, 10)
	err := x.p.Failed()
	if err == nil || !strings.Contains(err.Error(), "diverged at offset 6") || !strings.Contains(err.Error(), "6..9") {
		t.Fatalf("partition error %v, want the divergence at 6 and the records 6..9 named", err)
	}
}
