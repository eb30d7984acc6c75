package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicReadyTimeout bounds waits for a topic to exist with leaders on every partition.
const topicReadyTimeout = 2 * time.Minute

// newClient returns a client of one cluster with opts added.
func newClient(bootstrap string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("creating a client of %s: %w", bootstrap, err)
	}
	return cl, nil
}

// createTopic creates a topic with replication factor 1 and waits until the broker serves
// every partition: metadata shows leaders a moment before the partitions accept requests
// (a produce then fails with NOT_LEADER_OR_FOLLOWER and backs off), so it waits for
// ListOffsets to answer for each of them.
func createTopic(ctx context.Context, cl *kgo.Client, offs *offsetReader, topic string, partitions int, configs map[string]*string) error {
	return createTopics(ctx, cl, offs, []string{topic}, partitions, configs)
}

// createTopicsChunk is how many topics one CreateTopics request carries.
const createTopicsChunk = 500

// createTopics creates every topic of names with the same partitions and configs, a
// request per createTopicsChunk topics, and waits until the broker serves all of them.
func createTopics(ctx context.Context, cl *kgo.Client, offs *offsetReader, names []string, partitions int, configs map[string]*string) error {
	adm := kadm.NewClient(cl)
	for chunk := range slices.Chunk(names, createTopicsChunk) {
		resps, err := adm.CreateTopics(ctx, int32(partitions), 1, configs, chunk...)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			return fmt.Errorf("creating %d topics (%q...) with %d partitions: %w", len(chunk), chunk[0], partitions, err)
		}
	}
	return waitFor(ctx, topicReadyTimeout, 20*time.Millisecond, func() error {
		ends, err := offs.endOffsetsAll(ctx, names, partitions)
		if err != nil {
			return err
		}
		for i, e := range ends {
			if e < 0 {
				return fmt.Errorf("partition %d of new topic %q is not served yet", i%partitions, names[i/partitions])
			}
		}
		return nil
	})
}

// deleteRemotes deletes the remote topics on B of ts that the copy on flow
// ("A2->B2") wrote, under MM2's default replication policy; nothing for a
// copy that never got a flow.
func (r *runner) deleteRemotes(ctx context.Context, flow string, ts topicSet) {
	alias, _, ok := strings.Cut(flow, "->")
	if !ok {
		return
	}
	remotes := make([]string, len(ts.names))
	for i, n := range ts.names {
		remotes[i] = alias + "." + n
	}
	r.deleteTopics(ctx, r.dst, remotes)
}

// deleteTopics deletes topics, a request per createTopicsChunk. It is cleanup between
// cells: a failure is logged, not returned.
func (r *runner) deleteTopics(ctx context.Context, cl *kgo.Client, names []string) {
	adm := kadm.NewClient(cl)
	for chunk := range slices.Chunk(names, createTopicsChunk) {
		resps, err := adm.DeleteTopics(ctx, chunk...)
		if err == nil {
			err = resps.Error()
		}
		if err != nil && ctx.Err() == nil {
			r.log.Warn("deleting topics after their copy failed", "topic", chunk[0], "topics", len(chunk), "err", err)
		}
	}
}

// readyPartitions returns how many partitions of topic have a leader, 0 if the topic does
// not exist yet. It sends its own Metadata request, so no client cache hides a new topic.
func readyPartitions(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("reading the metadata of topic %q: %w", topic, err)
	}
	n := 0
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			return 0, nil // UNKNOWN_TOPIC_OR_PARTITION or still being created
		}
		for _, p := range rt.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				n++
			}
		}
	}
	return n, nil
}

// offsetReader lists a topic's end offsets with one ListOffsets request to the single
// broker of a test-bed cluster, so every poll costs one round trip and no cached metadata
// can delay seeing a new topic.
type offsetReader struct {
	broker *kgo.Broker
}

func newOffsetReader(ctx context.Context, cl *kgo.Client) (*offsetReader, error) {
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("reading the brokers of the cluster: %w", err)
	}
	if len(resp.Brokers) != 1 {
		return nil, fmt.Errorf("the test bed's clusters have one broker each, this one has %d", len(resp.Brokers))
	}
	return &offsetReader{broker: cl.Broker(int(resp.Brokers[0].NodeID))}, nil
}

// endOffsets returns the high watermark of partitions 0..n-1 of topic; a partition that
// does not exist yet (or has no leader yet) reads as -1.
func (o *offsetReader) endOffsets(ctx context.Context, topic string, n int) ([]int64, error) {
	return o.endOffsetsAll(ctx, []string{topic}, n)
}

// endOffsetsAll returns the high watermarks of partitions 0..n-1 of every topic in one
// request, flattened: topic i's partition p is at i*n+p. Missing partitions read as -1.
func (o *offsetReader) endOffsetsAll(ctx context.Context, topics []string, n int) ([]int64, error) {
	return o.listOffsetsAll(ctx, topics, n, 0)
}

// stableOffsetsAll returns the last stable offsets of partitions 0..n-1 of every topic,
// flattened as endOffsetsAll: where a read_committed reader stops, before the first
// offset of the oldest open transaction. It counts transaction markers (and records of
// aborted transactions) as the high watermark does: an offset is not a record.
func (o *offsetReader) stableOffsetsAll(ctx context.Context, topics []string, n int) ([]int64, error) {
	return o.listOffsetsAll(ctx, topics, n, 1)
}

// listOffsetsAll lists the latest offsets with an isolation level: 0 read_uncommitted
// (the high watermark), 1 read_committed (the last stable offset).
func (o *offsetReader) listOffsetsAll(ctx context.Context, topics []string, n int, isolation int8) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = isolation
	index := make(map[string]int, len(topics))
	for i, topic := range topics {
		index[topic] = i
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for p := range int32(n) {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition = p
			rp.Timestamp = -1 // latest
			rp.CurrentLeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	kresp, err := o.broker.Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("listing the end offsets of %q (%d topics): %w", topics[0], len(topics), err)
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	out := make([]int64, n*len(topics))
	for i := range out {
		out[i] = -1
	}
	for _, t := range resp.Topics {
		i, ok := index[t.Topic]
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && int(p.Partition) < n {
				out[i*n+int(p.Partition)] = p.Offset
			}
		}
	}
	return out, nil
}

// committedOffsets returns the group's committed offsets for partitions 0..n-1 of every
// topic, flattened as endOffsetsAll does (-1 where nothing is committed); a group that does
// not exist yet reads as all -1.
func committedOffsets(ctx context.Context, adm *kadm.Client, group string, topics []string, n int) ([]int64, error) {
	out := make([]int64, n*len(topics))
	for i := range out {
		out[i] = -1
	}
	resp, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.CoordinatorNotAvailable) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the offsets of group %q: %w", group, err)
	}
	for i, topic := range topics {
		for p := range int32(n) {
			if o, ok := resp.Lookup(topic, p); ok && o.Err == nil {
				out[i*n+int(p)] = o.At
			}
		}
	}
	return out, nil
}

// topicDiskBytes returns the size of the logs of the topics on the cluster's disk.
func topicDiskBytes(ctx context.Context, cl *kgo.Client, topics ...string) (int64, error) {
	want := make(map[string]bool, len(topics))
	for _, t := range topics {
		want[t] = true
	}
	dirs, err := kadm.NewClient(cl).DescribeAllLogDirs(ctx, nil) // nil: every topic; a set needs its partitions listed
	if err != nil {
		return 0, fmt.Errorf("describing the log dirs of %q: %w", topics[0], err)
	}
	var n int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if want[p.Topic] {
				n += p.Size
			}
		})
	})
	return n, nil
}

// covered reports whether every partition has reached want, and sums got.
func covered(got, want []int64) (bool, int64) {
	all := len(got) == len(want)
	var sum int64
	for i, g := range got {
		if g > 0 {
			sum += g
		}
		if i < len(want) && g < want[i] {
			all = false
		}
	}
	return all, sum
}

// sum adds the non-negative values.
func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		if x > 0 {
			s += x
		}
	}
	return s
}

// waitFor calls f every interval until it returns nil, ctx ends or timeout passes; the
// error then names what f last reported.
func waitFor(ctx context.Context, timeout, interval time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not done after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
