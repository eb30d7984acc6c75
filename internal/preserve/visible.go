package preserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

// fetchBytes bounds one fetch of firstVisible: a filler batch of MaxFillerRecords is
// under 1 MiB.
const fetchBytes = 8 << 20

// firstVisible reads offsets from to to of a partition as a read_committed consumer
// would, and returns the offset of the first record one reads there (ok), none when
// all of it is filler, markers or other aborted data. It reads batch headers only, so
// a million offsets of filler cost one fetch, and it judges them as the fast path
// judges the source's (batch.Filter). Offsets at or past the partition's last stable
// offset are an error: a transaction open there may still commit.
func firstVisible(ctx context.Context, cl *kgo.Client, topic string, partition int32, from, to int64) (offset int64, ok bool, err error) {
	md, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err == nil {
		err = md.Error()
	}
	if err != nil {
		return 0, false, fmt.Errorf("describing %s on the target: %w", topic, err)
	}
	p, found := md[topic].Partitions[partition]
	if !found {
		return 0, false, fmt.Errorf("%s has no partition %d on the target", topic, partition)
	}
	for offset := from; offset < to; {
		rp, err := fetchCommitted(ctx, cl.Broker(int(p.Leader)), topic, md[topic].ID, partition, offset)
		if err != nil {
			return 0, false, fmt.Errorf("reading %s[%d] at %d on the target: %w", topic, partition, offset, err)
		}
		if rp.LastStableOffset < to {
			return 0, false, fmt.Errorf("%s[%d] holds a transaction still open at offsets %d to %d: its records may still be committed", topic, partition, rp.LastStableOffset, to-1)
		}
		aborted := make([]batch.AbortedTxn, len(rp.AbortedTransactions))
		for i, a := range rp.AbortedTransactions {
			aborted[i] = batch.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
		}
		filter := batch.NewFilter(aborted)
		start := offset
		for rest := rp.RecordBatches; len(rest) > 0 && offset < to; {
			h, err := batch.Parse(rest)
			if errors.Is(err, batch.ErrPartial) {
				break
			}
			if err != nil {
				return 0, false, fmt.Errorf("reading %s[%d] at %d on the target: %w", topic, partition, offset, err)
			}
			b := rest[:h.Size()]
			rest = rest[h.Size():]
			if h.NextOffset() <= offset {
				continue // before the fetch offset: a batch the broker returns whole
			}
			if !filter.Skip(b, h) && h.NumRecords > 0 {
				return max(h.BaseOffset, offset), true, nil
			}
			offset = h.NextOffset()
		}
		if offset == start {
			return 0, false, fmt.Errorf("reading %s[%d] on the target: no batch at offset %d, below its end %d", topic, partition, offset, to)
		}
	}
	return 0, false, nil
}

// fetchCommitted fetches one partition at offset with read_committed, from br, its
// leader.
func fetchCommitted(ctx context.Context, br *kgo.Broker, topic string, id kadm.TopicID, partition int32, offset int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionEpoch, req.IsolationLevel = -1, fetchBytes, -1, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partition, offset, fetchBytes, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, br)
	if err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("the answer holds no such partition")
	}
	got := &resp.Topics[0].Partitions[0]
	return got, kerr.ErrorForCode(got.ErrorCode)
}
