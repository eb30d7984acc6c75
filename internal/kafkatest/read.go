package kafkatest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readTimeout bounds ReadAll: a topic a test wrote is read back in well under a second.
const readTimeout = 60 * time.Second

// ReadAll reads topic from the start of each partition to the partition's end as of the
// call: the high watermark for kgo.ReadUncommitted(), the last stable offset for
// kgo.ReadCommitted(). It returns the data records of each partition in offset order,
// indexed by partition; records appended after the call are left out. opts add to the
// client it makes from seeds (for TLS or SASL), which must not configure consuming.
//
// The isolation level is a client setting, so ReadAll makes its own clients rather than
// borrow one. It counts transaction markers (control records) towards a partition's end
// but does not return them. It fails the test after 60 s, naming the partitions that did
// not reach their end.
func ReadAll(t testing.TB, seeds []string, topic string, isolation kgo.IsolationLevel, opts ...kgo.Opt) [][]*kgo.Record {
	t.Helper()
	var out [][]*kgo.Record
	n := Scan(t, seeds, topic, isolation, func(r *kgo.Record) {
		out[r.Partition] = append(out[r.Partition], r)
	}, func(partitions int) { out = make([][]*kgo.Record, partitions) }, opts...)
	return out[:n]
}

// Scan reads topic as ReadAll does but hands each data record to fn instead of keeping it,
// in offset order within a partition (partitions interleave), for topics too large to hold.
// Before the first record it calls sized, if not nil, with the number of partitions, which
// it also returns. It fails the test after 60 s per 100,000 records to read (at least 60 s).
func Scan(t testing.TB, seeds []string, topic string, isolation kgo.IsolationLevel, fn func(*kgo.Record), sized func(partitions int), opts ...kgo.Opt) int {
	t.Helper()
	return scan(t, seeds, topic, isolation, nil, fn, sized, opts)
}

// Count is the number of data records a consumer of the isolation level reads of topic.
func Count(t testing.TB, seeds []string, topic string, isolation kgo.IsolationLevel) int {
	t.Helper()
	n := 0
	Scan(t, seeds, topic, isolation, func(*kgo.Record) { n++ }, nil)
	return n
}

// ScanPartitions is Scan of the given partitions of topic only, for a topic whose other
// partitions cannot or need not be read (a corrupt one, say).
func ScanPartitions(t testing.TB, seeds []string, topic string, isolation kgo.IsolationLevel, partitions []int32, fn func(*kgo.Record), opts ...kgo.Opt) {
	t.Helper()
	if partitions == nil {
		partitions = []int32{} // nil means every partition to scan
	}
	scan(t, seeds, topic, isolation, partitions, fn, nil, opts)
}

func scan(t testing.TB, seeds []string, topic string, isolation kgo.IsolationLevel, only []int32, fn func(*kgo.Record), sized func(partitions int), opts []kgo.Opt) int {
	t.Helper()
	base := append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)
	ctx, cancel := context.WithTimeout(t.Context(), readTimeout)
	starts, ends, err := listBounds(ctx, base, topic, isolation)
	cancel()
	if err != nil {
		t.Fatalf("reading topic %q: %v", topic, err)
		return 0
	}
	// A partition created between the two listings has no start offset: it starts at 0.
	partitions := int(slices.Max(slices.Collect(maps.Keys(ends)))) + 1
	if sized != nil {
		sized(partitions)
	}
	want := make(map[int32]int64) // partition -> end offset, for partitions not read to the end yet
	next := make(map[int32]int64) // partition -> offset after the last record seen
	consume := make(map[int32]kgo.Offset)
	var total int64
	for p, end := range ends {
		if only != nil && !slices.Contains(only, p) {
			continue
		}
		if end > starts[p] {
			want[p] = end
			next[p] = starts[p]
			consume[p] = kgo.NewOffset().AtStart()
			total += end - starts[p]
		}
	}
	if len(want) == 0 {
		return partitions
	}
	timeout := readTimeout * time.Duration(1+total/100_000)
	ctx, cancel = context.WithTimeout(t.Context(), timeout)
	defer cancel()

	cl, err := kgo.NewClient(append(base,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: consume}),
		kgo.FetchIsolationLevel(isolation),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		t.Fatalf("reading topic %q: creating a consumer: %v", topic, err)
		return 0
	}
	defer cl.Close()

	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading topic %q: not at the end within %v: %s", topic, timeout, progress(want, next))
			return 0
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("partition %d: %w", p, err)
			}
		})
		if ferr != nil {
			t.Fatalf("reading topic %q: %v", topic, ferr)
			return 0
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				delete(want, r.Partition)
				return
			}
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				fn(r)
			}
			if r.Offset == end-1 {
				delete(want, r.Partition)
			}
		})
	}
	return partitions
}

// listBounds returns the start and end offset of every partition of topic.
func listBounds(ctx context.Context, opts []kgo.Opt, topic string, isolation kgo.IsolationLevel) (starts, ends map[int32]int64, err error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	listEnds := adm.ListEndOffsets
	if isolation == kgo.ReadCommitted() {
		listEnds = adm.ListCommittedOffsets
	}
	starts, err = offsets(ctx, adm.ListStartOffsets, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("listing start offsets: %w", err)
	}
	ends, err = offsets(ctx, listEnds, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("listing end offsets: %w", err)
	}
	return starts, ends, nil
}

func offsets(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) (map[int32]int64, error) {
	listed, err := list(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64)
	for p, o := range listed[topic] {
		out[p] = o.Offset
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %q has no partitions", topic)
	}
	return out, nil
}

// progress describes how far the unfinished partitions got, in partition order.
func progress(want, next map[int32]int64) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(want)) {
		parts = append(parts, fmt.Sprintf("partition %d at offset %d of end %d", p, next[p], want[p]))
	}
	return strings.Join(parts, ", ")
}
