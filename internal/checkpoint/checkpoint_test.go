//go:build !integration

package checkpoint_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	"strait/internal/policy"
	"strait/internal/tail"
	"strait/internal/wire"
)

// readyIndex is a loaded index that is always ready.
type readyIndex struct{ index.Map }

func (readyIndex) Ready() bool { return true }

// client is kafkatest.FakeClient.
func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	return kafkatest.FakeClient(t, c, opts...)
}

// TestEmitResults checks which translations become checkpoints: exact,
// rounded-down and ahead-of-the-copy ones (a consumer re-reads, never
// skips), never one through another incarnation's index.
func TestEmitResults(t *testing.T) {
	_, srcCluster, id := fakeSourceCluster(t) // group g at 50 on orders[0]
	tp := index.TP{Topic: "orders", Partition: 0}
	// A bounded map whose old part is coarse: 50 is inside a coarse segment.
	bounded := offsets.NewPartition()
	bounded.SetStart(0)
	bounded.SetMaxSegments(4)
	for i := int64(0); i < 100; i++ {
		bounded.Ack(2*i, 1000+i) // a compaction hole after every record
	}
	if _, res := bounded.Translate(50); res != offsets.Rounded {
		t.Fatalf("setup: Translate(50) = %v, want rounded", res)
	}
	tests := []struct {
		name    string
		part    *offsets.Partition
		id      [16]byte
		want    int64 // downstream offset of the checkpoint, -1 for none
		wantRes offsets.Result
	}{
		{name: "exact", part: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 1000, Len: 100}}, 100, 0), id: id, want: 1050},
		{name: "rounded down", part: bounded, id: id, want: func() int64 { d, _ := bounded.Translate(50); return d }()},
		// The group reads on the source ahead of the copy (a consumer
		// that keeps up): it resumes after the last copied record.
		{name: "ahead of the copy", part: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 1000, Len: 40}}, 40, 0), id: id, want: 1040},
		{name: "other incarnation", part: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 1000, Len: 100}}, 100, 0), id: [16]byte{9}, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "A.checkpoints.internal"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(dst.Close)
			topics, _ := policy.NewFilter(policy.DefaultTopics(), policy.DefaultTopicsExclude())
			groups, _ := policy.NewFilter(policy.DefaultGroups(), nil)
			cfg := checkpoint.Config{
				Flow: flow(t), Groups: groups, Topic: "A.checkpoints.internal",
				EmitInterval: time.Second, RefreshGroupsInterval: time.Minute, SyncInterval: time.Minute,
			}
			cfg.Topics = topics
			idx := readyIndex{index.Map{Parts: map[index.TP]*offsets.Partition{tp: tt.part}, IDs: map[index.TP][16]byte{tp: tt.id}}}
			cp := checkpoint.New(cfg, checkpoint.Clients{
				SourceAdmin: kadm.NewClient(client(t, srcCluster)),
				TargetAdmin: kadm.NewClient(client(t, dst)),
				Producer:    client(t, dst, kgo.DefaultProduceTopic("A.checkpoints.internal")),
				Loader:      client(t, dst, tail.ClientOpts()...),
			}, idx, slog.New(slog.DiscardHandler))
			if err := cp.Tick(t.Context()); err != nil {
				t.Fatal(err)
			}
			var got []wire.Checkpoint
			if _, err := tail.ReadToEnd(t.Context(), client(t, dst, tail.ClientOpts()...), "A.checkpoints.internal", func(r *kgo.Record) {
				c, err := wire.DecodeCheckpoint(r.Key, r.Value)
				if err != nil {
					t.Errorf("bad checkpoint: %v", err)
				}
				got = append(got, c)
			}); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want < 0 && len(got) != 0:
				t.Fatalf("checkpoints %+v, want none", got)
			case tt.want >= 0 && (len(got) != 1 || got[0].DownstreamOffset != tt.want || got[0].UpstreamOffset != 50 || got[0].Topic != "A.orders"):
				t.Fatalf("checkpoints %+v, want one at downstream %d", got, tt.want)
			}
		})
	}
}
