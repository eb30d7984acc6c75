package kafkatest

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MM2Properties returns an MM2 configuration with the flow A->B from the
// env's first cluster (alias A) to its second (alias B), replication factor
// 1 for every topic the replicator creates (single-broker clusters), a
// one-second topic refresh, and extra appended (later keys win).
func (e *Env) MM2Properties(extra string) string {
	a, b := e.Clusters[0], e.Clusters[len(e.Clusters)-1]
	return fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
%s
`, a.Bootstrap, b.Bootstrap, extra)
}

// StartOffsets returns the log start offsets of a topic's partitions. A missing topic
// has none.
func (c *Cluster) StartOffsets(t testing.TB, topic string) map[int32]int64 {
	t.Helper()
	return c.listOffsets(t, "start", c.Admin(t).ListStartOffsets, topic)
}

// EndOffsets returns the end offsets of a topic's partitions: the high
// watermarks, or with kgo.ReadCommitted() the last stable offsets. A
// missing topic has none.
func (c *Cluster) EndOffsets(t testing.TB, topic string, isolation kgo.IsolationLevel) map[int32]int64 {
	t.Helper()
	adm := c.Admin(t)
	list := adm.ListEndOffsets
	if isolation == kgo.ReadCommitted() {
		list = adm.ListCommittedOffsets
	}
	return c.listOffsets(t, "end", list, topic)
}

func (c *Cluster) listOffsets(t testing.TB, what string, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) map[int32]int64 {
	t.Helper()
	listed, err := list(t.Context(), topic)
	if err != nil {
		t.Fatalf("listing the %s offsets of %s on cluster %s: %v", what, topic, c.Name, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out
}
