//go:build integration

package mirror_test

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/kafkatest"
)

// rawBatches reads the header of every batch of topic's partition on c, as
// stored (attributes, producer fields, timestamps), with raw fetches.
func rawBatches(t *testing.T, c *kafkatest.Cluster, topic string, partition int32) []batch.Header {
	t.Helper()
	cl := c.Client(t)
	md, err := kadm.NewClient(cl).ListTopics(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []batch.Header
	for offset := int64(0); ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 64<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, md[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partition, offset, 64<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := cl.Request(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
			t.Fatalf("fetching %s[%d] at %d: %v", topic, partition, offset, err)
		}
		start := offset
		for rest := got.RecordBatches; len(rest) > 0; {
			h, err := batch.Parse(rest)
			if errors.Is(err, batch.ErrPartial) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rest = rest[h.Size():]
			if h.NextOffset() > offset {
				out = append(out, h)
				offset = h.NextOffset()
			}
		}
		if offset == start || offset >= got.HighWatermark {
			return out
		}
	}
}
