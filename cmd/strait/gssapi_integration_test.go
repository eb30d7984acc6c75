//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// TestGSSAPITargetThroughAbortsAndRebalances copies to a Kerberos target in
// exactly-once mode through an aborted transaction (the test fences the
// node's transactional producer), then through a rebalance (a second node
// joins the flow's group). Every forwarder run ends with both, and closes
// the fast path's produce clients: they shared the target client's SASL
// mechanism, whose Close destroys the Kerberos credentials, so after the
// first abort or rebalance no new connection of the flow could log in and
// the copy stalled (the path 1). Every record is copied once.
func TestGSSAPITargetThroughAbortsAndRebalances(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "krb")
	a.CreateTopic(t, topic, 4, nil)
	w := &workload{topic: topic, partitions: 4}
	src := producer(t, a)
	w.produce(t, src, 2000)

	plaintext := secureSide{name: "PLAINTEXT", props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
		return map[string]string{"bootstrap.servers": c.Bootstrap}
	}}
	cfg := fmt.Sprintf(`clusters = A, B
%s%sA->B.enabled = true
A->B.topics = %s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
refresh.topics.interval.seconds = 1
emit.heartbeats.enabled = false
strait.exactly.once = true
B.producer.transaction.timeout.ms = 10000
B.session.timeout.ms = 6000
B.heartbeat.interval.ms = 1000
B.rebalance.timeout.ms = 20000
strait.api.listen = 127.0.0.1:0
`, block(t, "A", plaintext, a), block(t, "B", gssapi, b), topic)
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := "A." + topic
	n1 := startStrait(t, "run", "--shutdown-timeout", "10s", path)
	waitCaughtUp(t, topic, remote, 2*time.Minute)

	// Fence the node's transactional producer: its next request fails and
	// the attempt aborts and starts again, with new produce clients.
	b.FenceTransactionalID(t, "strait-A-0")
	w.produce(t, src, 2000)
	kafkatest.Eventually(t, time.Minute, func() error {
		if !strings.Contains(n1.out.String(), "exactly-once mode: aborted the transaction") {
			return fmt.Errorf("the node has not aborted a transaction yet")
		}
		return nil
	})
	waitCaughtUp(t, topic, remote, 2*time.Minute)

	// A second node: the first gives partitions up and runs a new mirror.
	n2 := startStrait(t, "run", "--shutdown-timeout", "10s", path)
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		if !strings.Contains(n1.out.String(), `released partitions`) || !strings.Contains(n2.out.String(), `owning partitions`) {
			return fmt.Errorf("no rebalance yet")
		}
		return nil
	})
	w.produce(t, src, 2000)
	waitCaughtUp(t, topic, remote, 2*time.Minute)

	for _, p := range []*process{n2, n1} {
		if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Fatalf("strait exited with %v after SIGTERM", err)
		}
	}
	for _, rep := range compare(t, topic, remote, kgo.ReadCommitted()) {
		if rep.Duplicates != 0 || rep.Lost != 0 {
			t.Errorf("partition %d: %d lost, %d duplicates", rep.Partition, rep.Lost, rep.Duplicates)
		}
	}
}
