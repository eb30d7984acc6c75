package policy

import (
	"strings"
	"testing"
)

// mustNew builds a policy or fails the test.
func mustNew(t *testing.T, class, sep string, internalSep bool, alias string) ReplicationPolicy {
	t.Helper()
	p, err := New(class, sep, internalSep, alias)
	if err != nil {
		t.Fatalf("New(%q, %q, %v, %q): %v", class, sep, internalSep, alias, err)
	}
	return p
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		class   string
		sep     string
		wantFmt string // FormatRemoteTopic("A", "orders") tells the two policies apart
		wantErr []string
	}{
		{name: "default FQCN", class: DefaultClass, sep: ".", wantFmt: "A.orders"},
		{name: "default simple name", class: "DefaultReplicationPolicy", sep: ".", wantFmt: "A.orders"},
		{name: "identity FQCN", class: IdentityClass, sep: ".", wantFmt: "orders"},
		{name: "identity simple name", class: "IdentityReplicationPolicy", sep: ".", wantFmt: "orders"},
		{name: "class trimmed like Java", class: " \t" + DefaultClass + " ", sep: ".", wantFmt: "A.orders"},
		{name: "separator verbatim", class: DefaultClass, sep: "_ ", wantFmt: "A_ orders"},
		{name: "unknown class", class: "com.acme.CustomReplicationPolicy", sep: ".",
			wantErr: []string{`"com.acme.CustomReplicationPolicy"`, DefaultClass, IdentityClass}},
		{name: "wrong package", class: "org.example.DefaultReplicationPolicy", sep: ".",
			wantErr: []string{`"org.example.DefaultReplicationPolicy"`, "not supported"}},
		{name: "empty class", class: "", sep: ".", wantErr: []string{`replication.policy.class ""`, DefaultClass}},
		{name: "case matters", class: "defaultreplicationpolicy", sep: ".", wantErr: []string{"not supported"}},
		{name: "empty separator", class: DefaultClass, sep: "", wantErr: []string{"replication.policy.separator is empty", `"."`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.class, tt.sep, true, "A")
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("New() = %v, want error", p)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("New() error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("New(): %v", err)
			}
			if got := p.FormatRemoteTopic("A", "orders"); got != tt.wantFmt {
				t.Errorf("FormatRemoteTopic(A, orders) = %q, want %q", got, tt.wantFmt)
			}
		})
	}
}

func TestDefaultTopicSource(t *testing.T) {
	tests := []struct {
		name         string
		sep          string
		topic        string
		wantSource   string
		wantUpstream string
		wantOK       bool
	}{
		// Spec §3.2 examples.
		{name: "two hops", sep: ".", topic: "us-west.foo.bar", wantSource: "us-west", wantUpstream: "foo.bar", wantOK: true},
		{name: "trailing separator", sep: ".", topic: "foo.", wantOK: false},
		{name: "double separator", sep: ".", topic: "a..b", wantSource: "a", wantUpstream: ".b", wantOK: true},
		{name: "leading separator gives empty source", sep: ".", topic: ".foo", wantSource: "", wantUpstream: "foo", wantOK: true},
		// Java split edge cases.
		{name: "no separator", sep: ".", topic: "foo", wantOK: false},
		{name: "empty topic", sep: ".", topic: "", wantOK: false},
		{name: "only separator", sep: ".", topic: ".", wantOK: false},
		{name: "only separators", sep: ".", topic: "...", wantOK: false},
		{name: "trailing separators", sep: ".", topic: "a...", wantOK: false},
		{name: "leading separators", sep: ".", topic: "..a", wantSource: "", wantUpstream: ".a", wantOK: true},
		{name: "trailing separator after upstream", sep: ".", topic: "a.b.", wantSource: "a", wantUpstream: "b.", wantOK: true},
		{name: "simple remote", sep: ".", topic: "A.orders", wantSource: "A", wantUpstream: "orders", wantOK: true},
		// Custom separators.
		{name: "underscore", sep: "_", topic: "us_west_foo", wantSource: "us", wantUpstream: "west_foo", wantOK: true},
		{name: "underscore ignores dots", sep: "_", topic: "us-west.foo", wantOK: false},
		{name: "double dash", sep: "--", topic: "A--foo", wantSource: "A", wantUpstream: "foo", wantOK: true},
		{name: "double dash, single dash is no separator", sep: "--", topic: "A-foo", wantOK: false},
		{name: "double dash, three dashes", sep: "--", topic: "A---foo", wantSource: "A", wantUpstream: "-foo", wantOK: true},
		{name: "double dash, trailing repeats", sep: "--", topic: "A----", wantOK: false},
		{name: "double dash, trailing odd dashes", sep: "--", topic: "A-----", wantSource: "A", wantUpstream: "---", wantOK: true},
		{name: "multi-char", sep: "::", topic: "dc1::dc2::orders", wantSource: "dc1", wantUpstream: "dc2::orders", wantOK: true},
		{name: "self-overlapping separator", sep: "xx", topic: "axxxb", wantSource: "a", wantUpstream: "xb", wantOK: true},
		{name: "self-overlapping separator at start", sep: "xx", topic: "xxxorders", wantSource: "", wantUpstream: "xorders", wantOK: true},
		{name: "non-ASCII separator", sep: "→", topic: "A→orders", wantSource: "A", wantUpstream: "orders", wantOK: true},
		// Separators with trailing spaces are used verbatim.
		{name: "separator with trailing space", sep: "_ ", topic: "A_ orders", wantSource: "A", wantUpstream: "orders", wantOK: true},
		{name: "separator with trailing space not found", sep: "_ ", topic: "A_orders", wantOK: false},
		{name: "separator with trailing space, only separator after", sep: "_ ", topic: "A_ _ ", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, DefaultClass, tt.sep, true, "")
			src, ok := p.TopicSource(tt.topic)
			if src != tt.wantSource || ok != tt.wantOK {
				t.Errorf("TopicSource(%q) = (%q, %v), want (%q, %v)", tt.topic, src, ok, tt.wantSource, tt.wantOK)
			}
			up, ok := p.UpstreamTopic(tt.topic)
			if up != tt.wantUpstream || ok != tt.wantOK {
				t.Errorf("UpstreamTopic(%q) = (%q, %v), want (%q, %v)", tt.topic, up, ok, tt.wantUpstream, tt.wantOK)
			}
			// Java's split, transcribed directly, must agree.
			jsrc, jok := javaTopicSource(tt.topic, tt.sep)
			if jsrc != src || jok != ok {
				t.Errorf("Java split gives (%q, %v), TopicSource (%q, %v)", jsrc, jok, src, ok)
			}
		})
	}
}

func TestDefaultFormatAndOriginal(t *testing.T) {
	tests := []struct {
		name         string
		sep          string
		alias, topic string
		wantRemote   string
		topicToTrace string
		wantOriginal string
	}{
		{name: "dot", sep: ".", alias: "A", topic: "orders", wantRemote: "A.orders", topicToTrace: "A.B.orders", wantOriginal: "orders"},
		{name: "local topic", sep: ".", alias: "A", topic: "orders", wantRemote: "A.orders", topicToTrace: "orders", wantOriginal: "orders"},
		{name: "trailing separator stops", sep: ".", alias: "A", topic: "foo.", wantRemote: "A.foo.", topicToTrace: "A.foo.", wantOriginal: "foo."},
		{name: "leading separator", sep: ".", alias: "A", topic: ".x", wantRemote: "A..x", topicToTrace: ".foo", wantOriginal: "foo"},
		{name: "underscore", sep: "_", alias: "us-west", topic: "orders", wantRemote: "us-west_orders", topicToTrace: "A_B_orders", wantOriginal: "orders"},
		{name: "double dash", sep: "--", alias: "A", topic: "my-topic", wantRemote: "A--my-topic", topicToTrace: "A--B--my-topic", wantOriginal: "my-topic"},
		{name: "trailing space", sep: "_ ", alias: "A", topic: "t", wantRemote: "A_ t", topicToTrace: "A_ B_ t", wantOriginal: "t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, DefaultClass, tt.sep, true, "")
			if got := p.FormatRemoteTopic(tt.alias, tt.topic); got != tt.wantRemote {
				t.Errorf("FormatRemoteTopic(%q, %q) = %q, want %q", tt.alias, tt.topic, got, tt.wantRemote)
			}
			if got := p.OriginalTopic(tt.topicToTrace); got != tt.wantOriginal {
				t.Errorf("OriginalTopic(%q) = %q, want %q", tt.topicToTrace, got, tt.wantOriginal)
			}
		})
	}
}

func TestInternalTopicNames(t *testing.T) {
	tests := []struct {
		name            string
		class           string
		sep             string
		internalSep     bool
		wantOffsetSyncs string // OffsetSyncsTopic("B")
		wantCheckpoints string // CheckpointsTopic("A")
	}{
		{name: "dot", class: DefaultClass, sep: ".", internalSep: true, wantOffsetSyncs: "mm2-offset-syncs.B.internal", wantCheckpoints: "A.checkpoints.internal"},
		{name: "dot, internal separator disabled", class: DefaultClass, sep: ".", internalSep: false, wantOffsetSyncs: "mm2-offset-syncs.B.internal", wantCheckpoints: "A.checkpoints.internal"},
		{name: "underscore", class: DefaultClass, sep: "_", internalSep: true, wantOffsetSyncs: "mm2-offset-syncs_B_internal", wantCheckpoints: "A_checkpoints_internal"},
		{name: "underscore, internal separator disabled", class: DefaultClass, sep: "_", internalSep: false, wantOffsetSyncs: "mm2-offset-syncs.B.internal", wantCheckpoints: "A.checkpoints.internal"},
		{name: "double dash", class: DefaultClass, sep: "--", internalSep: true, wantOffsetSyncs: "mm2-offset-syncs--B--internal", wantCheckpoints: "A--checkpoints--internal"},
		{name: "trailing space", class: DefaultClass, sep: "_ ", internalSep: true, wantOffsetSyncs: "mm2-offset-syncs_ B_ internal", wantCheckpoints: "A_ checkpoints_ internal"},
		{name: "identity underscore", class: IdentityClass, sep: "_", internalSep: true, wantOffsetSyncs: "mm2-offset-syncs_B_internal", wantCheckpoints: "A_checkpoints_internal"},
		{name: "identity underscore, disabled", class: IdentityClass, sep: "_", internalSep: false, wantOffsetSyncs: "mm2-offset-syncs.B.internal", wantCheckpoints: "A.checkpoints.internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.class, tt.sep, tt.internalSep, "A")
			if got := p.HeartbeatsTopic(); got != "heartbeats" {
				t.Errorf("HeartbeatsTopic() = %q, want heartbeats", got)
			}
			if got := p.OffsetSyncsTopic("B"); got != tt.wantOffsetSyncs {
				t.Errorf("OffsetSyncsTopic(B) = %q, want %q", got, tt.wantOffsetSyncs)
			}
			if got := p.CheckpointsTopic("A"); got != tt.wantCheckpoints {
				t.Errorf("CheckpointsTopic(A) = %q, want %q", got, tt.wantCheckpoints)
			}
			// The policy must recognise its own internal topics.
			for _, topic := range []string{tt.wantOffsetSyncs, tt.wantCheckpoints} {
				if !p.IsMM2InternalTopic(topic) || !p.IsInternalTopic(topic) {
					t.Errorf("%q: IsMM2InternalTopic = %v, IsInternalTopic = %v, want both true",
						topic, p.IsMM2InternalTopic(topic), p.IsInternalTopic(topic))
				}
			}
			if !p.IsCheckpointsTopic(tt.wantCheckpoints) {
				t.Errorf("IsCheckpointsTopic(%q) = false, want true", tt.wantCheckpoints)
			}
			if p.IsCheckpointsTopic(tt.wantOffsetSyncs) {
				t.Errorf("IsCheckpointsTopic(%q) = true, want false", tt.wantOffsetSyncs)
			}
		})
	}
}

func TestTopicClassification(t *testing.T) {
	type want struct{ internal, mm2Internal, checkpoints, heartbeats bool }
	tests := []struct {
		name  string
		class string
		sep   string
		topic string
		want  want
	}{
		{name: "plain topic", class: DefaultClass, sep: ".", topic: "orders"},
		{name: "remote topic", class: DefaultClass, sep: ".", topic: "A.orders"},
		{name: "consumer offsets", class: DefaultClass, sep: ".", topic: "__consumer_offsets", want: want{internal: true}},
		{name: "transaction state", class: DefaultClass, sep: ".", topic: "__transaction_state", want: want{internal: true}},
		{name: "hidden", class: DefaultClass, sep: ".", topic: ".hidden", want: want{internal: true}},
		{name: "dash internal", class: DefaultClass, sep: ".", topic: "x-internal", want: want{internal: true}},
		{name: "dot internal", class: DefaultClass, sep: ".", topic: "connect-configs.internal", want: want{internal: true, mm2Internal: true}},
		{name: "offset syncs", class: DefaultClass, sep: ".", topic: "mm2-offset-syncs.B.internal", want: want{internal: true, mm2Internal: true}},
		{name: "checkpoints", class: DefaultClass, sep: ".", topic: "A.checkpoints.internal", want: want{internal: true, mm2Internal: true, checkpoints: true}},
		{name: "mm2 configs", class: DefaultClass, sep: ".", topic: "mm2-configs.A.internal", want: want{internal: true, mm2Internal: true}},
		{name: "internal without separator", class: DefaultClass, sep: ".", topic: "internal"},
		{name: "internals", class: DefaultClass, sep: ".", topic: "a.internals"},
		{name: "underscore internal under dot", class: DefaultClass, sep: ".", topic: "x_internal"},
		{name: "single underscore prefix", class: DefaultClass, sep: ".", topic: "_schemas"},
		// With "_" the MM2 suffixes follow the separator, but ".internal" stays internal.
		{name: "underscore internal under underscore", class: DefaultClass, sep: "_", topic: "x_internal", want: want{internal: true, mm2Internal: true}},
		{name: "dot internal under underscore", class: DefaultClass, sep: "_", topic: "mm2-offset-syncs.B.internal", want: want{internal: true}},
		{name: "dot checkpoints under underscore", class: DefaultClass, sep: "_", topic: "A.checkpoints.internal", want: want{internal: true}},
		{name: "underscore checkpoints", class: DefaultClass, sep: "_", topic: "A_checkpoints_internal", want: want{internal: true, mm2Internal: true, checkpoints: true}},
		// Heartbeats, any number of hops.
		{name: "heartbeats", class: DefaultClass, sep: ".", topic: "heartbeats", want: want{heartbeats: true}},
		{name: "remote heartbeats", class: DefaultClass, sep: ".", topic: "A.heartbeats", want: want{heartbeats: true}},
		{name: "two-hop heartbeats", class: DefaultClass, sep: ".", topic: "B.A.heartbeats", want: want{heartbeats: true}},
		{name: "myheartbeats", class: DefaultClass, sep: ".", topic: "myheartbeats"},
		{name: "remote myheartbeats", class: DefaultClass, sep: ".", topic: "A.myheartbeats"},
		{name: "heartbeats prefix", class: DefaultClass, sep: ".", topic: "heartbeats.x"},
		{name: "heartbeats with other separator", class: DefaultClass, sep: ".", topic: "A_heartbeats"},
		{name: "heartbeats with underscore separator", class: DefaultClass, sep: "_", topic: "A_heartbeats", want: want{heartbeats: true}},
		// A separator inside "heartbeats" splits the name itself, as in Java.
		{name: "separator inside heartbeats", class: DefaultClass, sep: "b", topic: "heartbeats"},
		{name: "identity heartbeats", class: IdentityClass, sep: ".", topic: "heartbeats", want: want{heartbeats: true}},
		{name: "identity remote heartbeats", class: IdentityClass, sep: ".", topic: "B.A.heartbeats", want: want{heartbeats: true}},
		{name: "identity myheartbeats", class: IdentityClass, sep: ".", topic: "myheartbeats"},
		{name: "identity remote myheartbeats", class: IdentityClass, sep: ".", topic: "A.myheartbeats"},
		{name: "identity internal", class: IdentityClass, sep: ".", topic: "__consumer_offsets", want: want{internal: true}},
		{name: "identity checkpoints", class: IdentityClass, sep: ".", topic: "A.checkpoints.internal", want: want{internal: true, mm2Internal: true, checkpoints: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.class, tt.sep, true, "A")
			got := want{
				internal:    p.IsInternalTopic(tt.topic),
				mm2Internal: p.IsMM2InternalTopic(tt.topic),
				checkpoints: p.IsCheckpointsTopic(tt.topic),
				heartbeats:  p.IsHeartbeatsTopic(tt.topic),
			}
			if got != tt.want {
				t.Errorf("%q: got %+v, want %+v", tt.topic, got, tt.want)
			}
		})
	}
}

func TestIdentityPolicy(t *testing.T) {
	tests := []struct {
		name         string
		alias        string // source.cluster.alias; "" = unset
		topic        string
		wantRemote   string // FormatRemoteTopic("A", topic)
		wantSource   string
		wantSourceOK bool
		wantUp       string
		wantUpOK     bool
		wantOriginal string
	}{
		{name: "plain topic", alias: "A", topic: "orders", wantRemote: "orders",
			wantSource: "A", wantSourceOK: true, wantUp: "orders", wantUpOK: true, wantOriginal: "orders"},
		{name: "prefixed name is not parsed", alias: "A", topic: "B.orders", wantRemote: "B.orders",
			wantSource: "A", wantSourceOK: true, wantUp: "B.orders", wantUpOK: true, wantOriginal: "B.orders"},
		{name: "alias unset", alias: "", topic: "orders", wantRemote: "orders",
			wantSourceOK: false, wantUp: "orders", wantUpOK: true, wantOriginal: "orders"},
		{name: "heartbeats", alias: "A", topic: "heartbeats", wantRemote: "A.heartbeats",
			wantSourceOK: false, wantUpOK: false, wantOriginal: "heartbeats"},
		{name: "remote heartbeats", alias: "A", topic: "B.heartbeats", wantRemote: "A.B.heartbeats",
			wantSource: "B", wantSourceOK: true, wantUp: "heartbeats", wantUpOK: true, wantOriginal: "heartbeats"},
		{name: "two-hop heartbeats", alias: "A", topic: "C.B.heartbeats", wantRemote: "A.C.B.heartbeats",
			wantSource: "C", wantSourceOK: true, wantUp: "B.heartbeats", wantUpOK: true, wantOriginal: "heartbeats"},
		// Any name ending in "heartbeats" gets the default treatment (spec §3.3).
		{name: "myheartbeats", alias: "A", topic: "myheartbeats", wantRemote: "A.myheartbeats",
			wantSourceOK: false, wantUpOK: false, wantOriginal: "myheartbeats"},
		{name: "remote myheartbeats", alias: "A", topic: "B.myheartbeats", wantRemote: "A.B.myheartbeats",
			wantSource: "B", wantSourceOK: true, wantUp: "myheartbeats", wantUpOK: true, wantOriginal: "myheartbeats"},
		{name: "heartbeats not at the end", alias: "A", topic: "heartbeats-x", wantRemote: "heartbeats-x",
			wantSource: "A", wantSourceOK: true, wantUp: "heartbeats-x", wantUpOK: true, wantOriginal: "heartbeats-x"},
		{name: "heartbeats with alias unset", alias: "", topic: "B.heartbeats", wantRemote: "A.B.heartbeats",
			wantSource: "B", wantSourceOK: true, wantUp: "heartbeats", wantUpOK: true, wantOriginal: "heartbeats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, IdentityClass, ".", true, tt.alias)
			if got := p.FormatRemoteTopic("A", tt.topic); got != tt.wantRemote {
				t.Errorf("FormatRemoteTopic(A, %q) = %q, want %q", tt.topic, got, tt.wantRemote)
			}
			if src, ok := p.TopicSource(tt.topic); src != tt.wantSource || ok != tt.wantSourceOK {
				t.Errorf("TopicSource(%q) = (%q, %v), want (%q, %v)", tt.topic, src, ok, tt.wantSource, tt.wantSourceOK)
			}
			if up, ok := p.UpstreamTopic(tt.topic); up != tt.wantUp || ok != tt.wantUpOK {
				t.Errorf("UpstreamTopic(%q) = (%q, %v), want (%q, %v)", tt.topic, up, ok, tt.wantUp, tt.wantUpOK)
			}
			if got := p.OriginalTopic(tt.topic); got != tt.wantOriginal {
				t.Errorf("OriginalTopic(%q) = %q, want %q", tt.topic, got, tt.wantOriginal)
			}
		})
	}
}

// loopPolicy is a faulty custom policy whose upstream names never end; the walks must stop.
type loopPolicy struct{ ReplicationPolicy }

func (loopPolicy) TopicSource(string) (string, bool) { return "X", true }

func (loopPolicy) UpstreamTopic(topic string) (string, bool) { return topic + "+", true }

func TestWalksStopOnFaultyPolicy(t *testing.T) {
	p := loopPolicy{}
	if IsCycle(p, "B", "t") {
		t.Error("IsCycle on an endless upstream chain = true, want false")
	}
	if got := originalTopic(p, "t"); !strings.HasPrefix(got, "t+") {
		t.Errorf("originalTopic on an endless chain = %q, want a name after some hops", got)
	}
}
