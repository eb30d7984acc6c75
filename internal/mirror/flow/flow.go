package flow

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Totals counts what a flow copied.
type Totals struct {
	Records atomic.Int64
	Bytes   atomic.Int64
}

// Add counts records and bytes copied.
func (t *Totals) Add(records, bytes int64) {
	t.Records.Add(records)
	t.Bytes.Add(bytes)
}

// Share is the part of a flow one node copies while it shares the flow
// with others through a group on the target (package coord). A mirror's
// share is fixed for its life: the daemon runs a new mirror when the
// node's assignment changes, after the old one flushed and committed.
type Share struct {
	// Owns reports whether this node copies a source partition; it is
	// asked once per partition, when the partition appears. Nil: every
	// partition.
	Owns func(topic string, partition int32) bool
	// LeaseUntil is when the node's right to write ends: its group
	// membership may have lapsed from then on, so that a node that was
	// stopped past its session timeout writes nothing when it resumes. The
	// zero time: no lease now. Nil: always.
	LeaseUntil func() time.Time
	// Generation gives the group generation and member id that every
	// progress commit carries: the broker rejects the commits of a node
	// fenced out of the group. ok false commits nothing. Nil: commits
	// carry no generation (the group has no members).
	Generation func() (generation int32, member string, ok bool)
}

// Holds reports whether the share holds a source partition.
func (s Share) Holds(topic string, partition int32) bool {
	return s.Owns == nil || s.Owns(topic, partition)
}

// Leased reports whether the node may write data now.
func (s Share) Leased() bool { return s.LeaseUntil == nil || time.Now().Before(s.LeaseUntil()) }

// Provenance is how a flow takes part in active-active replication
// (internal/provenance): it registers every producer id it writes with on
// the target before writing with it, and skips the source batches that
// the reverse flow wrote, as it skips transaction markers. The zero value
// does neither.
type Provenance struct {
	Register func(ctx context.Context, pid int64) error
	Returned ReturnedFilter
}

// ReturnedFilter recognises the producer ids of the reverse flow.
type ReturnedFilter interface {
	// Resolve makes every id known; it may read the source's registry.
	Resolve(ctx context.Context, pids []int64) error
	// Returned reports whether a resolved id is the reverse flow's.
	Returned(pid int64) bool
}

// TruncationError explains an OffsetOutOfRange at source offset next of
// source[num]: records the flow had not copied yet were deleted on the
// source (retention, DeleteRecords), or the topic was truncated. Strait
// never skips them silently.
func TruncationError(source string, num int32, next, logStart int64, listErr, err error) error {
	if listErr == nil && next >= 0 && next < logStart {
		return fmt.Errorf("source %s[%d]: records %d..%d were deleted before they were replicated (log start is now %d); the partition is stopped to avoid a silent gap",
			source, num, next, logStart-1, logStart)
	}
	return fmt.Errorf("source %s[%d]: offset out of range at %d (the topic was truncated or recreated); the partition is stopped to avoid a silent gap: %w", source, num, next, err)
}

// RecreatedError says that the source topic of source[num], copied up to
// next into remote, was deleted and recreated.
func RecreatedError(source, remote string, num int32, next int64) error {
	return fmt.Errorf("source topic %q was deleted and recreated (topic ID changed) after Strait copied %s[%d] up to offset %d into %s; Strait stopped the partition instead of mixing the two incarnations: delete the target topic or reset the progress group for it, then restart",
		source, source, num, next, remote)
}
