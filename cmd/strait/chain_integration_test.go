//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"strait/internal/kafkatest"
)

// TestChainGivesReplicationHops runs a chain of three clusters X->Y->Z and
// asks Apache Kafka's own RemoteClusterUtils on Z how far X and Y are: 2 and
// 1 hops, read from the heartbeats Strait emits and replicates. The test bed
// has two clusters, so Z is cluster a again under a third alias; that is
// only the naming of a chain, and it must not loop either: X->Y never
// copies back what Y->Z wrote (Y.* topics are a cycle for it).
func TestChainGivesReplicationHops(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	// The chain's remote topics (X.* on Y, Y.* on Z) would be copied by
	// the flows of later tests under other aliases.
	deleteTopicsAtCleanup(t, a, func(name string) bool { return strings.HasPrefix(name, "Y.") })
	deleteTopicsAtCleanup(t, b, func(name string) bool { return strings.HasPrefix(name, "X.") })
	topic := kafkatest.Name(t, "chain")
	a.CreateTopic(t, topic, 2, nil)
	w := &workload{topic: topic, partitions: 2}
	w.produce(t, producer(t, a), 500)

	props := fmt.Sprintf(`clusters = X, Y, Z
X.bootstrap.servers = %s
Y.bootstrap.servers = %s
Z.bootstrap.servers = %s
X->Y.enabled = true
Y->Z.enabled = true
topics = %s|X.%s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
emit.heartbeats.interval.seconds = 1
sync.topic.acls.enabled = false
`, a.Bootstrap, b.Bootstrap, a.Bootstrap, topic, topic)
	cfg := filepath.Join(t.TempDir(), "chain.properties")
	if err := os.WriteFile(cfg, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStrait(t, "run", cfg)

	// The data goes the whole way: X's topic is Y.X.<topic> on Z.
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		if n := sum(endOffsets(t, a, "Y.X."+topic)); n != 500 {
			return fmt.Errorf("Y.X.%s on Z holds %d of 500 records", topic, n)
		}
		return nil
	})
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		v := env.MirrorClient(t, a, kafkatest.MirrorClientOpts{Hops: []string{"X", "Y"}})
		if v.ReplicationHops["X"] != 2 || v.ReplicationHops["Y"] != 1 {
			return fmt.Errorf("RemoteClusterUtils on Z: replicationHops %v, want X 2 and Y 1 (heartbeat topics %v)", v.ReplicationHops, v.HeartbeatTopics)
		}
		return nil
	})
	if n := sum(endOffsets(t, b, "X.Y.X."+topic)); n != 0 {
		t.Fatalf("X.Y.X.%s on Y holds %d records: the chain looped", topic, n)
	}
	if err := p.stop(t, syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// deleteTopicsAtCleanup deletes, when the test and its subtests are done
// (and the strait processes they started are stopped), the topics on c
// whose names match.
func deleteTopicsAtCleanup(t *testing.T, c *kafkatest.Cluster, match func(string) bool) {
	adm := c.Admin(t) // closed after this cleanup: cleanups run last-registered first
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			t.Errorf("listing topics on cluster %s to clean up: %v", c.Name, err)
			return
		}
		var names []string
		for _, name := range listed.Names() {
			if match(name) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return
		}
		if _, err := adm.DeleteTopics(ctx, names...); err != nil {
			t.Errorf("deleting %v on cluster %s: %v", names, c.Name, err)
		}
	})
}
