package mirror

import (
	"context"
	"testing"

	"strait/internal/offsets"
)

// TestAlignedStartCompletesAStartCutShort: a start fill moves the remote
// partition's log start after each filler batch (Filler.StartAt). A node
// killed between the last batch and that move leaves a remote partition that
// ends at the source's start but still begins at 0, all of it filler. The
// next owner resumed there and left the log start at 0
// (TestPreservedOffsetsThroughKills: "the remote partition of the plain topic
// starts at 0, want 1000000"); it must complete the start instead. Copied
// records or stored progress mean the partition was copied, so it resumes.
func TestAlignedStartCompletesAStartCutShort(t *testing.T) {
	const at = 1_000_000
	for _, c := range []struct {
		name                 string
		tStart, tEnd, stored int64 // stored < 0: no stored progress
		copied               bool
		wantAt               int64
		wantBegin            bool
	}{
		{name: "empty", tStart: 0, tEnd: 0, stored: -1, wantAt: at, wantBegin: true},
		{name: "filled, log start not moved", tStart: 0, tEnd: at, stored: -1, wantAt: at, wantBegin: true},
		{name: "half filled, log start not moved", tStart: 0, tEnd: at / 2, stored: -1, wantAt: at, wantBegin: true},
		{name: "started", tStart: at, tEnd: at, stored: -1, wantAt: at},
		{name: "copying", tStart: at, tEnd: at + 10, stored: -1, wantAt: at + 10},
		{name: "copied, progress stored", tStart: 0, tEnd: at, stored: at, wantAt: at},
		{name: "copied, in the index", tStart: 0, tEnd: at, stored: -1, copied: true, wantAt: at},
	} {
		t.Run(c.name, func(t *testing.T) {
			idx := offsets.NewPartition()
			if c.copied {
				idx.Ack(0, 0)
			}
			p := newPartition(&topicState{Topic: Topic{Source: "t", Remote: "A.t", Partitions: 1}}, 0, true, idx, 100, context.Background())
			stored := map[string]map[int32]storedOffset{}
			if c.stored >= 0 {
				stored["A.t"] = map[int32]storedOffset{0: {next: c.stored}}
			}
			gotAt, begin, err := alignedStart(p, at, stored, c.tStart, c.tEnd, c.tEnd, at+100)
			if err != nil || gotAt != c.wantAt || begin != c.wantBegin {
				t.Errorf("alignedStart = %d, %v, %v; want %d, %v", gotAt, begin, err, c.wantAt, c.wantBegin)
			}
		})
	}
}
