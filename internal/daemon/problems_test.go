package daemon

import (
	"errors"
	"testing"

	"strait/internal/topics"
)

// Each item the control plane could not sync is one problem in the
// status, named by kind and item, while the others are not listed.
func TestControlProblemsListEachFailedItem(t *testing.T) {
	results := []topics.Result{
		{Source: "ok", Remote: "A.ok", Action: topics.Unchanged},
		{Source: "big", Remote: "A.big", Action: topics.Failed, Err: errors.New("the target refuses 12 partitions")},
		{Source: "cfg", Remote: "A.cfg", Action: topics.ConfigsSynced, Problems: []topics.Problem{{Topic: "A.cfg", Key: "confluent.placement.constraints", Err: "INVALID_CONFIG"}}},
	}
	got := controlProblems(results, nil)
	want := []ControlProblem{
		{Kind: "topic", Item: "A.big", Error: "the target refuses 12 partitions"},
		{Kind: "config", Item: "A.cfg confluent.placement.constraints", Error: "INVALID_CONFIG"},
	}
	if len(got) != len(want) {
		t.Fatalf("problems %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("problem %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
