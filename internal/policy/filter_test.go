package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestFilterAccepts(t *testing.T) {
	tests := []struct {
		name    string
		include []string
		exclude []string
		accept  []string
		reject  []string
	}{
		{name: "empty include list replicates nothing", include: nil, exclude: nil,
			reject: []string{"orders", "", "a"}},
		{name: "empty include slice replicates nothing", include: []string{}, exclude: []string{},
			reject: []string{"orders"}},
		{name: "empty exclude excludes nothing", include: []string{".*"}, exclude: nil,
			accept: []string{"orders", "__consumer_offsets", "x.internal", ""}},
		{name: "full match, not substring", include: []string{"orders"},
			accept: []string{"orders"}, reject: []string{"orders2", "my-orders", "Orders", "xordersx"}},
		{name: "list joined with |", include: []string{"orders", "pay.*"},
			accept: []string{"orders", "payments", "pay"}, reject: []string{"orderspay", "ordersX"}},
		{name: "alternation inside an element", include: []string{"a|b"},
			accept: []string{"a", "b"}, reject: []string{"ab", "a|b"}},
		{name: "elements joined before compiling", include: []string{"(a", "b)"},
			accept: []string{"a", "b"}, reject: []string{"(a", "b)"}},
		{name: "unterminated quote swallows later elements", include: []string{`\Qa.b`, "c"},
			accept: []string{"a.b|c"}, reject: []string{"a.b", "c", "axb"}},
		{name: "exclude wins", include: []string{".*"}, exclude: []string{"foo"},
			accept: []string{"foobar", "bar"}, reject: []string{"foo"}},
		{name: "exclude full match", include: []string{"orders.*"}, exclude: []string{"orders"},
			accept: []string{"orders-eu", "orders.v2"}, reject: []string{"orders", "payments"}},
		{name: "empty element matches only the empty name", include: []string{""},
			accept: []string{""}, reject: []string{"a"}},
		{name: "case-insensitive flag", include: []string{"(?i)orders"},
			accept: []string{"ORDERS", "Orders"}, reject: []string{"orders2"}},
		{name: "MM2 default topics", include: DefaultTopics(), exclude: DefaultTopicsExclude(),
			accept: []string{"orders", "internal", "x_internal", "replica", "_schemas", "A.orders", "heartbeats"},
			reject: []string{"x.internal", "x-internal", "-internal", "mm2-offset-syncs.B.internal", "A.checkpoints.internal", "x.replica", "__consumer_offsets", "__x"}},
		{name: "MM2 default groups", include: DefaultGroups(), exclude: DefaultGroupsExclude(),
			accept: []string{"my-group", "consumer-console-1", "my-connect-group"},
			reject: []string{"console-consumer-123", "connect-cluster", "connect-", "__strimzi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFilter(t, tt.include, tt.exclude)
			for _, name := range tt.accept {
				if !f.Accepts(name) {
					t.Errorf("Accepts(%q) = false, want true", name)
				}
			}
			for _, name := range tt.reject {
				if f.Accepts(name) {
					t.Errorf("Accepts(%q) = true, want false", name)
				}
			}
		})
	}
}

func TestFilterNil(t *testing.T) {
	var f *Filter
	if f.Accepts("orders") {
		t.Error("nil Filter accepts orders, want nothing accepted")
	}
	if f.Include() != nil || f.Exclude() != nil {
		t.Error("nil Filter has non-nil patterns")
	}
}

func TestFilterPatterns(t *testing.T) {
	f := mustFilter(t, []string{"a", "b"}, nil)
	if got, want := f.Include().String(), "a|b"; got != want {
		t.Errorf("Include().String() = %q, want %q", got, want)
	}
	if got := f.Include().List(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Include().List() = %q, want [a b]", got)
	}
	if got := f.Exclude().String(); got != "" {
		t.Errorf("Exclude().String() = %q, want empty", got)
	}
}

func TestNewFilterErrors(t *testing.T) {
	tests := []struct {
		name    string
		include []string
		exclude []string
		wantErr []string
	}{
		{name: "bad include", include: []string{"orders", "foo(?!bar)"},
			wantErr: []string{"include list: ", `pattern "foo(?!bar)"`, "negative lookahead"}},
		{name: "bad exclude", include: []string{".*"}, exclude: []string{"a("},
			wantErr: []string{"exclude list: ", `pattern "a("`, "missing closing )"}},
		{name: "both reported", include: []string{`\h`}, exclude: []string{"x*+"},
			wantErr: []string{"include list: ", `"\\h"`, "exclude list: ", "possessive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFilter(tt.include, tt.exclude)
			if err == nil {
				t.Fatalf("NewFilter() = %v, want error", f)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Errorf("error %v is not a *PatternError", err)
			}
		})
	}
}

func TestConfigFilter(t *testing.T) {
	tests := []struct {
		name               string
		exclude            []string
		useDefaultsFrom    string
		wantSourceDefaults bool
		replicate          []string
		skip               []string
	}{
		{name: "MM2 defaults", exclude: DefaultConfigPropertiesExclude(), useDefaultsFrom: "target",
			replicate: []string{"retention.ms", "cleanup.policy", "compression.type", "min.insync.replicasX", "xmin.insync.replicas", "minXinsyncXreplicas", "message.timestamp.after.max.ms"},
			skip: []string{"follower.replication.throttled.replicas", "leader.replication.throttled.replicas",
				"message.timestamp.difference.max.ms", "message.timestamp.type", "unclean.leader.election.enable", "min.insync.replicas"}},
		{name: "defaults from source", exclude: DefaultConfigPropertiesExclude(), useDefaultsFrom: "source", wantSourceDefaults: true,
			replicate: []string{"retention.ms"}, skip: []string{"min.insync.replicas"}},
		{name: "empty exclude list syncs everything", exclude: nil, useDefaultsFrom: "target",
			replicate: []string{"min.insync.replicas", "message.timestamp.type", "retention.ms"}},
		{name: "custom regex", exclude: []string{`segment\..*`, "retention.ms"}, useDefaultsFrom: "target",
			replicate: []string{"min.insync.replicas", "retention.bytes"}, skip: []string{"segment.bytes", "segment.ms", "retention.ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewConfigFilter(tt.exclude, tt.useDefaultsFrom)
			if err != nil {
				t.Fatalf("NewConfigFilter: %v", err)
			}
			if got := f.ShouldReplicateSourceDefault(); got != tt.wantSourceDefaults {
				t.Errorf("ShouldReplicateSourceDefault() = %v, want %v", got, tt.wantSourceDefaults)
			}
			for _, name := range tt.replicate {
				if !f.ShouldReplicateConfig(name) {
					t.Errorf("ShouldReplicateConfig(%q) = false, want true", name)
				}
			}
			for _, name := range tt.skip {
				if f.ShouldReplicateConfig(name) {
					t.Errorf("ShouldReplicateConfig(%q) = true, want false", name)
				}
			}
		})
	}
}

func TestNewConfigFilterErrors(t *testing.T) {
	tests := []struct {
		name            string
		exclude         []string
		useDefaultsFrom string
		wantErr         []string
	}{
		{name: "empty use.defaults.from", exclude: nil, useDefaultsFrom: "",
			wantErr: []string{`use.defaults.from ""`, `"target"`, `"source"`}},
		{name: "wrong case", exclude: nil, useDefaultsFrom: "Source",
			wantErr: []string{`use.defaults.from "Source"`}},
		{name: "bad regex and bad value", exclude: []string{`(?<=x)y`}, useDefaultsFrom: "both",
			wantErr: []string{"config.properties.exclude: ", "lookbehind", `use.defaults.from "both"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewConfigFilter(tt.exclude, tt.useDefaultsFrom)
			if err == nil {
				t.Fatalf("NewConfigFilter() = %v, want error", f)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestDefaultListsAreFresh(t *testing.T) {
	for name, fn := range map[string]func() []string{
		"DefaultTopics":                  DefaultTopics,
		"DefaultTopicsExclude":           DefaultTopicsExclude,
		"DefaultGroups":                  DefaultGroups,
		"DefaultGroupsExclude":           DefaultGroupsExclude,
		"DefaultConfigPropertiesExclude": DefaultConfigPropertiesExclude,
	} {
		t.Run(name, func(t *testing.T) {
			a := fn()
			want := slices.Clone(a)
			a[0] = "changed"
			if got := fn(); !slices.Equal(got, want) {
				t.Errorf("%s() = %q after a caller changed its result, want %q", name, got, want)
			}
			if _, err := CompilePattern(fn()); err != nil {
				t.Errorf("%s() does not compile: %v", name, err)
			}
		})
	}
}

// TestDefaultListValues pins the exact MM2 defaults (spec §1.6).
func TestDefaultListValues(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want string // as written in MM2's ConfigDef, comma-separated
	}{
		{name: "topics", got: DefaultTopics(), want: `.*`},
		{name: "topics.exclude", got: DefaultTopicsExclude(), want: `.*[\-\.]internal, .*\.replica, __.*`},
		{name: "groups", got: DefaultGroups(), want: `.*`},
		{name: "groups.exclude", got: DefaultGroupsExclude(), want: `console-consumer-.*, connect-.*, __.*`},
		{name: "config.properties.exclude", got: DefaultConfigPropertiesExclude(),
			want: `follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, unclean\.leader\.election\.enable, min\.insync\.replicas`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(tt.got, ", "); got != tt.want {
				t.Errorf("default %s = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
