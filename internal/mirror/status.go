package mirror

import (
	"sort"
	"time"

	"strait/internal/window"
)

// PartitionStatus is a snapshot of one replicated partition.
type PartitionStatus struct {
	Topic     string `json:"topic"`
	Remote    string `json:"remote"`
	Partition int32  `json:"partition"`
	Path      string `json:"path"` // "fast" (raw batches) or "record"
	// Next is the next source offset to copy; every record before it is
	// acknowledged by the target. -1 until the first acknowledgement.
	Next int64 `json:"next"`
	// Position is Next, or before the first acknowledgement the offset
	// the partition began at; -1 while neither is known. Lag counts from it.
	Position  int64  `json:"position"`
	Committed int64  `json:"committed"` // progress stored on the target
	End       int64  `json:"end"`       // source end offset seen in the last fetch, -1 if none yet
	Lag       int64  `json:"lag"`       // End - Next when both are known
	Records   int64  `json:"records"`   // records copied by this process
	Bytes     int64  `json:"bytes"`
	Error     string `json:"error,omitempty"`
	// State is "starting" (no position yet), "flowing" (records wait),
	// "caught-up" or "stopped" (Error says why).
	State string `json:"state"`
	// LagSeconds is the age of the oldest record not copied (timing), 0
	// when caught up, -1 when records wait and no timestamp is known yet.
	LagSeconds float64 `json:"lag_seconds"`
	// LastCopiedMs is the newest record timestamp copied, 0 before any.
	LastCopiedMs int64 `json:"last_copied_timestamp_ms"`
	// Latency is the replication latency (acknowledgement minus record
	// timestamp) and Age the record age at fetch, over the last minute.
	Latency window.Stats `json:"replication_latency"`
	Age     window.Stats `json:"record_age"`
	// KeepsOffsets is on when the partition keeps the source's offsets
	// (strait.offsets.preserve); Gaps counts the gaps of source offsets
	// with nothing to copy (markers, aborted records, compaction holes,
	// the log start) filled on the target, and FilledOffsets the offsets
	// they held.
	KeepsOffsets  bool  `json:"keeps_offsets,omitempty"`
	Gaps          int64 `json:"gaps,omitempty"`
	FilledOffsets int64 `json:"filled_offsets,omitempty"`
}

// Partition states.
const (
	StateStarting = "starting"
	StateFlowing  = "flowing"
	StateCaughtUp = "caught-up"
	StateStopped  = "stopped"
)

// Status is a snapshot of the flow's data plane.
type Status struct {
	Flow    string `json:"flow"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	Lag     int64  `json:"lag"`
	Failed  int    `json:"failed_partitions"`
	// BadInternalRecords counts undecodable records skipped in the offset
	// index and MM2's offsets topic.
	BadInternalRecords int64             `json:"bad_internal_records"`
	Partitions         []PartitionStatus `json:"partitions"`
	// Errors counts the Kafka errors met by kind: the side (fetch or
	// produce) and what Strait does about it (retriable, producer_state,
	// rejected, truncated, fatal), e.g. "produce_retriable".
	Errors map[string]int64 `json:"errors"`
	// ExactlyOnce is on when the flow copies inside transactions;
	// Transactions counts those committed, and AbortedTransactions the
	// attempts that aborted theirs and started again from the last
	// committed one.
	ExactlyOnce         bool  `json:"exactly_once"`
	Transactions        int64 `json:"transactions"`
	AbortedTransactions int64 `json:"aborted_transactions"`
	// TransactionalID is the transactional id of exactly-once mode's
	// producer on this node (the progress group and the node's slot in
	// it), empty at least once.
	TransactionalID string `json:"transactional_id,omitempty"`
}

// Status returns a snapshot. Lag is based on the end offsets seen in fetch
// responses, so it is as fresh as the last fetch of each partition.
func (m *Mirror) Status() Status {
	now := time.Now()
	st := Status{Flow: m.cfg.Flow, Records: m.totals.Records.Load(), Bytes: m.totals.Bytes.Load(), BadInternalRecords: m.badRecords.Load(), Errors: m.errors.Snapshot(),
		ExactlyOnce: m.cfg.Transactions != nil, Transactions: m.txnCommits.Load(), AbortedTransactions: m.txnAborts.Load()}
	if t := m.cfg.Transactions; t != nil {
		st.TransactionalID = t.ID
	}
	m.mu.RLock()
	for _, t := range m.topics {
		for _, p := range ownedParts(t.parts) {
			next, pos, committed, err := p.snapshot()
			ps := PartitionStatus{
				Topic: t.Source, Remote: t.Remote, Partition: p.num,
				Next: next, Committed: committed, End: -1,
				Records: p.records.Load(), Bytes: p.bytes.Load(), Path: "record",
				KeepsOffsets: p.keepsOffsets, Gaps: p.gaps.Load(), FilledOffsets: p.filled.Load(),
			}
			if p.fast.Load() {
				ps.Path = "fast"
			}
			if err != nil {
				ps.Error = err.Error()
				st.Failed++
			}
			ps.Position = pos
			if e := p.end.Load(); e >= 0 {
				ps.End = e
				if pos >= 0 && e > pos {
					ps.Lag = e - pos
				}
			}
			ps.Latency, ps.Age, ps.LastCopiedMs = p.timing.stats(now)
			ps.LagSeconds = p.timing.lagSeconds(ps.Lag, now)
			switch {
			case err != nil:
				ps.State = StateStopped
			case pos < 0:
				ps.State = StateStarting
			case ps.Lag > 0 || ps.End < 0:
				ps.State = StateFlowing
			default:
				ps.State = StateCaughtUp
			}
			st.Lag += ps.Lag
			st.Partitions = append(st.Partitions, ps)
		}
	}
	m.mu.RUnlock()
	sort.Slice(st.Partitions, func(i, j int) bool {
		a, b := st.Partitions[i], st.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return st
}
