package topics

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/policy"
)

// Shorthands for config entries as DescribeConfigs gives them.
func override(v string) configEntry {
	return configEntry{Value: &v, Source: kmsg.ConfigSourceDynamicTopicConfig}
}

func brokerDefault(v string) configEntry {
	return configEntry{Value: &v, Source: kmsg.ConfigSourceDefaultConfig}
}

func configFilter(t *testing.T, exclude []string, useDefaultsFrom string) *policy.ConfigFilter {
	t.Helper()
	f, err := policy.NewConfigFilter(exclude, useDefaultsFrom)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplicable keeps MM2's filter: no sensitive, read-only, static-broker
// or excluded entries, source defaults only with use.defaults.from=source,
// dynamic broker defaults copied.
func TestReplicable(t *testing.T) {
	v := func(s string) *string { return &s }
	src := topicConfigs{
		"retention.ms":                          override("3600000"),
		"cleanup.policy":                        brokerDefault("delete"),
		"segment.bytes":                         {Value: v("1024"), Source: kmsg.ConfigSourceStaticBrokerConfig},
		"max.message.bytes":                     {Value: v("2048"), Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		"sasl.thing":                            {Source: kmsg.ConfigSourceDynamicTopicConfig, Sensitive: true},
		"vendor.read.only":                      {Value: v("x"), Source: kmsg.ConfigSourceDynamicTopicConfig, ReadOnly: true},
		"leader.replication.throttled.replicas": override("*"),
		"no.value":                              {Source: kmsg.ConfigSourceDynamicTopicConfig},
	}
	for _, tt := range []struct {
		from string
		want map[string]string
	}{
		{policy.UseDefaultsFromTarget, map[string]string{"retention.ms": "3600000", "max.message.bytes": "2048"}},
		{policy.UseDefaultsFromSource, map[string]string{"retention.ms": "3600000", "max.message.bytes": "2048", "cleanup.policy": "delete"}},
	} {
		t.Run(tt.from, func(t *testing.T) {
			got := replicable(src, configFilter(t, policy.DefaultConfigPropertiesExclude(), tt.from))
			if !maps.Equal(got, tt.want) {
				t.Errorf("replicable = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDiffConfigs: only SETs of replicable source values that differ from the
// target's; target-only settings, excluded keys and source defaults (with
// use.defaults.from=target) are never touched; min.insync.replicas never
// goes down; a rejected value waits for a new source value.
func TestDiffConfigs(t *testing.T) {
	const remote = "A.orders"
	noExclude := []string{}
	tests := []struct {
		name     string
		exclude  []string // nil: MM2's default list
		from     string   // "" : target
		src, dst topicConfigs
		rejected map[string]rejection
		want     []string // "key old->new", old "-" for nil
		problems []string // "key: text"
	}{
		{
			name: "in sync",
			src:  topicConfigs{"retention.ms": override("3600000"), "cleanup.policy": brokerDefault("delete")},
			dst:  topicConfigs{"retention.ms": override("3600000"), "cleanup.policy": brokerDefault("delete")},
		},
		{
			name: "a changed source override is set",
			src:  topicConfigs{"retention.ms": override("7200000")},
			dst:  topicConfigs{"retention.ms": override("3600000")},
			want: []string{"retention.ms 3600000->7200000"},
		},
		{
			name: "a new source override is set over the target's default",
			src:  topicConfigs{"retention.ms": override("7200000")},
			dst:  topicConfigs{"retention.ms": brokerDefault("604800000")},
			want: []string{"retention.ms 604800000->7200000"},
		},
		{
			name: "target-only override untouched, no DELETE for a source default",
			src:  topicConfigs{"retention.bytes": brokerDefault("-1"), "retention.ms": override("1")},
			dst:  topicConfigs{"retention.bytes": override("1073741824"), "retention.ms": override("1"), "local.only": override("x")},
		},
		{
			name: "use.defaults.from=source sets source defaults explicitly",
			from: policy.UseDefaultsFromSource,
			src:  topicConfigs{"retention.bytes": brokerDefault("-1"), "cleanup.policy": brokerDefault("delete")},
			dst:  topicConfigs{"retention.bytes": override("1073741824"), "cleanup.policy": brokerDefault("delete")},
			want: []string{"retention.bytes 1073741824->-1"},
		},
		{
			name: "excluded keys are never sent",
			src:  topicConfigs{"message.timestamp.type": override("LogAppendTime"), "unclean.leader.election.enable": override("true"), "retention.ms": override("5")},
			dst:  topicConfigs{"message.timestamp.type": brokerDefault("CreateTime"), "unclean.leader.election.enable": brokerDefault("false"), "retention.ms": override("4")},
			want: []string{"retention.ms 4->5"},
		},
		{
			name:    "a custom exclude list",
			exclude: []string{`retention\..*`},
			src:     topicConfigs{"retention.ms": override("5"), "retention.bytes": override("6"), "segment.ms": override("7")},
			dst:     topicConfigs{"retention.ms": override("4"), "retention.bytes": override("4"), "segment.ms": override("4")},
			want:    []string{"segment.ms 4->7"},
		},
		{
			name:     "min.insync.replicas is never lowered",
			exclude:  noExclude,
			src:      topicConfigs{minISR: override("1")},
			dst:      topicConfigs{minISR: brokerDefault("2")},
			problems: []string{"min.insync.replicas: source value 1 not synced: it is lower than the target's current value 2"},
		},
		{
			name:    "min.insync.replicas may go up",
			exclude: noExclude,
			src:     topicConfigs{minISR: override("3")},
			dst:     topicConfigs{minISR: override("2")},
			want:    []string{"min.insync.replicas 2->3"},
		},
		{
			name: "min.insync.replicas excluded by MM2's default list",
			src:  topicConfigs{minISR: override("3")},
			dst:  topicConfigs{minISR: override("2")},
		},
		{
			name: "a key the target does not describe is sent with no old value",
			src:  topicConfigs{"confluent.placement.constraints": override("{}")},
			dst:  topicConfigs{},
			want: []string{"confluent.placement.constraints -->{}"},
		},
		{
			name:     "a value rejected before waits",
			src:      topicConfigs{"vendor.key": override("1"), "retention.ms": override("5")},
			dst:      topicConfigs{"retention.ms": override("4")},
			rejected: map[string]rejection{"vendor.key": {value: "1", err: "INVALID_CONFIG"}},
			want:     []string{"retention.ms 4->5"},
			problems: []string{`vendor.key: source value "1" not synced: the target rejected it (INVALID_CONFIG); it is tried again when the source value changes`},
		},
		{
			name:     "a new source value is tried again",
			src:      topicConfigs{"vendor.key": override("2")},
			dst:      topicConfigs{},
			rejected: map[string]rejection{"vendor.key": {value: "1", err: "INVALID_CONFIG"}},
			want:     []string{"vendor.key -->2"},
		},
		{
			name:     "read-only on the target",
			src:      topicConfigs{"vendor.key": override("2")},
			dst:      topicConfigs{"vendor.key": {Value: strPtr("1"), Source: kmsg.ConfigSourceDefaultConfig, ReadOnly: true}},
			problems: []string{`vendor.key: source value "2" not synced: vendor.key is read-only on the target`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exclude := tt.exclude
			if exclude == nil {
				exclude = policy.DefaultConfigPropertiesExclude()
			}
			from := cmp.Or(tt.from, policy.UseDefaultsFromTarget)
			changes, problems := diffConfigs(remote, tt.src, tt.dst, configFilter(t, exclude, from), tt.rejected)
			var got []string
			for _, c := range changes {
				if c.Remote != remote {
					t.Errorf("change %+v names remote %q, want %q", c, c.Remote, remote)
				}
				got = append(got, fmt.Sprintf("%s %s->%s", c.Key, deref(c.Old), c.New))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes %q, want %q", got, tt.want)
			}
			checkProblems(t, remote, problems, tt.problems)
		})
	}
}

// TestCreateConfigs: a new remote topic gets the replicable configs, without
// a min.insync.replicas below the target's default or an unknown default,
// and without values the target rejected before.
func TestCreateConfigs(t *testing.T) {
	const remote = "A.orders"
	src := topicConfigs{minISR: override("2"), "retention.ms": override("5"), "vendor.key": override("v")}
	rejected := map[string]rejection{"vendor.key": {value: "v", err: "INVALID_CONFIG"}}
	tests := []struct {
		name       string
		defaultISR *string
		isrErr     error
		want       map[string]string
		problems   []string
	}{
		{name: "target default lower", defaultISR: strPtr("1"), want: map[string]string{minISR: "2", "retention.ms": "5"}},
		{name: "target default equal", defaultISR: strPtr("2"), want: map[string]string{minISR: "2", "retention.ms": "5"}},
		{
			name: "target default higher", defaultISR: strPtr("3"), want: map[string]string{"retention.ms": "5"},
			problems: []string{"min.insync.replicas: source value 2 not synced: it is lower than the target's default 3"},
		},
		{
			name: "target default unknown", isrErr: errors.New("broker 1: CLUSTER_AUTHORIZATION_FAILED"), want: map[string]string{"retention.ms": "5"},
			problems: []string{"min.insync.replicas: source value 2 not set at creation: the target's default could not be read (broker 1: CLUSTER_AUTHORIZATION_FAILED)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configs, problems := createConfigs(remote, src, configFilter(t, []string{}, policy.UseDefaultsFromTarget), tt.defaultISR, tt.isrErr, rejected)
			got := make(map[string]string)
			for k, v := range configs {
				got[k] = *v
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("configs %v, want %v", got, tt.want)
			}
			checkProblems(t, remote, problems, append(tt.problems, `vendor.key: source value "v" not synced: the target rejected it`))
		})
	}
}

// TestPlanEmpty: problems and remote topics left in place are no change.
func TestPlanEmpty(t *testing.T) {
	tests := []struct {
		plan Plan
		want bool
	}{
		{Plan{}, true},
		{Plan{Problems: []Problem{{Topic: "A.x", Err: "e"}}, Deleted: []DeletedTopic{{Source: "x", Remote: "A.x"}}}, true},
		{Plan{Deleted: []DeletedTopic{{Source: "x", Remote: "A.x", Delete: true}}}, false},
		{Plan{Create: []PlannedTopic{{Remote: "A.x"}}}, false},
		{Plan{Grow: []PlannedGrowth{{Remote: "A.x"}}}, false},
		{Plan{Configs: []ConfigChange{{Remote: "A.x"}}}, false},
	}
	for _, tt := range tests {
		if got := tt.plan.Empty(); got != tt.want {
			t.Errorf("%+v.Empty() = %v, want %v", tt.plan, got, tt.want)
		}
	}
}

// checkProblems checks that problems are about remote and that each starts
// with the matching "key: text" of want, in order.
func checkProblems(t *testing.T, remote string, problems []Problem, want []string) {
	t.Helper()
	if len(problems) != len(want) {
		t.Errorf("problems %+v, want %q", problems, want)
		return
	}
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	for i, p := range problems {
		if got := p.Key + ": " + p.Err; p.Topic != remote || !strings.HasPrefix(got, want[i]) {
			t.Errorf("problem %q on %q, want %q on %q", got, p.Topic, want[i], remote)
		}
	}
}

func strPtr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
