package api

// The JSON documents of /api/v1. Every figure is as fresh as the node's
// last sample (History.Interval apart); rates come from consecutive samples.

import (
	"time"

	"strait/internal/coord"
	"strait/internal/daemon"
)

// FlowsView is GET /api/v1/flows.
type FlowsView struct {
	Flows []FlowView `json:"flows"`
}

// FlowView is one replication flow (SOURCE->TARGET).
type FlowView struct {
	Name   string `json:"name"` // "A->B"
	Source string `json:"source"`
	Target string `json:"target"`
	// State is "starting" (no partition assigned yet), "running" (every
	// partition flowing or caught up), "degraded" (some partitions stopped)
	// or "failed" (every partition stopped).
	State            string  `json:"state"`
	Records          int64   `json:"records"` // copied by this process
	Bytes            int64   `json:"bytes"`
	RecordsPerSecond float64 `json:"records_per_second"`
	BytesPerSecond   float64 `json:"bytes_per_second"`
	// LagRecords is the sum over partitions of source end minus next source
	// offset to copy: the records not yet on the target (RPO in records).
	LagRecords int64 `json:"lag_records"`
	// LagSeconds is the age of the oldest record not yet copied (RPO in
	// time); 0 when caught up.
	LagSeconds float64 `json:"lag_seconds"`
	// OldestNotCopied is when the oldest record not yet copied was
	// written; null when caught up or unknown.
	OldestNotCopied *time.Time `json:"oldest_not_copied"`
	// FailoverNow says in one line whether a failover now would lose data,
	// and how much.
	FailoverNow        string   `json:"failover_now"`
	Partitions         int      `json:"partitions"`
	FastPath           int      `json:"fast_path_partitions"`
	RecordPath         int      `json:"record_path_partitions"`
	StoppedPartitions  int      `json:"stopped_partitions"`
	CheckpointAge      *float64 `json:"checkpoint_age_seconds"` // null before the first checkpoint
	CheckpointsEmitted int64    `json:"checkpoints_emitted"`
	GroupOffsetsSynced int64    `json:"group_offsets_synced"`
	// Backlog is the progress of the copy of what the source held when
	// this process started; null once caught up with it.
	Backlog *BacklogView `json:"backlog"`
	// Problems are the control plane's items that failed alone: topics,
	// configs and ACL bindings it could not sync.
	Problems []daemon.ControlProblem `json:"control_problems,omitempty"`
	// Share is this node's part of the flow, which every node that runs it
	// shares: its group membership, generation, slot, the partitions it
	// owns and whether it holds the control duty.
	Share *coord.Status `json:"share,omitempty"`
	// Transactions counts exactly-once mode's transactions; null when the
	// flow copies at least once.
	Transactions *TransactionsView `json:"transactions,omitempty"`
}

// TransactionsView is exactly-once mode's count of transactions committed,
// and of attempts that aborted theirs and started again from the last
// committed one.
type TransactionsView struct {
	// ID is this node's transactional id for the flow.
	ID        string `json:"transactional_id,omitempty"`
	Committed int64  `json:"committed"`
	Aborted   int64  `json:"aborted"`
}

// BacklogView is the initial copy's progress: records copied of those the
// source held at start, and an ETA at the current rate.
type BacklogView struct {
	Total      int64    `json:"total_records"`
	Copied     int64    `json:"copied_records"`
	Fraction   float64  `json:"fraction"`              // 0..1
	ETASeconds *float64 `json:"eta_seconds,omitempty"` // null while no rate is known
}

// PartitionsView is GET /api/v1/partitions[?flow=A->B].
type PartitionsView struct {
	Partitions []PartitionView `json:"partitions"`
}

// PartitionView is one replicated partition.
type PartitionView struct {
	Flow      string `json:"flow"`
	Topic     string `json:"topic"`
	Remote    string `json:"remote"`
	Partition int32  `json:"partition"`
	// State is "starting" (nothing copied yet), "flowing", "caught-up" or
	// "stopped" (LastError says why; it copies nothing until restarted).
	State      string  `json:"state"`
	Path       string  `json:"path"` // "fast" (raw batches) or "record"
	Next       int64   `json:"next"` // next source offset to copy; -1 before the first
	End        int64   `json:"end"`  // source end offset, -1 while unknown
	LagRecords int64   `json:"lag_records"`
	LagSeconds float64 `json:"lag_seconds"`
	Records    int64   `json:"records"`
	Bytes      int64   `json:"bytes"`
	LastError  string  `json:"last_error,omitempty"`
	// Owner is the node copying the partition (this one) when several
	// nodes share the flow.
	Owner string `json:"owner,omitempty"`
	// KeepsOffsets says its records land at their source offsets
	// (strait.offsets.preserve); Gaps counts the runs of source offsets
	// with nothing to copy (markers, aborted records, compaction holes)
	// this node filled on the target, and FilledOffsets the offsets in
	// them.
	KeepsOffsets  bool  `json:"keeps_offsets,omitempty"`
	Gaps          int64 `json:"gaps,omitempty"`
	FilledOffsets int64 `json:"filled_offsets,omitempty"`
}

// HistoryView is GET /api/v1/history: the node's recent samples, oldest
// first, for charts.
type HistoryView struct {
	IntervalSeconds float64        `json:"interval_seconds"`
	Points          []HistoryPoint `json:"points"`
}

// HistoryPoint is one sample of every flow.
type HistoryPoint struct {
	Time  int64                 `json:"t"` // Unix seconds
	Flows map[string]FlowSample `json:"flows"`
}

// FlowSample is one flow at one sample.
type FlowSample struct {
	RecordsPerSecond float64 `json:"records_per_second"`
	BytesPerSecond   float64 `json:"bytes_per_second"`
	LagRecords       int64   `json:"lag_records"`
	LagSeconds       float64 `json:"lag_seconds"`
	// LatencyAvgMs and LatencyMaxMs are the replication latency (the
	// target's acknowledgement minus the record's timestamp) over the
	// flow's partitions' windows: the mean, weighted by records, and the
	// highest; 0 before a record was copied.
	LatencyAvgMs float64 `json:"latency_avg_ms"`
	LatencyMaxMs float64 `json:"latency_max_ms"`
}

// ErrorView is every error answer, in Kafka Connect's REST shape.
type ErrorView struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}
