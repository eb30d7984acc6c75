//go:build !integration

package checkpoint_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/policy"
)

// TestTranslateGroupActiveActive: A->B and B->A with the identity policy.
// orders[0] on A holds A's records at 0-49, B's copies at 50-99 and A's at
// 100-149; on B, B's own at 0-49, A's copies at 50-149. A group on A is
// placed on B at the first record it has not read, whichever cluster
// wrote it: min(t1, t2), t1 the A->B index's answer and t2 the first B
// record whose copy on A the group has not read.
func TestTranslateGroupActiveActive(t *testing.T) {
	srcAdm, id := fakeSource(t) // orders on A, group g at 50
	tp := index.TP{Topic: "orders", Partition: 0}
	forward := index.Map{
		Parts: map[index.TP]*offsets.Partition{tp: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 50, Len: 50}, {Src: 100, Tgt: 100, Len: 50}}, 150, 0)},
		IDs:   map[index.TP][16]byte{tp: id},
	}
	reverse := checkpoint.LoadedIndex{Parts: map[index.TP]*offsets.Partition{tp: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 50, Len: 50}}, 150, 0)}}
	groups := map[string]int64{"g": 50, "g20": 20, "g75": 75, "g100": 100}
	for g, at := range groups {
		commitFake(t, srcAdm, g, at)
	}
	commitFake(t, srcAdm, "strait-B", 150) // the reverse flow's progress, on A
	tgtAdm := fakeTargetWithLogStart(t, 4) // orders[0] on B starts at 4
	identity := func(alias string) policy.ReplicationPolicy {
		p, err := policy.New(policy.IdentityClass, ".", true, alias)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	defaultB, err := policy.New(policy.DefaultClass, ".", true, "B")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		reverse *checkpoint.Reverse
		group   string
		want    int64
		wantRes offsets.Result
	}{
		{name: "one-way flow: the index's answer", group: "g", want: 100, wantRes: offsets.Exact},
		{name: "B's unread records before A's next one", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: reverse}, group: "g", want: 0, wantRes: offsets.Rounded},
		{name: "inside B's copies on A", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: reverse}, group: "g75", want: 25, wantRes: offsets.Rounded},
		{name: "before B's copies on A", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: reverse}, group: "g20", want: 0, wantRes: offsets.Rounded},
		{name: "every copy of B read: exact", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: reverse}, group: "g100", want: 100, wantRes: offsets.Exact},
		{name: "no reverse index: the log start", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: checkpoint.LoadedIndex{}, TargetAdmin: tgtAdm}, group: "g", want: 4, wantRes: offsets.Rounded},
		// The reverse flow copied nothing of orders[0] (every record on B
		// came from A) but read it to 150: nothing of B's is unread.
		{name: "no reverse index, the reverse flow's progress", reverse: &checkpoint.Reverse{Policy: identity("B"), Index: checkpoint.LoadedIndex{}, TargetAdmin: tgtAdm, SourceAdmin: srcAdm, Group: "strait-B"}, group: "g", want: 100, wantRes: offsets.Exact},
		{name: "the reverse flow copies to B.orders", reverse: &checkpoint.Reverse{Policy: defaultB, Index: reverse}, group: "g", want: 100, wantRes: offsets.Exact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := flow(t)
			f.Policy, f.Reverse = identity("A"), tt.reverse
			ts, err := checkpoint.TranslateGroup(t.Context(), srcAdm, f, forward, tt.group)
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != 1 || ts[0].RemoteTopic != "orders" || ts[0].Upstream != groups[tt.group] {
				t.Fatalf("translations %+v", ts)
			}
			if got := ts[0]; got.Downstream != tt.want || got.Result != tt.wantRes || got.Status != tt.wantRes.String() {
				t.Errorf("group at %d on A: %d (%v) on B, want %d (%v)", got.Upstream, got.Downstream, got.Result, tt.want, tt.wantRes)
			}
		})
	}
}

func commitFake(t *testing.T, adm *kadm.Client, group string, at int64) {
	t.Helper()
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: at, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(t.Context(), group, offs); err != nil || resp.Error() != nil {
		t.Fatalf("committing %s: %v %v", group, err, resp.Error())
	}
}

// fakeTargetWithLogStart starts a kfake target whose orders[0] holds
// records from offset start on.
func fakeTargetWithLogStart(t *testing.T, start int64) *kadm.Client {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := client(t, c, kgo.DefaultProduceTopic("orders"))
	for range 10 {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: start})
	resp, err := adm.DeleteRecords(t.Context(), offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("deleting records before %d: %v", start, err)
	}
	return adm
}
