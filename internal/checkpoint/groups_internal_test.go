package checkpoint

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"strait/internal/policy"
)

// A group the flow does not checkpoint is explained.
func TestWhyAGroupIsNotCheckpointed(t *testing.T) {
	groups, err := policy.NewFilter([]string{".*"}, []string{"console-consumer-.*"})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{Groups: groups, RefreshGroupsInterval: 10 * time.Minute, Internal: func(g string) bool { return g == "strait-A" }}, Clients{}, nil, slog.New(slog.DiscardHandler))
	for g, want := range map[string]string{
		"console-consumer-7": "filtered out by groups and groups.exclude",
		"strait-A":           "Strait's own progress group",
		"orders-app":         "no such group at the last listing (groups are listed every 10m0s)",
		"billing":            "",
	} {
		got := c.notCheckpointed(g, []string{"billing"})
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", g, got, want)
		}
	}
}
