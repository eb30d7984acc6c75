package kafkatest

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

// RawBatches reads the header of every batch of a partition of topic on c, from its log
// start to its high watermark, as stored: data batches committed, aborted or open, and
// control batches (markers), with their attributes, producer fields and timestamps.
func (c *Cluster) RawBatches(t testing.TB, topic string, partition int32) []batch.Header {
	t.Helper()
	// Its own client, closed on return: tests call this in polling loops.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Seeds()...))
	if err != nil {
		t.Fatalf("creating a client of cluster %s: %v", c.Name, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	md, err := adm.ListTopics(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(t.Context(), topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		t.Fatalf("listing the start of %s on cluster %s: %v", topic, c.Name, err)
	}
	first, _ := starts.Lookup(topic, partition)
	var out []batch.Header
	for offset := first.Offset; ; {
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
			t.Fatalf("fetching %s[%d] at %d on cluster %s: %v", topic, partition, offset, c.Name, err)
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
