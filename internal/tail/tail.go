// Package tail reads internal topics (Strait's offset index, MM2's
// checkpoints and Connect offsets): from the start to the end they had when
// the read began, then, for followers, on as records arrive.
package tail

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadToEnd consumes every partition of topic from its start up to the end
// offsets it had when the call started, calling fn for every record, and
// returns the end offsets reached. A missing topic reads as empty. cl must
// be a client created with kgo.KeepControlRecords (transaction markers tell
// where a transactional topic ends; fn never sees them) and without consume
// options, that no one else consumes with while ReadToEnd runs.
func ReadToEnd(ctx context.Context, cl *kgo.Client, topic string, fn func(*kgo.Record)) (map[int32]int64, error) {
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("listing the end of %s: %w", topic, err)
	}
	want := map[int32]int64{}
	var lerr error
	ends.Each(func(o kadm.ListedOffset) {
		switch {
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
		case o.Err != nil:
			lerr = o.Err
		default:
			want[o.Partition] = o.Offset
		}
	})
	if lerr != nil {
		return nil, fmt.Errorf("listing the end of %s: %w", topic, lerr)
	}
	assign := map[int32]kgo.Offset{}
	remaining := 0
	for p, end := range want {
		if end > 0 {
			assign[p] = kgo.NewOffset().AtStart()
			remaining++
		}
	}
	if remaining == 0 {
		return want, nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	defer func() {
		parts := make([]int32, 0, len(assign))
		for p := range assign {
			parts = append(parts, p)
		}
		cl.RemoveConsumePartitions(map[string][]int32{topic: parts})
	}()
	done := map[int32]bool{}
	for remaining > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w", topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("reading %s: %w", topic, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if done[r.Partition] {
				return
			}
			if !r.Attrs.IsControl() {
				fn(r)
			}
			if r.Offset >= want[r.Partition]-1 {
				done[r.Partition] = true
				remaining--
			}
		})
	}
	return want, nil
}

// Follow consumes the partitions of topic from the given offsets (as
// returned by ReadToEnd; when from is empty because the topic did not exist,
// partition 0 from its start) until ctx is done, calling fn for every record
// but transaction markers, and onErr for fetch errors.
func Follow(ctx context.Context, cl *kgo.Client, topic string, from map[int32]int64, fn func(*kgo.Record), onErr func(error)) {
	assign := map[int32]kgo.Offset{}
	for p, o := range from {
		assign[p] = kgo.NewOffset().At(o)
	}
	if len(assign) == 0 {
		assign[0] = kgo.NewOffset().AtStart()
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(_ string, _ int32, err error) { onErr(err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				fn(r)
			}
		})
	}
}

// ClientOpts are the options a client used with ReadToEnd and Follow needs.
func ClientOpts() []kgo.Opt {
	return []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}
}

// ReadRange reads offsets [from, to) of one partition of topic with cl, a
// client made with ClientOpts that no one else consumes with while it runs,
// calling fn for every record but transaction markers, in offset order. to
// must not be past the partition's end (its last stable offset, for
// ClientOpts' read_committed).
func ReadRange(ctx context.Context, cl *kgo.Client, topic string, partition int32, from, to int64, fn func(*kgo.Record)) error {
	if from >= to {
		return nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}})
	defer cl.RemoveConsumePartitions(map[string][]int32{topic: {partition}})
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading %s[%d] from %d to %d: %w", topic, partition, from, to, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return fmt.Errorf("reading %s[%d] from %d to %d: %w", topic, partition, from, to, ferr)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if done || r.Offset >= to {
				done = true
				return
			}
			if !r.Attrs.IsControl() {
				fn(r)
			}
			done = r.Offset >= to-1
		})
		if done {
			return nil
		}
	}
}
