package cli

import (
	"strings"
	"testing"

	"strait/internal/api"
	"strait/internal/coord"
	"strait/internal/daemon"
	"strait/internal/drill"
)

func TestRenderStatus(t *testing.T) {
	eta, age := 95.0, 3.2
	var b strings.Builder
	renderStatus(&b, api.FlowsView{Flows: []api.FlowView{{
		Name: "A->B", State: "degraded", BytesPerSecond: 2.5e6, RecordsPerSecond: 12345, LagRecords: 4200, LagSeconds: 75,
		Partitions: 3, FastPath: 2, RecordPath: 1, StoppedPartitions: 1, CheckpointAge: &age, CheckpointsEmitted: 4, GroupOffsetsSynced: 2,
		Backlog:  &api.BacklogView{Total: 20000, Copied: 5000, Fraction: 0.25, ETASeconds: &eta},
		Problems: []daemon.ControlProblem{{Kind: "config", Item: "A.orders confluent.placement.constraints", Error: "INVALID_CONFIG: the target does not know this key"}},
		Share: &coord.Status{Group: "strait-A", Node: "node-2", Generation: 7, Slot: 1, State: coord.StateStable, Control: true,
			Units: []coord.Unit{{Topic: "orders", Partition: 0}, {Topic: "audit", Partition: 2}}},
		Transactions: &api.TransactionsView{ID: "strait-A-1", Committed: 812, Aborted: 2},
	}}}, api.PartitionsView{Partitions: []api.PartitionView{
		{Flow: "A->B", Topic: "orders", Partition: 0, State: "flowing"},
		{Flow: "A->B", Topic: "audit", Partition: 2, State: "stopped", LastError: "TOPIC_AUTHORIZATION_FAILED"},
	}})
	want := `Flow A->B: degraded
  throughput  2.5 MB/s, 12.3k records/s
  lag (RPO)   4200 records, 1m15s
  backlog     [########......................]  25%  5000 of 20.0k records, ETA 1m35s
  partitions  3 (2 fast path, 1 record path), 1 stopped
  shared      node node-2, group strait-A generation 7 slot 1 (stable): owns 2 partitions, holds the control duty
  exactly-once transactional id strait-A-1: 812 transactions committed, 2 aborted and copied again
  checkpoints 3.2 s ago; 4 written, 2 group offsets synced
  ! config A.orders confluent.placement.constraints: INVALID_CONFIG: the target does not know this key
Stopped partitions:
  A->B audit[2]: TOPIC_AUTHORIZATION_FAILED
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestRenderStatusBeforeTheFirstCheckpoint: a checkpointer that ran but
// wrote nothing (no group to checkpoint yet) is not shown as a checkpoint
// made seconds ago beside "0 written"; a node owning one partition says
// "1 partition".
func TestRenderStatusBeforeTheFirstCheckpoint(t *testing.T) {
	age := 1.7
	var b strings.Builder
	renderStatus(&b, api.FlowsView{Flows: []api.FlowView{{
		Name: "A->B", State: "running", Partitions: 1, FastPath: 1, CheckpointAge: &age,
		Share: &coord.Status{Group: "strait-A", Node: "n", Generation: 1, State: coord.StateStable, Units: []coord.Unit{{Topic: "orders"}}},
	}}}, api.PartitionsView{})
	got := b.String()
	for _, want := range []string{"  checkpoints none written yet (checked 1.7 s ago)\n", "owns 1 partition\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// TestCountsOfOneAreSingular: every count the CLI prints beside a noun
// says "1 record", not "1 records".
func TestCountsOfOneAreSingular(t *testing.T) {
	age := 2.0
	var b strings.Builder
	renderStatus(&b, api.FlowsView{Flows: []api.FlowView{{
		Name: "A->B", State: "running", LagRecords: 1, Partitions: 1, FastPath: 1, CheckpointAge: &age, CheckpointsEmitted: 1, GroupOffsetsSynced: 1,
		Backlog:      &api.BacklogView{Total: 1, Copied: 1, Fraction: 1},
		Transactions: &api.TransactionsView{ID: "strait-A-1", Committed: 1, Aborted: 1},
	}}}, api.PartitionsView{})
	printDrill(&b, drill.Result{RPORecords: 1}, "A", "B")
	b.WriteString(checkpointCount(1) + "\n")
	got := b.String()
	for _, bad := range []string{"1 records", "1 transactions", "1 group offsets", "1 checkpoints"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q in:\n%s", bad, got)
		}
	}
	for _, want := range []string{"lag (RPO)   1 record,", "1 of 1 record,", "1 transaction committed", "1 written, 1 group offset synced", "1 record not copied", "1 checkpoint of demo-app"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}
