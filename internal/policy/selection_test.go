package policy

import "testing"

func TestIsCycle(t *testing.T) {
	tests := []struct {
		name   string
		class  string
		sep    string
		alias  string // source.cluster.alias for the identity policy
		target string
		topic  string
		want   bool
	}{
		{name: "local topic", class: DefaultClass, sep: ".", target: "B", topic: "orders", want: false},
		{name: "came from target", class: DefaultClass, sep: ".", target: "B", topic: "B.orders", want: true},
		{name: "came from elsewhere", class: DefaultClass, sep: ".", target: "A", topic: "B.orders", want: false},
		{name: "first hop is target", class: DefaultClass, sep: ".", target: "A", topic: "A.B.foo", want: true},
		{name: "second hop is target", class: DefaultClass, sep: ".", target: "B", topic: "A.B.foo", want: true},
		{name: "no hop is target", class: DefaultClass, sep: ".", target: "C", topic: "A.B.foo", want: false},
		{name: "third hop is target", class: DefaultClass, sep: ".", target: "C", topic: "A.B.C.foo", want: true},
		{name: "remote heartbeats back to origin", class: DefaultClass, sep: ".", target: "B", topic: "B.heartbeats", want: true},
		{name: "local heartbeats", class: DefaultClass, sep: ".", target: "B", topic: "heartbeats", want: false},
		{name: "trailing separator is not remote", class: DefaultClass, sep: ".", target: "foo", topic: "foo.", want: false},
		{name: "underscore", class: DefaultClass, sep: "_", target: "B", topic: "B_orders", want: true},
		{name: "underscore ignores dots", class: DefaultClass, sep: "_", target: "B", topic: "B.orders", want: false},
		{name: "double dash multi-hop", class: DefaultClass, sep: "--", target: "B", topic: "A--B--foo", want: true},
		// KAFKA-9914: an alias that contains the separator defeats the check, as in MM2.
		{name: "alias containing separator", class: DefaultClass, sep: ".", target: "us.west", topic: "us.west.foo", want: false},
		// Identity keeps names, so cycles are invisible, except for heartbeat-like names.
		{name: "identity plain", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "orders", want: false},
		{name: "identity prefixed name", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "B.orders", want: false},
		{name: "identity multi-hop name", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "A.B.foo", want: false},
		{name: "identity alias unset", class: IdentityClass, sep: ".", alias: "", target: "B", topic: "B.orders", want: false},
		{name: "identity heartbeats from target", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "B.heartbeats", want: true},
		{name: "identity two-hop heartbeats", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "C.B.heartbeats", want: true},
		{name: "identity local heartbeats", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "heartbeats", want: false},
		{name: "identity myheartbeats from target", class: IdentityClass, sep: ".", alias: "A", target: "B", topic: "B.myheartbeats", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.class, tt.sep, true, tt.alias)
			if got := IsCycle(p, tt.target, tt.topic); got != tt.want {
				t.Errorf("IsCycle(target %q, %q) = %v, want %v", tt.target, tt.topic, got, tt.want)
			}
		})
	}
}

// mustFilter builds a filter or fails the test.
func mustFilter(t *testing.T, include, exclude []string) *Filter {
	t.Helper()
	f, err := NewFilter(include, exclude)
	if err != nil {
		t.Fatalf("NewFilter(%q, %q): %v", include, exclude, err)
	}
	return f
}

func TestShouldReplicateTopic(t *testing.T) {
	defaults := [2][]string{DefaultTopics(), DefaultTopicsExclude()}
	onlyOrders := [2][]string{{"orders"}, {"heartbeats"}} // topics=orders, topics.exclude=heartbeats
	empty := [2][]string{nil, nil}                        // topics=
	tests := []struct {
		name       string
		class      string
		filter     [2][]string // include, exclude
		nilFilter  bool
		heartbeats bool // heartbeats.replication.enabled
		topic      string
		want       bool
	}{
		// Flow A->B, default policy and filters.
		{name: "plain", class: DefaultClass, filter: defaults, heartbeats: true, topic: "orders", want: true},
		{name: "remote from third cluster", class: DefaultClass, filter: defaults, heartbeats: true, topic: "C.orders", want: true},
		{name: "cycle", class: DefaultClass, filter: defaults, heartbeats: true, topic: "B.orders", want: false},
		{name: "multi-hop cycle", class: DefaultClass, filter: defaults, heartbeats: true, topic: "C.B.orders", want: false},
		{name: "heartbeats", class: DefaultClass, filter: defaults, heartbeats: true, topic: "heartbeats", want: true},
		{name: "remote heartbeats", class: DefaultClass, filter: defaults, heartbeats: true, topic: "C.heartbeats", want: true},
		{name: "heartbeats from target", class: DefaultClass, filter: defaults, heartbeats: true, topic: "B.heartbeats", want: false},
		{name: "consumer offsets", class: DefaultClass, filter: defaults, heartbeats: true, topic: "__consumer_offsets", want: false},
		{name: "hidden", class: DefaultClass, filter: defaults, heartbeats: true, topic: ".hidden", want: false},
		{name: "dash internal", class: DefaultClass, filter: defaults, heartbeats: true, topic: "x-internal", want: false},
		{name: "offset syncs", class: DefaultClass, filter: defaults, heartbeats: true, topic: "mm2-offset-syncs.B.internal", want: false},
		{name: "checkpoints", class: DefaultClass, filter: defaults, heartbeats: true, topic: "A.checkpoints.internal", want: false},
		{name: "replica excluded by filter", class: DefaultClass, filter: defaults, heartbeats: true, topic: "orders.replica", want: false},
		// Internal topics stay out even when the filter accepts everything.
		{name: "internal with accept-all filter", class: DefaultClass, filter: [2][]string{{".*"}, nil}, heartbeats: true, topic: "__consumer_offsets", want: false},
		{name: "dot internal with accept-all filter", class: DefaultClass, filter: [2][]string{{".*"}, nil}, heartbeats: true, topic: "connect-offsets.internal", want: false},
		// topics.exclude=heartbeats does not stop heartbeats (spec §11.8) unless
		// heartbeats.replication.enabled=false.
		{name: "excluded heartbeats still replicated", class: DefaultClass, filter: onlyOrders, heartbeats: true, topic: "heartbeats", want: true},
		{name: "excluded remote heartbeats still replicated", class: DefaultClass, filter: onlyOrders, heartbeats: true, topic: "C.heartbeats", want: true},
		{name: "excluded heartbeats, replication off", class: DefaultClass, filter: onlyOrders, heartbeats: false, topic: "heartbeats", want: false},
		{name: "excluded remote heartbeats, replication off", class: DefaultClass, filter: onlyOrders, heartbeats: false, topic: "C.heartbeats", want: false},
		{name: "included topic, replication off", class: DefaultClass, filter: onlyOrders, heartbeats: false, topic: "orders", want: true},
		{name: "not included", class: DefaultClass, filter: onlyOrders, heartbeats: true, topic: "payments", want: false},
		{name: "heartbeats accepted by filter, replication off", class: DefaultClass, filter: defaults, heartbeats: false, topic: "heartbeats", want: true},
		{name: "myheartbeats is not a heartbeats topic", class: DefaultClass, filter: onlyOrders, heartbeats: true, topic: "myheartbeats", want: false},
		// topics= (empty) replicates nothing but heartbeats.
		{name: "empty include", class: DefaultClass, filter: empty, heartbeats: true, topic: "orders", want: false},
		{name: "empty include, heartbeats", class: DefaultClass, filter: empty, heartbeats: true, topic: "heartbeats", want: true},
		{name: "nil filter", class: DefaultClass, nilFilter: true, heartbeats: true, topic: "orders", want: false},
		{name: "nil filter, heartbeats", class: DefaultClass, nilFilter: true, heartbeats: true, topic: "heartbeats", want: true},
		// Identity, flow A->B.
		{name: "identity plain", class: IdentityClass, filter: defaults, heartbeats: true, topic: "orders", want: true},
		{name: "identity no cycle detection", class: IdentityClass, filter: defaults, heartbeats: true, topic: "B.orders", want: true},
		{name: "identity heartbeats from target", class: IdentityClass, filter: defaults, heartbeats: true, topic: "B.heartbeats", want: false},
		{name: "identity remote heartbeats", class: IdentityClass, filter: defaults, heartbeats: true, topic: "C.heartbeats", want: true},
		{name: "identity excluded heartbeats", class: IdentityClass, filter: onlyOrders, heartbeats: true, topic: "heartbeats", want: true},
		{name: "identity myheartbeats", class: IdentityClass, filter: defaults, heartbeats: true, topic: "myheartbeats", want: true},
		{name: "identity internal", class: IdentityClass, filter: defaults, heartbeats: true, topic: "__consumer_offsets", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.class, ".", true, "A")
			var f *Filter
			if !tt.nilFilter {
				f = mustFilter(t, tt.filter[0], tt.filter[1])
			}
			if got := ShouldReplicateTopic(p, f, tt.heartbeats, "B", tt.topic); got != tt.want {
				t.Errorf("ShouldReplicateTopic(A->B, %q) = %v, want %v", tt.topic, got, tt.want)
			}
		})
	}
}

func TestCheckpointTopic(t *testing.T) {
	tests := []struct {
		name  string
		class string
		sep   string
		topic string // source-side topic of a checkpoint for flow A->B
		want  string
	}{
		{name: "local topic gets remote name", class: DefaultClass, sep: ".", topic: "orders", want: "A.orders"},
		{name: "topic from target maps back", class: DefaultClass, sep: ".", topic: "B.orders", want: "orders"},
		{name: "multi-hop from target maps to original", class: DefaultClass, sep: ".", topic: "B.C.orders", want: "orders"},
		{name: "topic from third cluster", class: DefaultClass, sep: ".", topic: "C.orders", want: "A.C.orders"},
		{name: "target alias on second hop", class: DefaultClass, sep: ".", topic: "C.B.orders", want: "A.C.B.orders"},
		{name: "trailing separator", class: DefaultClass, sep: ".", topic: "B.", want: "A.B."},
		{name: "underscore back", class: DefaultClass, sep: "_", topic: "B_orders", want: "orders"},
		{name: "underscore forward", class: DefaultClass, sep: "_", topic: "orders", want: "A_orders"},
		{name: "identity keeps name", class: IdentityClass, sep: ".", topic: "orders", want: "orders"},
		{name: "identity prefixed name kept", class: IdentityClass, sep: ".", topic: "B.orders", want: "B.orders"},
		{name: "identity heartbeats forward", class: IdentityClass, sep: ".", topic: "heartbeats", want: "A.heartbeats"},
		{name: "identity heartbeats back", class: IdentityClass, sep: ".", topic: "B.heartbeats", want: "heartbeats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.class, tt.sep, true, "A")
			if got := CheckpointTopic(p, "A", "B", tt.topic); got != tt.want {
				t.Errorf("CheckpointTopic(A->B, %q) = %q, want %q", tt.topic, got, tt.want)
			}
		})
	}
}
