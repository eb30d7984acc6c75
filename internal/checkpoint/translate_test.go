//go:build !integration

package checkpoint_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"strait/internal/checkpoint"
	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/policy"
)

// fakeSource starts a kfake source with topic "orders" (one partition) and
// a group "g" committed at 50; it returns an admin client and the topic ID.
func fakeSource(t *testing.T) (*kadm.Client, [16]byte) {
	t.Helper()
	adm, _, id := fakeSourceCluster(t)
	return adm, id
}

func fakeSourceCluster(t *testing.T) (*kadm.Client, *kfake.Cluster, [16]byte) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(t.Context(), "orders")
	if err != nil || td["orders"].Err != nil {
		t.Fatalf("describing orders: %v %v", err, td["orders"].Err)
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 50, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(t.Context(), "g", offs); err != nil || resp.Error() != nil {
		t.Fatalf("committing: %v %v", err, resp.Error())
	}
	return adm, c, td["orders"].ID
}

func flow(t *testing.T) checkpoint.Flow {
	t.Helper()
	pol, err := policy.New(policy.DefaultClass, ".", true, "A")
	if err != nil {
		t.Fatal(err)
	}
	topics, err := policy.NewFilter(policy.DefaultTopics(), policy.DefaultTopicsExclude())
	if err != nil {
		t.Fatal(err)
	}
	return checkpoint.Flow{Source: "A", Target: "B", Policy: pol, Topics: topics}
}

// TestTranslateGroupIncarnation checks that a group of a source topic that
// was recreated is not translated through the old incarnation's index.
func TestTranslateGroupIncarnation(t *testing.T) {
	adm, id := fakeSource(t)
	tp := index.TP{Topic: "orders", Partition: 0}
	tests := []struct {
		name    string
		indexID [16]byte
		want    int64
		wantRes offsets.Result
	}{
		{name: "index of the current incarnation", indexID: id, want: 1050},
		{name: "index of a deleted incarnation", indexID: [16]byte{0xde, 0xad}, want: -1, wantRes: offsets.OtherIncarnation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := index.Map{
				Parts: map[index.TP]*offsets.Partition{tp: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 1000, Len: 100}}, 100, 0)},
				IDs:   map[index.TP][16]byte{tp: tt.indexID},
			}
			ts, err := checkpoint.TranslateGroup(t.Context(), adm, flow(t), idx, "g")
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != 1 {
				t.Fatalf("translations %+v", ts)
			}
			if got := ts[0]; got.Downstream != tt.want || got.Result != tt.wantRes || got.RemoteTopic != "A.orders" || got.Status != tt.wantRes.String() {
				t.Fatalf("got %+v, want downstream %d, %v", got, tt.want, tt.wantRes)
			}
		})
	}
}

// TestTranslateGroupUnknownTopic checks that an offset of a topic the source
// does not describe (deleted while its offsets were read) gets no
// translation, even from an index that has segments for it.
func TestTranslateGroupUnknownTopic(t *testing.T) {
	_, c, _ := fakeSourceCluster(t)
	// The source answers a describe of "orders" alone as if it were gone.
	c.ControlKey(kmsg.Metadata.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.MetadataRequest)
		if len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != "orders" {
			return nil, nil, false
		}
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		host, port, _ := net.SplitHostPort(c.ListenAddrs()[0])
		p, _ := strconv.Atoi(port)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: host, Port: int32(p)}}
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr("orders")
		topic.ErrorCode = kerr.UnknownTopicOrPartition.Code
		resp.Topics = append(resp.Topics, topic)
		return resp, nil, true
	})
	// A new client (the first one cached the topic's metadata), and one
	// that fetches offsets by topic name, as Kafka before 4.0 does: by ID,
	// it would resolve and cache the ID before the describe.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	tp := index.TP{Topic: "orders", Partition: 0}
	idx := index.Map{
		Parts: map[index.TP]*offsets.Partition{tp: offsets.Restore([]offsets.Segment{{Src: 0, Tgt: 0, Len: 100}}, 100, 0)},
		IDs:   map[index.TP][16]byte{tp: {1}},
	}
	ts, err := checkpoint.TranslateGroup(t.Context(), adm, flow(t), idx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Downstream != -1 || ts[0].Result != offsets.UnknownTopic {
		t.Fatalf("translations %+v", ts)
	}
}
