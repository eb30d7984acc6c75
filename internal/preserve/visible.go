package preserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/mirror/fastpath"
)

// fetchBytes bounds one fetch of a partitionReader: a filler batch of MaxFillerRecords
// is under 1 MiB.
const fetchBytes = 8 << 20

// tailSteps bounds how many batches CheckTail steps back over (filler, markers,
// compaction holes) to find the last record consumers read.
const tailSteps = 32

// partitionReader fetches one partition from its leader as a read_committed consumer,
// a fetch at a time, for the checks that need what a consumer reads at given offsets.
type partitionReader struct {
	cl        *kgo.Client
	br        *kgo.Broker
	topic     string
	id        kadm.TopicID
	partition int32
	side      string // "source" or "target", for errors
}

func newPartitionReader(ctx context.Context, cl *kgo.Client, side, topic string, partition int32) (*partitionReader, error) {
	md, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err == nil {
		err = md.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("describing %s on the %s: %w", topic, side, err)
	}
	p, ok := md[topic].Partitions[partition]
	if !ok {
		return nil, fmt.Errorf("%s has no partition %d on the %s", topic, partition, side)
	}
	return &partitionReader{cl: cl, br: cl.Broker(int(p.Leader)), topic: topic, id: md[topic].ID, partition: partition, side: side}, nil
}

// fetch fetches the partition at offset.
func (r *partitionReader) fetch(ctx context.Context, offset int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionEpoch, req.IsolationLevel = -1, fetchBytes, -1, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = r.topic, r.id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = r.partition, offset, fetchBytes, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, r.br)
	if err == nil && (len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1) {
		err = errors.New("the answer holds no such partition")
	}
	if err != nil {
		return nil, r.errorAt(offset, err)
	}
	got := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
		return nil, r.errorAt(offset, err)
	}
	return got, nil
}

func (r *partitionReader) errorAt(offset int64, err error) error {
	return fmt.Errorf("reading %s[%d] at %d on the %s: %w", r.topic, r.partition, offset, r.side, err)
}

// records decodes the records of rp a read_committed consumer reads from offset on.
func (r *partitionReader) records(rp *kmsg.FetchResponseTopicPartition, offset int64) ([]*kgo.Record, error) {
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: r.topic, Partition: r.partition}, rp, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		return nil, r.errorAt(offset, fp.Err)
	}
	return fp.Records, nil
}

// firstVisible reads offsets from to to of a partition as a read_committed consumer
// would, and returns the offset of the first record one reads there (ok), none when
// all of it is filler, markers or other aborted data. It reads batch headers only, so
// a million offsets of filler cost one fetch, and it judges them as the fast path
// judges the source's (batch.Filter). Offsets at or past the partition's last stable
// offset are an error: a transaction open there may still commit.
func firstVisible(ctx context.Context, cl *kgo.Client, topic string, partition int32, from, to int64) (offset int64, ok bool, err error) {
	r, err := newPartitionReader(ctx, cl, "target", topic, partition)
	if err != nil {
		return 0, false, err
	}
	for offset := from; offset < to; {
		rp, err := r.fetch(ctx, offset)
		if err != nil {
			return 0, false, err
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
				return 0, false, r.errorAt(offset, err)
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
			return 0, false, r.errorAt(offset, fmt.Errorf("no batch below its end %d", to))
		}
	}
	return 0, false, nil
}

// CheckTail compares the last record a read_committed consumer reads in remote
// partition [start, end) on dst, the offsets a partition that keeps its offsets
// resumes after, with the record at the same offset of the source partition on src. A
// record that differs (key, value or headers) is an error wrapping
// fastpath.ErrMisaligned: records landed at offsets other than their own (a foreign
// write, or a partition stopped as misaligned in an earlier run). It returns nil when
// there is nothing to compare: no record consumers read within tailSteps batches of
// end (filler, markers, compaction holes), or none left at that offset on the source
// (retention, compaction).
func CheckTail(ctx context.Context, src, dst *kgo.Client, source, remote string, partition int32, start, end int64) error {
	tr, err := newPartitionReader(ctx, dst, "target", remote, partition)
	if err != nil {
		return err
	}
	var last *kgo.Record
	for o, step := end-1, 0; o >= start && last == nil && step < tailSteps; step++ {
		rp, err := tr.fetch(ctx, o)
		if err != nil {
			return err
		}
		// The first batch answered holds o (then the records of it before o count
		// too, and the next step is before it), or begins after a hole at o.
		from, next := o, o-1
		if h, err := batch.Parse(rp.RecordBatches); err == nil && h.BaseOffset <= o {
			from, next = max(start, h.BaseOffset), h.BaseOffset-1
		}
		recs, err := tr.records(rp, from)
		if err != nil {
			return err
		}
		recs = slices.DeleteFunc(recs, func(r *kgo.Record) bool { return r.Offset >= end })
		if len(recs) > 0 {
			last = recs[len(recs)-1]
		}
		o = next
	}
	if last == nil {
		return nil
	}
	sr, err := newPartitionReader(ctx, src, "source", source, partition)
	if err != nil {
		return err
	}
	rp, err := sr.fetch(ctx, last.Offset)
	if errors.Is(err, kerr.OffsetOutOfRange) {
		return nil // below the source's log start now (retention, DeleteRecords)
	}
	if err != nil {
		return err
	}
	recs, err := sr.records(rp, last.Offset)
	if err != nil || len(recs) == 0 || recs[0].Offset != last.Offset {
		return err // nothing at that offset on the source any more
	}
	if s := recs[0]; !bytes.Equal(s.Key, last.Key) || !bytes.Equal(s.Value, last.Value) || !sameHeaders(s.Headers, last.Headers) {
		return fmt.Errorf("%s[%d] holds at offset %d another record than source %s[%d] at that offset: records landed at offsets other than their own (another producer writes it, or it was stopped as misaligned before); delete the remote topic and copy it again: %w", remote, partition, last.Offset, source, partition, fastpath.ErrMisaligned)
	}
	return nil
}

func sameHeaders(a, b []kgo.RecordHeader) bool {
	return slices.EqualFunc(a, b, func(x, y kgo.RecordHeader) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) })
}
