package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"strait/internal/acls"
	"strait/internal/daemon"
	"strait/internal/preserve"
	"strait/internal/topics"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/plan/*.golden")

func TestRenderPlan(t *testing.T) {
	old := "604800000"
	for name, changes := range map[string][]daemon.FlowChanges{
		"pending": {{
			Flow: "A->B",
			Topics: topics.Plan{
				Names:    []topics.TopicName{{Source: "events", Remote: "A.events"}, {Source: "legacy-orders", Remote: "orders"}, {Source: "orders", Remote: "A.orders"}},
				Create:   []topics.PlannedTopic{{Source: "orders", Remote: "A.orders", Partitions: 6, Configs: map[string]string{"retention.ms": "86400000", "cleanup.policy": "delete"}}},
				Grow:     []topics.PlannedGrowth{{Remote: "A.events", From: 3, To: 6}},
				Configs:  []topics.ConfigChange{{Remote: "A.events", Key: "retention.ms", Old: &old, New: "86400000"}, {Remote: "A.events", Key: "segment.ms", New: "3600000"}},
				Deleted:  []topics.DeletedTopic{{Source: "legacy", Remote: "A.legacy"}},
				Problems: []topics.Problem{{Topic: "A.events", Key: "min.insync.replicas", Err: "the source's 1 is lower than the target's 2: left at 2"}},
			},
			ACLs: &acls.Plan{Add: []acls.Binding{{ResourceType: "TOPIC", ResourceName: "A.orders", PatternType: "LITERAL", Principal: "User:alice", Host: "*", Operation: "READ", Permission: "ALLOW"}}},
		}, {Flow: "B->A", Topics: topics.Plan{}}},
		"in-sync": {{Flow: "A->B", ACLs: &acls.Plan{Present: 3}}, {Flow: "B->A"}},
		"keep-offsets": {{Flow: "A->B", KeepOffsets: []preserve.TopicGaps{
			{Source: "audit", Remote: "A.audit", Transactional: true, Refused: true},
			{Source: "events", Remote: "A.events"},
			{Source: "orders", Remote: "A.orders", Compacted: true, Transactional: true},
		}}},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			renderPlan(&out, changes)
			path := filepath.Join("testdata", "plan", name+".golden")
			if *updatePlan {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli -run TestRenderPlan -update-plan)", err)
			}
			if out.String() != string(want) {
				t.Fatalf("plan output differs from %s:\n%s", path, out.String())
			}
		})
	}
}

// TestPlanJSONKeepsArrows: check --plan --json writes flow names as they
// are ("A->B"), not with '>' escaped for HTML.
func TestPlanJSONKeepsArrows(t *testing.T) {
	var out bytes.Buffer
	if err := writePlanJSON(&out, []daemon.FlowChanges{{Flow: "A->B"}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"flow": "A->B"`)) {
		t.Fatalf("the plan's JSON escapes the flow name:\n%s", out.String())
	}
}
