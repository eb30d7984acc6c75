//go:build integration

package kafkatest_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/wire"
)

// topicGoneTimeout bounds the wait for deleted topics to leave the metadata.
const topicGoneTimeout = 30 * time.Second

// record is one key and value to write.
type record struct{ key, value []byte }

func heartbeat(t *testing.T, h wire.Heartbeat) record {
	t.Helper()
	key, err := h.AppendKey(nil)
	if err != nil {
		t.Fatalf("encoding heartbeat %+v: %v", h, err)
	}
	return record{key: key, value: h.AppendValue(nil)}
}

func checkpoint(t *testing.T, c wire.Checkpoint) record {
	t.Helper()
	key, err := c.AppendKey(nil)
	if err != nil {
		t.Fatalf("encoding the key of checkpoint %+v: %v", c, err)
	}
	value, err := c.AppendValue(nil)
	if err != nil {
		t.Fatalf("encoding the value of checkpoint %+v: %v", c, err)
	}
	return record{key: key, value: value}
}

// writeMM2Topic creates topic on c the way MM2 creates its internal topics (one
// partition, compacted), writes recs to it in order with franz-go, and deletes the topic
// when the test ends, so the cluster is as empty as before for the next test.
func writeMM2Topic(t *testing.T, c *kafkatest.Cluster, topic string, recs ...record) {
	t.Helper()
	compact := "compact"
	c.CreateTopic(t, topic, 1, map[string]*string{"cleanup.policy": &compact})
	t.Cleanup(func() { deleteTopics(t, c, topic) })
	if len(recs) == 0 {
		return
	}
	cl := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var krecs []*kgo.Record
	for _, r := range recs {
		krecs = append(krecs, &kgo.Record{Topic: topic, Partition: 0, Key: r.key, Value: r.value})
	}
	if err := cl.ProduceSync(t.Context(), krecs...).FirstErr(); err != nil {
		t.Fatalf("writing %d records to %q on cluster %s: %v", len(recs), topic, c.Name, err)
	}
}

// deleteTopics deletes topics from c and waits until the metadata no longer lists them. It
// runs in cleanups, so it uses its own context rather than the test's, which has ended.
func deleteTopics(t *testing.T, c *kafkatest.Cluster, topics ...string) {
	t.Helper()
	if len(topics) == 0 {
		return
	}
	adm := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), topicGoneTimeout)
	defer cancel()
	resps, err := adm.DeleteTopics(ctx, topics...)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Errorf("deleting topics %v from cluster %s: %v", topics, c.Name, err)
		return
	}
	kafkatest.Eventually(t, topicGoneTimeout, func() error {
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		for _, topic := range topics {
			if listed.Has(topic) {
				return fmt.Errorf("topic %q still listed on cluster %s after its deletion", topic, c.Name)
			}
		}
		return nil
	})
}

// equalView compares views treating nil and empty lists and maps alike.
func equalView(a, b kafkatest.MirrorClientView) bool {
	return slices.Equal(a.HeartbeatTopics, b.HeartbeatTopics) &&
		slices.Equal(a.CheckpointTopics, b.CheckpointTopics) &&
		slices.Equal(a.UpstreamClusters, b.UpstreamClusters) &&
		maps.Equal(a.ReplicationHops, b.ReplicationHops) &&
		maps.EqualFunc(a.TranslateOffsets, b.TranslateOffsets, maps.Equal)
}

func TestMirrorClientEmptyCluster(t *testing.T) {
	// A unique alias keeps this test's checkpoints topic apart from every other's.
	alias := kafkatest.Name(t, "E")
	group := kafkatest.Name(t, "group-")
	checkpoints := alias + ".checkpoints.internal"
	tests := []struct {
		name   string
		topics map[string][]record // topic -> records, written before the probe
		opts   kafkatest.MirrorClientOpts
		want   kafkatest.MirrorClientView
	}{
		{
			name: "no MM2 topics",
			opts: kafkatest.MirrorClientOpts{Hops: []string{"A"}},
			want: kafkatest.MirrorClientView{ReplicationHops: map[string]int{"A": -1}},
		},
		{
			// Java waits 60 s and fails when the checkpoints topic is missing, so the
			// unknown group is asked of a topic that holds another group's checkpoint.
			name: "unknown group",
			topics: map[string][]record{checkpoints: {checkpoint(t, wire.Checkpoint{
				Group: "other-" + group, Topic: alias + ".t", UpstreamOffset: 7, DownstreamOffset: 7,
			})}},
			opts: kafkatest.MirrorClientOpts{
				Translate: []kafkatest.Translation{{RemoteAlias: alias, Group: group}},
				Timeout:   10 * time.Second,
			},
			want: kafkatest.MirrorClientView{
				CheckpointTopics: []string{checkpoints},
				TranslateOffsets: map[string]map[string]int64{alias + ":" + group: {}},
			},
		},
	}
	b := env.Clusters[len(env.Clusters)-1]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, topic := range slices.Sorted(maps.Keys(tc.topics)) {
				writeMM2Topic(t, b, topic, tc.topics[topic]...)
			}
			got := env.MirrorClient(t, b, tc.opts)
			if !equalView(got, tc.want) {
				if env.External() {
					t.Skipf("cluster %s (%s) is not free of MM2 topics: RemoteClusterUtils sees %+v, want %+v", b.Name, b.Bootstrap, got, tc.want)
				}
				t.Errorf("RemoteClusterUtils on cluster %s sees %+v, want %+v", b.Name, got, tc.want)
			}
		})
	}
}

// TestMirrorClientReadsGoRecords writes MM2's topics with Strait's codecs and checks that
// Apache Kafka's RemoteClusterUtils reads them as MM2's own.
func TestMirrorClientReadsGoRecords(t *testing.T) {
	// A non-ASCII group checks the string encoding and the probe's JSON escaping too.
	group := "grüppe-" + kafkatest.Name(t, "g")
	remote := "A." + kafkatest.Name(t, "t")
	remoteUnderscore := "A_" + kafkatest.Name(t, "t")
	hb := heartbeat(t, wire.Heartbeat{SourceAlias: "A", TargetAlias: "B", Timestamp: 1700000000000})
	upstreamHB := heartbeat(t, wire.Heartbeat{SourceAlias: "C", TargetAlias: "A", Timestamp: 1700000000000})
	// Translation keeps the last checkpoint of each partition, of the asked group only.
	checkpoints := func(topic string) []record {
		return []record{
			checkpoint(t, wire.Checkpoint{Group: group, Topic: topic, Partition: 0, UpstreamOffset: 1000, DownstreamOffset: 998}),
			checkpoint(t, wire.Checkpoint{Group: "other-" + group, Topic: topic, Partition: 0, UpstreamOffset: 5, DownstreamOffset: 5}),
			checkpoint(t, wire.Checkpoint{Group: group, Topic: topic, Partition: 1, UpstreamOffset: 42, DownstreamOffset: 40, Metadata: "m€ta"}),
			checkpoint(t, wire.Checkpoint{Group: group, Topic: topic, Partition: 0, UpstreamOffset: 2000, DownstreamOffset: 1990}),
		}
	}
	tests := []struct {
		name   string
		topics map[string][]record
		opts   kafkatest.MirrorClientOpts
		want   kafkatest.MirrorClientView
	}{
		{
			name: "direct upstream",
			topics: map[string][]record{
				"heartbeats":             {hb},
				"A.heartbeats":           {upstreamHB},
				"A.checkpoints.internal": checkpoints(remote),
			},
			opts: kafkatest.MirrorClientOpts{
				Hops:      []string{"A", "Z"},
				Translate: []kafkatest.Translation{{RemoteAlias: "A", Group: group}},
			},
			want: kafkatest.MirrorClientView{
				HeartbeatTopics:  []string{"A.heartbeats", "heartbeats"},
				CheckpointTopics: []string{"A.checkpoints.internal"},
				UpstreamClusters: []string{"A"},
				ReplicationHops:  map[string]int{"A": 1, "Z": -1},
				TranslateOffsets: map[string]map[string]int64{"A:" + group: {remote + "-0": 1990, remote + "-1": 40}},
			},
		},
		{
			name: "two hops",
			topics: map[string][]record{
				"heartbeats":     {hb},
				"C.A.heartbeats": {upstreamHB},
			},
			opts: kafkatest.MirrorClientOpts{Hops: []string{"A", "C"}},
			want: kafkatest.MirrorClientView{
				HeartbeatTopics:  []string{"C.A.heartbeats", "heartbeats"},
				UpstreamClusters: []string{"A", "C"},
				ReplicationHops:  map[string]int{"A": 2, "C": 1},
			},
		},
		{
			// With the separator the internal topics follow it too (KIP-690).
			name: "separator underscore",
			topics: map[string][]record{
				"heartbeats":             {hb},
				"A_heartbeats":           {upstreamHB},
				"A_checkpoints_internal": checkpoints(remoteUnderscore),
			},
			opts: kafkatest.MirrorClientOpts{
				Separator: "_",
				Hops:      []string{"A"},
				Translate: []kafkatest.Translation{{RemoteAlias: "A", Group: group}},
			},
			want: kafkatest.MirrorClientView{
				HeartbeatTopics:  []string{"A_heartbeats", "heartbeats"},
				CheckpointTopics: []string{"A_checkpoints_internal"},
				UpstreamClusters: []string{"A"},
				ReplicationHops:  map[string]int{"A": 1},
				TranslateOffsets: map[string]map[string]int64{"A:" + group: {remoteUnderscore + "-0": 1990, remoteUnderscore + "-1": 40}},
			},
		},
	}
	// The topic names are fixed by MM2, so this test creates (and then deletes) topics such
	// as "heartbeats" that must not exist yet: CreateTopic fails clearly if they do.
	b := env.Clusters[len(env.Clusters)-1]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, topic := range slices.Sorted(maps.Keys(tc.topics)) {
				writeMM2Topic(t, b, topic, tc.topics[topic]...)
			}
			got := env.MirrorClient(t, b, tc.opts)
			if !equalView(got, tc.want) {
				t.Errorf("RemoteClusterUtils on cluster %s sees\n%+v\nwant\n%+v", b.Name, got, tc.want)
			}
		})
	}
}

func TestJavaProgram(t *testing.T) {
	tests := []struct {
		name    string
		program string
	}{
		{name: "probe", program: "MirrorClientProbe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := env.JavaProgram(t, tc.program)
			second := env.JavaProgram(t, tc.program)
			if first != second {
				t.Errorf("JavaProgram(%q) built the program twice: %+v and %+v", tc.program, first, second)
			}
			if first.Class != tc.program {
				t.Errorf("JavaProgram(%q).Class = %q, want %q", tc.program, first.Class, tc.program)
			}
		})
	}
}
