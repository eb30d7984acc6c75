package topics

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"strait/internal/kafkatest"
	"strait/internal/policy"
)

// Two source topics that rename rules map to one remote topic are neither
// created nor copied, each with an error; the other topics go on.
func TestRenamedTopicsThatCollideAreRefused(t *testing.T) {
	a := fakeCluster(t, kfake.SeedTopics(1, "t-v1", "t-v2", "other"))
	b := fakeCluster(t)
	rules, err := policy.ParseRules(`re:^(.*)-v1$=$1, re:^(.*)-v2$=$1`)
	if err != nil {
		t.Fatal(err)
	}
	var ready []Ready
	r, _ := newReconciler(t, kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b), func(rs []Ready, _ []string) { ready = rs }, func(c *Config) {
		fallback, err := policy.New(policy.DefaultClass, ".", false, "")
		if err != nil {
			t.Fatal(err)
		}
		if c.Policy, err = policy.NewRenaming(fallback, "A", rules); err != nil {
			t.Fatal(err)
		}
	})
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Result{}
	for _, res := range results {
		by[res.Source] = res
	}
	for _, name := range []string{"t-v1", "t-v2"} {
		if res := by[name]; res.Action != Failed || res.Err == nil || !strings.Contains(res.Err.Error(), "t") {
			t.Errorf("%s: %s %v, want failed: two topics map to one remote name", name, res.Action, res.Err)
		}
	}
	if res := by["other"]; res.Action != Created || res.Remote != "A.other" {
		t.Errorf("other: %s as %s, want created as A.other", res.Action, res.Remote)
	}
	for _, rd := range ready {
		if rd.Remote == "t" {
			t.Fatalf("the colliding remote topic t was handed to the data plane: %+v", ready)
		}
	}
}
