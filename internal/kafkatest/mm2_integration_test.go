//go:build integration

package kafkatest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/wire"
)

// mm2ReplicateTimeout covers MirrorMaker 2's start (its Connect herders join, create their
// topics and start the connectors) and the replication of a few hundred records.
const mm2ReplicateTimeout = 3 * time.Minute

// writeMM2Config writes a minimal mm2.properties replicating topic from a to b (aliases
// "a" and "b") for single-broker clusters, and returns its path.
func writeMM2Config(t *testing.T, a, b *kafkatest.Cluster, topic, groups string) string {
	t.Helper()
	cfg := strings.Join([]string{
		"clusters = a, b",
		"a.bootstrap.servers = " + a.Bootstrap,
		"b.bootstrap.servers = " + b.Bootstrap,
		"a->b.enabled = true",
		"topics = " + topic,
		"groups = " + groups,
		"tasks.max = 1",
		"offset.flush.interval.ms = 1000",
		"replication.factor = 1",
		"checkpoints.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1",
		"offset.storage.replication.factor = 1",
		"status.storage.replication.factor = 1",
		"config.storage.replication.factor = 1",
		"sync.topic.acls.enabled = false",
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path
}

// listTopics returns the topic names on c.
func listTopics(t *testing.T, c *kafkatest.Cluster) []string {
	t.Helper()
	listed, err := c.Admin(t).ListTopics(t.Context())
	if err != nil {
		t.Fatalf("listing the topics of cluster %s: %v", c.Name, err)
	}
	return listed.Names()
}

// deleteNewTopics deletes, when the test ends, the topics on c that are not in before:
// the ones the test and its MM2 created, so later tests see the cluster as it was. It
// must be registered before StartMM2, so it runs after MM2 has stopped.
func deleteNewTopics(t *testing.T, c *kafkatest.Cluster) {
	t.Helper()
	if env.External() {
		return // others may create topics on shared clusters meanwhile
	}
	before := listTopics(t, c)
	t.Cleanup(func() {
		listed, err := c.Admin(t).ListTopics(context.Background())
		if err != nil {
			t.Errorf("listing the topics of cluster %s to delete the test's: %v", c.Name, err)
			return
		}
		var created []string
		for _, topic := range listed.Names() {
			if !slices.Contains(before, topic) {
				created = append(created, topic)
			}
		}
		deleteTopics(t, c, created...)
	})
}

// replicated returns nil once topic on c has want records in all.
func replicated(ctx context.Context, c *kafkatest.Cluster, adm *kadm.Client, topic string, want int64) error {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("listing the end offsets of %q on cluster %s: %w", topic, c.Name, err)
	}
	var got int64
	ends.Each(func(o kadm.ListedOffset) { got += o.Offset })
	if got != want {
		return fmt.Errorf("%q on cluster %s holds %d of %d records", topic, c.Name, got, want)
	}
	return nil
}

// TestMM2Replicates runs Apache MirrorMaker 2 from a to b and checks what it leaves on b:
// the records, its heartbeats and its Connect offsets, in the formats Strait writes too.
func TestMM2Replicates(t *testing.T) {
	tests := []struct {
		name       string
		partitions int32
		perPart    int
	}{
		{name: "two partitions", partitions: 2, perPart: 50},
	}
	// With one test bed cluster, a and b are the same cluster: MM2 then replicates
	// topic into a.topic beside it, which tests the same.
	a, b := env.Clusters[0], env.Clusters[len(env.Clusters)-1]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topic := kafkatest.Name(t, "mm2-")
			remote := "a." + topic
			deleteNewTopics(t, a)
			if b != a {
				deleteNewTopics(t, b)
			}
			a.CreateTopic(t, topic, tc.partitions, nil)
			want := produceN(t, a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), topic, tc.partitions, tc.perPart)

			mm2 := env.StartMM2(t, writeMM2Config(t, a, b, topic, kafkatest.Name(t, "group-")))
			if mm2.Pid() <= 0 {
				t.Fatalf("MM2.Pid() = %d, want the JVM's pid", mm2.Pid())
			}
			adm := b.Admin(t)
			total := int64(tc.partitions) * int64(tc.perPart)
			kafkatest.Eventually(t, mm2ReplicateTimeout, func() error {
				select {
				case <-mm2.Done():
					t.Fatalf("MirrorMaker 2 exited while replicating: %v", mm2.Err())
				default:
				}
				return replicated(t.Context(), b, adm, remote, total)
			})
			if got := values(b.ReadAll(t, remote, kgo.ReadUncommitted())); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("MM2 replicated %q to %q as %v, want %v", topic, remote, got, want)
			}
			kafkatest.Eventually(t, 30*time.Second, func() error { return hasHeartbeat(t, b, "a", "b") })

			mm2.Stop(t)
			if !strings.Contains(mm2.Log(), "MirrorMaker") {
				t.Errorf("MM2.Log() (%d bytes) does not mention MirrorMaker", len(mm2.Log()))
			}
			checkSourceOffsets(t, b, "a", topic, tc.partitions, int64(tc.perPart-1))
		})
	}
}

// hasHeartbeat reports whether the heartbeats topic on c holds a heartbeat from source to
// target, decoding every record with Strait's codec on the way.
func hasHeartbeat(t *testing.T, c *kafkatest.Cluster, source, target string) error {
	t.Helper()
	listed, err := c.Admin(t).ListTopics(t.Context(), "heartbeats")
	if err != nil {
		return err
	}
	if !listed.Has("heartbeats") {
		return fmt.Errorf("no heartbeats topic on cluster %s yet", c.Name)
	}
	var seen []string
	for _, part := range c.ReadAll(t, "heartbeats", kgo.ReadUncommitted()) {
		for _, r := range part {
			h, err := wire.DecodeHeartbeat(r.Key, r.Value)
			if err != nil {
				t.Fatalf("MM2's heartbeat at offset %d of %q on cluster %s does not decode: %v", r.Offset, "heartbeats", c.Name, err)
			}
			if h.SourceAlias == source && h.TargetAlias == target {
				if !r.Timestamp.Equal(time.UnixMilli(h.Timestamp)) {
					t.Errorf("heartbeat %+v has record timestamp %v, want its own timestamp", h, r.Timestamp)
				}
				return nil
			}
			seen = append(seen, h.SourceAlias+"->"+h.TargetAlias)
		}
	}
	return fmt.Errorf("no heartbeat %s->%s in %q on cluster %s; seen %v", source, target, "heartbeats", c.Name, seen)
}

// checkSourceOffsets checks that MM2 left its progress in mm2-offsets.<alias>.internal on c
// under keys byte-equal to wire.SourceOffsetKey, in the partition the Java default
// partitioner picks, with value wantOffset (the last replicated source offset).
func checkSourceOffsets(t *testing.T, c *kafkatest.Cluster, alias, topic string, partitions int32, wantOffset int64) {
	t.Helper()
	offsetsTopic := "mm2-offsets." + alias + ".internal"
	listed, err := c.Admin(t).ListTopics(t.Context(), offsetsTopic)
	if err != nil {
		t.Fatalf("listing %q on cluster %s: %v", offsetsTopic, c.Name, err)
	}
	if !listed.Has(offsetsTopic) {
		t.Fatalf("MirrorMaker 2 left no %q on cluster %s", offsetsTopic, c.Name)
	}
	parts := c.ReadAll(t, offsetsTopic, kgo.ReadUncommitted())
	for p := range partitions {
		key := wire.SourceOffsetKey{Connector: wire.SourceConnector, Cluster: alias, Topic: topic, Partition: p}.Marshal()
		var last *kgo.Record
		var similar []string
		for _, recs := range parts {
			for _, r := range recs {
				switch {
				case bytes.Equal(r.Key, key):
					last = r
				case bytes.Contains(r.Key, []byte(topic)):
					similar = append(similar, string(r.Key))
				}
			}
		}
		if last == nil {
			t.Errorf("no record with key %s in %q on cluster %s; keys naming the topic: %q", key, offsetsTopic, c.Name, similar)
			continue
		}
		if want := wire.DefaultPartition(key, int32(len(parts))); last.Partition != want {
			t.Errorf("key %s is in partition %d of %q, want %d (murmur2 of %d partitions)", key, last.Partition, offsetsTopic, want, len(parts))
		}
		got, ok, err := wire.DecodeConnectOffsetValue(last.Value)
		if err != nil || !ok || got != wantOffset {
			t.Errorf("key %s has value %q in %q (offset %d, ok %v, err %v), want offset %d", key, last.Value, offsetsTopic, got, ok, err, wantOffset)
		}
	}
}
