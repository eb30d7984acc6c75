package mirror

import (
	"testing"

	"strait/internal/index"
	"strait/internal/offsets"
)

// TestSharedMirrorPurgesOnlyFromTheFreshIndex: a shared mirror's partition
// is owned as soon as the node's share holds it, but its previous owner's
// index records are read again before it starts (refreshShared). The
// tombstones of an older incarnation, computed from the index the mirror
// read when it began, could be drained in between (the path 11):
// they may delete segments the previous owner wrote since. They are
// computed only from the index read when the partition starts.
func TestSharedMirrorPurgesOnlyFromTheFreshIndex(t *testing.T) {
	m := testMirror()
	m.deps.Share.Owns = func(string, int32) bool { return true }
	old := offsets.NewPartition()
	old.AckRange(0, 0, 10)
	tp0 := index.TP{Topic: "t", Partition: 0}
	m.index = index.NewMap(map[index.TP]*offsets.Partition{tp0: old}, map[index.TP][16]byte{tp0: {1}})
	p := testPartition()
	p.topic.ID = [16]byte{2} // a new incarnation, as the stale index sees it
	m.mu.Lock()
	owned := m.own(p)
	m.mu.Unlock()
	if !owned {
		t.Fatal("the share holds the partition, but own says no")
	}
	if _, _, changes, _ := p.drain(); len(changes) != 0 {
		t.Fatalf("a shared partition not started yet drains %d changes from the index read when the mirror began", len(changes))
	}
}
