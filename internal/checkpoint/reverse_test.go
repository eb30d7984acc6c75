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

// TestReverseIndexReadMidDrainNeverSkips: a reader of the reverse flow's
// index sees one Drain's records one at a time, and a checkpoint may be
// computed between them. Whatever prefix it saw, its first unread record
// must not be later than the whole drain gives: a later one skips records
// on failover. The drain here grows the first segment and adds a second
// one past skipped offsets, and moves the coverage to 300 (seen failing in
// internal/checkpoint TestActiveActiveFailoverSkipsNothing: a checkpoint
// at 4000 on B for a group at 3900 on A skipped 100 of B's records).
func TestReverseIndexReadMidDrainNeverSkips(t *testing.T) {
	const topic = "strait-index.B.internal"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	tp := index.TP{Topic: "orders", Partition: 0}
	drain := func(p *offsets.Partition) []index.Update {
		var out []index.Update
		for _, ch := range p.Drain() {
			out = append(out, index.Update{TP: tp, Change: ch})
		}
		return out
	}
	// B's 0-99 copied to A's 0-99, persisted.
	p := offsets.NewPartition()
	p.SetStart(0)
	p.AckRange(0, 0, 100)
	p.Cover(100)
	if err := index.Write(t.Context(), cl, topic, drain(p)); err != nil {
		t.Fatal(err)
	}
	// Then B's 100-149 to A's 100-149, B's 150-199 skipped (A's copies),
	// B's 200-249 to A's 160-209, coverage 300: one drain of two records.
	p.AckRange(100, 100, 50)
	p.AckRange(200, 160, 50)
	p.Cover(300)
	updates := drain(p)
	if len(updates) < 2 {
		t.Fatalf("the drain holds %d records, want several", len(updates))
	}
	whole := p
	for k, u := range updates {
		if err := index.Write(t.Context(), cl, topic, []index.Update{u}); err != nil {
			t.Fatal(err)
		}
		m, err := index.Load(t.Context(), cl, topic)
		if err != nil {
			t.Fatal(err)
		}
		seen := m.Parts[tp]
		for at := int64(0); at <= 260; at++ {
			if got, want := checkpoint.FirstUnread(seen, at), checkpoint.FirstUnread(whole, at); got > want {
				t.Fatalf("after %d of the drain's %d records, the first unread record of a group at %d on A is %d on B, past %d: the records between are skipped (coverage %d)",
					k+1, len(updates), at, got, want, seen.Covered())
			}
		}
	}
}
