package fastpath

import (
	"time"

	"strait/internal/batch"
)

// Ledger is the fast path's view of one source partition's replication
// state, which the flow owns (package mirror's partition) and shares with
// the record path, the committer and the status. The forwarder reaches a
// partition only through these methods, never its fields, so the
// invariants of its progress stay the ledger's to keep (package mirror,
// partition.go): progress only grows, never passes a record that failed,
// and a stopped partition is not resumed. Every method is safe to call
// from the forwarder's loop while other goroutines use the partition.
type Ledger interface {
	// Source is the source topic, Remote the topic it is copied to,
	// Partition the partition number in both, and TopicID the source
	// topic's ID the partition started with (zero when unknown): fixed
	// for the partition's life.
	Source() string
	Remote() string
	Partition() int32
	TopicID() [16]byte
	// MaxMessageBytes is the remote topic's max.message.bytes as described
	// when the topic was added; 0 when unknown.
	MaxMessageBytes() int64
	// Removed reports whether the source topic was deleted.
	Removed() bool

	// End is the source end offset (the LSO when read_committed) as of
	// the last fetch or listing, -1 before either; SetEnd records a
	// fetch's.
	End() int64
	SetEnd(end int64)

	// AckBatch records a forwarded batch the target acknowledged: the n
	// source offsets from src are at target offsets from tgt on, and next
	// is the source offset after the batch.
	AckBatch(src, tgt, n, next int64)
	// AckRebuilt records a rebuilt or merged batch the target
	// acknowledged: its records, at the source offsets of runs, are at
	// target offsets from tgt on; next is the source offset after it.
	AckRebuilt(runs []batch.Run, tgt, next int64)
	// SkipBefore records that every offset below next holds nothing to
	// copy (markers, aborted data, the reverse flow's batches).
	SkipBefore(next int64)
	// Filled records that the source offsets from..to-1, which hold
	// nothing to copy, are filled on the target at the same offsets (a
	// partition that keeps the source's offsets): they translate to
	// themselves, and progress moves to to.
	Filled(from, to int64)
	// Position is the progress: every source offset below it is on the
	// target; -1 before any acknowledgement.
	Position() int64
	// ResumeOffset is where another path continues the partition: after
	// the last acknowledged record, else where replication of it began,
	// else -1.
	ResumeOffset() int64

	// Fetched feeds n records fetched, with the given oldest and newest
	// timestamps, to the partition's latency and lag; Copied counts
	// records and bytes the target acknowledged, the newest timestamp
	// among them, and the oldest timestamp still pending (0 when none).
	Fetched(oldestMs, newestMs int64, n int, now time.Time)
	Copied(records int, bytes int64, newestMs, pendingMs int64, now time.Time)

	// Stop stops the partition with err unless it already stopped; it
	// reports whether this call stopped it. Failed returns why the
	// partition stopped, or nil.
	Stop(err error) bool
	Failed() error
}
