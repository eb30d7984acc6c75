package policy

import (
	"strings"
	"testing"
)

// mustRenaming builds the renaming policy of the flow from source with the given fallback
// class and rules ("" = none), or fails the test.
func mustRenaming(t *testing.T, class, source, rules string, inbound ...*Renaming) *Renaming {
	t.Helper()
	var rs *Rules
	if rules != "" {
		rs = mustRules(t, rules)
	}
	p, err := NewRenaming(mustNew(t, class, ".", true, source), source, rs, inbound...)
	if err != nil {
		t.Fatalf("NewRenaming(%s, %q, %q): %v", class, source, rules, err)
	}
	return p
}

func TestRenamingNames(t *testing.T) {
	const rules = "orders=prod.orders, re:^legacy-(.*)$=new-$1"
	tests := []struct {
		name   string
		class  string
		alias  string // FormatRemoteTopic's source alias
		topic  string
		remote string
	}{
		{name: "exact", class: DefaultClass, alias: "A", topic: "orders", remote: "prod.orders"},
		{name: "regex", class: DefaultClass, alias: "A", topic: "legacy-x", remote: "new-x"},
		{name: "no rule: default prefix", class: DefaultClass, alias: "A", topic: "payments", remote: "A.payments"},
		{name: "no rule: identity", class: IdentityClass, alias: "A", topic: "payments", remote: "payments"},
		{name: "heartbeats never renamed", class: DefaultClass, alias: "A", topic: "heartbeats", remote: "A.heartbeats"},
		{name: "identity heartbeats keep MM2's name", class: IdentityClass, alias: "A", topic: "heartbeats", remote: "A.heartbeats"},
		{name: "other alias: rules are the flow's only", class: DefaultClass, alias: "C", topic: "orders", remote: "C.orders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustRenaming(t, tt.class, "A", rules)
			if got := p.FormatRemoteTopic(tt.alias, tt.topic); got != tt.remote {
				t.Errorf("FormatRemoteTopic(%q, %q) = %q, want %q", tt.alias, tt.topic, got, tt.remote)
			}
			src, ok := p.TopicSource(tt.remote)
			if !ok || src != tt.alias {
				t.Errorf("TopicSource(%q) = (%q, %v), want %q", tt.remote, src, ok, tt.alias)
			}
			if up, ok := p.UpstreamTopic(tt.remote); !ok || up != tt.topic {
				t.Errorf("UpstreamTopic(%q) = (%q, %v), want %q", tt.remote, up, ok, tt.topic)
			}
		})
	}
}

func TestRenamingNeverRenamesInternalTopics(t *testing.T) {
	// A rule that matches everything still leaves heartbeats and internal topics alone.
	p := mustRenaming(t, DefaultClass, "A", "re:^(.*)$=$1.copy")
	for _, topic := range []string{"heartbeats", "B.heartbeats", "myheartbeats", "__consumer_offsets", ".hidden",
		"mm2-offset-syncs.A.internal", "A.checkpoints.internal", "connect-offsets-internal"} {
		if got, want := p.FormatRemoteTopic("A", topic), "A."+topic; got != want {
			t.Errorf("FormatRemoteTopic(A, %q) = %q, want %q", topic, got, want)
		}
	}
	if !p.IsHeartbeatsTopic("B.heartbeats") || !p.IsHeartbeatsTopic("heartbeats") || p.IsHeartbeatsTopic("heartbeats.copy") {
		t.Error("IsHeartbeatsTopic does not follow the fallback")
	}
	if p.CheckpointsTopic("A") != "A.checkpoints.internal" || p.OffsetSyncsTopic("B") != "mm2-offset-syncs.B.internal" ||
		p.HeartbeatsTopic() != "heartbeats" || !p.IsInternalTopic("x.internal") || !p.IsCheckpointsTopic("A.checkpoints.internal") ||
		!p.IsMM2InternalTopic("x.internal") {
		t.Error("internal topic names differ from the fallback's")
	}
	if got := p.FormatRemoteTopic("A", "orders"); got != "orders.copy" {
		t.Errorf("FormatRemoteTopic(A, orders) = %q", got)
	}
}

func TestNewRenamingErrors(t *testing.T) {
	fallback := mustNew(t, DefaultClass, "_", true, "A") // internal topics end in "_internal"
	_, err := NewRenaming(fallback, "A", mustRules(t, "a=b_internal"))
	if err == nil || !strings.Contains(err.Error(), `rule 1 (a=b_internal): the remote name "b_internal" is an internal topic name under replication.policy.separator`) {
		t.Errorf("error = %v", err)
	}
	self := mustRenaming(t, DefaultClass, "A", "a=b")
	if _, err := NewRenaming(fallback, "A", nil, self); err == nil || !strings.Contains(err.Error(), "cannot come from the flow's own source") {
		t.Errorf("inbound from the flow's source: error = %v", err)
	}
	b := mustRenaming(t, DefaultClass, "B", "a=b")
	if _, err := NewRenaming(fallback, "A", nil, b, b); err == nil || !strings.Contains(err.Error(), `two inbound flows from "B"`) {
		t.Errorf("two inbound flows: error = %v", err)
	}
	if _, err := NewRenaming(nil, "A", nil); err == nil {
		t.Error("no fallback: no error")
	}
}

func TestRenamingIsCycle(t *testing.T) {
	// Active-active A<->B with the same top-level rules on both flows: x.mirror on A came
	// from B (flow B->A), so A->B must not send it back, although A->B's own rules make
	// names like it.
	mirror := "re:^(.*)$=$1.mirror"
	ab := mustRenaming(t, IdentityClass, "A", mirror, mustRenaming(t, IdentityClass, "B", mirror))
	// Suffixes naming the source: dc1->dc2 appends .from-dc1, dc2->dc1 .from-dc2.
	dc12 := mustRenaming(t, DefaultClass, "dc1", "re:^(.*)$=$1.from-dc1", mustRenaming(t, DefaultClass, "dc2", "re:^(.*)$=$1.from-dc2"))
	// A one-way rename whose reverse flow uses the default policy.
	oneWay := mustRenaming(t, DefaultClass, "A", "orders=prod.orders")
	tests := []struct {
		name   string
		p      ReplicationPolicy
		target string
		topic  string
		want   bool
	}{
		{name: "came back from the target", p: ab, target: "B", topic: "x.mirror", want: true},
		{name: "local topic", p: ab, target: "B", topic: "x", want: false},
		{name: "suffix from the target", p: dc12, target: "dc2", topic: "orders.from-dc2", want: true},
		{name: "suffix from elsewhere", p: dc12, target: "dc2", topic: "orders.from-dc3", want: false},
		{name: "own suffix read on the source", p: dc12, target: "dc2", topic: "orders.from-dc1", want: false},
		{name: "from the target, which had it from a third cluster", p: dc12, target: "dc2", topic: "dc3.orders.from-dc2", want: true},
		{name: "from a third cluster, which had it from the target", p: dc12, target: "dc2", topic: "dc3.orders.from-dc2x", want: false},
		{name: "from a third cluster by the default policy, renamed on the way", p: dc12, target: "dc3", topic: "dc3.orders.from-dc2", want: true},
		{name: "default-policy name from the target", p: oneWay, target: "B", topic: "B.prod.orders", want: true},
		{name: "renamed name on its own source", p: oneWay, target: "B", topic: "prod.orders", want: false},
		{name: "plain", p: oneWay, target: "B", topic: "orders", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsCycle(tt.p, tt.target, tt.topic); got != tt.want {
				t.Errorf("IsCycle(target %q, %q) = %v, want %v", tt.target, tt.topic, got, tt.want)
			}
		})
	}

	// Without the inbound flow's rules the same loop goes unseen: the reason inbound exists.
	alone := mustRenaming(t, DefaultClass, "dc1", "re:^(.*)$=$1.from-dc1")
	if IsCycle(alone, "dc2", "orders.from-dc2") {
		t.Error("IsCycle without inbound rules = true; the test no longer shows why inbound rules are needed")
	}
	// A swap of two names must not walk forever.
	swap := mustRenaming(t, IdentityClass, "A", "a=b, b=a")
	if IsCycle(swap, "B", "a") || swap.OriginalTopic("a") == "" {
		t.Error("swap rules: unexpected cycle")
	}
}

func TestRenamingCheckpointTopic(t *testing.T) {
	mirror := "re:^(.*)$=$1.mirror"
	ab := mustRenaming(t, IdentityClass, "A", mirror, mustRenaming(t, IdentityClass, "B", mirror))
	tests := []struct {
		topic, want string
	}{
		{topic: "orders", want: "orders.mirror"}, // A's own topic: its remote name on B
		{topic: "orders.mirror", want: "orders"}, // came from B: back to B's name (fail-back)
		{topic: "heartbeats", want: "A.heartbeats"},
	}
	for _, tt := range tests {
		if got := CheckpointTopic(ab, "A", "B", tt.topic); got != tt.want {
			t.Errorf("CheckpointTopic(A->B, %q) = %q, want %q", tt.topic, got, tt.want)
		}
	}
}

func TestShouldReplicateRenamed(t *testing.T) {
	p := mustRenaming(t, DefaultClass, "A", "re:^(.*)$=$1.copy", mustRenaming(t, DefaultClass, "B", "re:^(.*)$=$1.copy"))
	topics := mustFilter(t, DefaultTopics(), DefaultTopicsExclude())
	for topic, want := range map[string]bool{
		"orders": true, "orders.copy": false, "B.orders": false, "heartbeats": true, "B.heartbeats": false, "__x": false,
	} {
		if got := ShouldReplicateTopic(p, topics, true, "B", topic); got != want {
			t.Errorf("ShouldReplicateTopic(A->B, %q) = %v, want %v", topic, got, want)
		}
	}
}

func TestRemoteNames(t *testing.T) {
	identity := mustRenaming(t, IdentityClass, "A", "orders=payments, re:^old-(.*)$=$1-v2, re:^bad-(.*)_(.*)$=$1-$2")
	names, errs := RemoteNames(identity, "A", []string{"orders", "payments", "old-x", "x-v2", "y", "bad-x_internal", "heartbeats", "__internal"})
	want := []struct{ name, err string }{
		{"payments", `topic "orders" is not replicated: topics "orders", "payments" would all be replicated to "payments"; change strait.rename.rules so that each gets its own remote topic (none of them is replicated until then)`},
		{"payments", `topic "payments" is not replicated: topics "orders", "payments" would all be replicated to "payments"`},
		{"x-v2", `topics "old-x", "x-v2" would all be replicated to "x-v2"`},
		{"x-v2", `topics "old-x", "x-v2" would all be replicated to "x-v2"`},
		{"y", ""},
		{"x-internal", `topic "bad-x_internal" is not replicated: its remote name "x-internal" is an internal topic; fix strait.rename.rules so that it gets an ordinary name`},
		{"A.heartbeats", ""},
		{"__internal", ""},
	}
	for i, w := range want {
		if names[i] != w.name {
			t.Errorf("names[%d] = %q, want %q", i, names[i], w.name)
		}
		switch {
		case w.err == "" && errs[i] != nil:
			t.Errorf("errs[%d] = %v, want none", i, errs[i])
		case w.err != "" && (errs[i] == nil || !strings.Contains(errs[i].Error(), w.err)):
			t.Errorf("errs[%d] = %v, want it to contain %q", i, errs[i], w.err)
		}
	}

	long := mustRenaming(t, DefaultClass, "A", "re:^(.*)$=$1-$1-$1")
	_, errs = RemoteNames(long, "A", []string{strings.Repeat("x", 100)})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "longer than Kafka's limit of 249 characters; fix strait.rename.rules") {
		t.Errorf("long name: error = %v", errs[0])
	}
	plain := mustNew(t, DefaultClass, ".", true, "")
	if _, errs := RemoteNames(plain, "A", []string{"a", "b"}); errs[0] != nil || errs[1] != nil {
		t.Errorf("default policy: errs = %v", errs)
	}
}
