package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func sourceConsumer(f *Flow) Client { return f.SourceConsumer }
func sourceAdmin(f *Flow) Client    { return f.SourceAdmin }
func sourceProducer(f *Flow) Client { return f.SourceProducer }
func targetProducer(f *Flow) Client { return f.TargetProducer }
func targetAdmin(f *Flow) Client    { return f.TargetAdmin }
func targetConsumer(f *Flow) Client { return f.TargetConsumer }

// TestClientPrecedence covers MM2's client-config resolution (spec §1.5):
// which file key wins for each client role.
func TestClientPrecedence(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		role        func(*Flow) Client
		key         string
		want        string // "" means the key must be absent
		wantFrom    string // the file key the value came from
		wantWarning string // a substring of the warnings
	}{
		{
			name: "cluster consumer key beats cluster key beats top level",
			src:  base + "security.protocol = SASL_PLAINTEXT\nA.security.protocol = SASL_SSL\nA.consumer.security.protocol = SSL\n",
			role: sourceConsumer, key: "security.protocol", want: "SSL", wantFrom: "A.consumer.security.protocol",
		},
		{
			name: "cluster key beats top level",
			src:  base + "security.protocol = SASL_PLAINTEXT\nA.security.protocol = SASL_SSL\n",
			role: sourceConsumer, key: "security.protocol", want: "SASL_SSL", wantFrom: "A.security.protocol",
		},
		{
			name: "top-level connection key reaches every cluster",
			src:  base + "security.protocol = SASL_PLAINTEXT\n",
			role: targetAdmin, key: "security.protocol", want: "SASL_PLAINTEXT", wantFrom: "security.protocol",
		},
		{
			name: "put-if-absent: a cluster consumer override does not touch the admin",
			src:  base + "A.consumer.bootstrap.servers = a-consumer.example:9093\n",
			role: sourceAdmin, key: "bootstrap.servers", want: "a.example:9092", wantFrom: "A.bootstrap.servers",
		},
		{
			name: "put-if-absent: the cluster consumer override wins for the consumer",
			src:  base + "A.consumer.bootstrap.servers = a-consumer.example:9093\n",
			role: sourceConsumer, key: "bootstrap.servers", want: "a-consumer.example:9093", wantFrom: "A.consumer.bootstrap.servers",
		},
		{
			name: "top-level consumer keys are ignored",
			src:  base + "consumer.max.poll.records = 5\n",
			role: sourceConsumer, key: "max.poll.records", want: "",
			wantWarning: `key "consumer.max.poll.records" (line 5): has no effect: MM2 ignores client settings at the top level; use <alias>.consumer.max.poll.records`,
		},
		{
			name: "cluster consumer keys reach the source consumer",
			src:  base + "A.consumer.max.poll.records = 5\n",
			role: sourceConsumer, key: "max.poll.records", want: "5", wantFrom: "A.consumer.max.poll.records",
		},
		{
			name: "cluster consumer keys reach the target consumer of the reverse flow",
			src:  base + "B->A.enabled = true\nA.consumer.max.poll.records = 5\n",
			role: sourceConsumer, key: "max.poll.records", want: "5", wantFrom: "A.consumer.max.poll.records",
		},
		{
			name: "flow consumer keys apply when the cluster does not set them",
			src:  base + "A->B.consumer.max.poll.records = 7\n",
			role: sourceConsumer, key: "max.poll.records", want: "7", wantFrom: "A->B.consumer.max.poll.records",
		},
		{
			name: "flow consumer keys also reach the flow's target consumer",
			src:  base + "A->B.consumer.max.poll.records = 7\n",
			role: targetConsumer, key: "max.poll.records", want: "7", wantFrom: "A->B.consumer.max.poll.records",
		},
		{
			name: "cluster consumer keys are applied after the flow's consumer keys",
			src:  base + "A.consumer.max.poll.records = 5\nA->B.consumer.max.poll.records = 7\n",
			role: sourceConsumer, key: "max.poll.records", want: "5", wantFrom: "A.consumer.max.poll.records",
			wantWarning: `key "A->B.consumer.max.poll.records" (line 6): has no effect on the source consumer of A->B: MM2 applies "A.consumer.max.poll.records" (line 5) after it; set A->B.source.consumer.max.poll.records instead`,
		},
		{
			name: "flow source.consumer keys win",
			src:  base + "A.consumer.max.poll.records = 5\nA->B.source.consumer.max.poll.records = 7\n",
			role: sourceConsumer, key: "max.poll.records", want: "7", wantFrom: "A->B.source.consumer.max.poll.records",
		},
		{
			name: "flow cluster connection override",
			src:  base + "A->B.source.cluster.security.protocol = SSL\n",
			role: sourceAdmin, key: "security.protocol", want: "SSL", wantFrom: "A->B.source.cluster.security.protocol",
		},
		{
			name: "source consumer defaults to earliest",
			src:  base,
			role: sourceConsumer, key: "auto.offset.reset", want: "earliest", wantFrom: "auto.offset.reset",
		},
		{
			name: "auto.offset.reset latest is honoured",
			src:  base + "A.consumer.auto.offset.reset = latest\n",
			role: sourceConsumer, key: "auto.offset.reset", want: "latest", wantFrom: "A.consumer.auto.offset.reset",
		},
		{
			name: "enable.auto.commit never reaches a client",
			src:  base + "A.consumer.enable.auto.commit = true\n",
			role: sourceConsumer, key: "enable.auto.commit", want: "",
			wantWarning: "ignored: MM2 forces enable.auto.commit = false, and Strait never autocommits",
		},
		{
			name: "connector key consumer.poll.timeout.ms is not a client key",
			src:  base + "consumer.poll.timeout.ms = 500\n",
			role: sourceConsumer, key: "poll.timeout.ms", want: "",
		},
		{
			name: "data producer takes the target's producer keys",
			src:  base + "B.producer.linger.ms = 20\n",
			role: targetProducer, key: "linger.ms", want: "20", wantFrom: "B.producer.linger.ms",
		},
		{
			name: "producer.override beats the target's producer keys",
			src:  base + "B.producer.linger.ms = 20\nA->B.producer.override.linger.ms = 50\n",
			role: targetProducer, key: "linger.ms", want: "50", wantFrom: "A->B.producer.override.linger.ms",
		},
		{
			name: "producer.override does not reach the offset-syncs producer",
			src:  base + "A->B.producer.override.linger.ms = 50\n",
			role: sourceProducer, key: "override.linger.ms", want: "",
		},
		{
			name: "source producer takes the source's producer keys",
			src:  base + "A.producer.acks = 1\n",
			role: sourceProducer, key: "acks", want: "1", wantFrom: "A.producer.acks",
		},
		{
			name: "acks = all for one flow's data beats the target's acks = 1",
			src:  base + "B.producer.acks = 1\nA->B.producer.override.acks = all\nemit.heartbeats.enabled = false\n",
			role: targetProducer, key: "acks", want: "all", wantFrom: "A->B.producer.override.acks",
		},
		{
			name: "admin.timeout.ms is a connector key, not an admin key",
			src:  base + "admin.timeout.ms = 1000\n",
			role: sourceAdmin, key: "timeout.ms", want: "",
		},
		{
			name: "cluster admin keys",
			src:  base + "B.admin.request.timeout.ms = 1000\n",
			role: targetAdmin, key: "request.timeout.ms", want: "1000", wantFrom: "B.admin.request.timeout.ms",
		},
		{
			name: "bare client keys at cluster scope have no effect",
			src:  base + "B.compression.type = zstd\n",
			role: targetProducer, key: "compression.type", want: "",
			wantWarning: `has no effect: MM2 passes only connection settings (bootstrap.servers, security.protocol, ssl.*, sasl.*) from a cluster to its clients; set B.producer.compression.type`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			p, ok := tt.role(flowOf(t, c, "A->B")).Prop(tt.key)
			switch {
			case tt.want == "" && ok:
				t.Errorf("%s = %q from %v; want it absent", tt.key, p.Value.Reveal(), p.Origin)
			case tt.want != "" && !ok:
				t.Errorf("%s is absent; want %q", tt.key, tt.want)
			case tt.want != "" && (p.Value.Reveal() != tt.want || p.Origin.Key != tt.wantFrom):
				t.Errorf("%s = %q from %q; want %q from %q", tt.key, p.Value.Reveal(), p.Origin.Key, tt.want, tt.wantFrom)
			}
			if tt.wantWarning != "" && !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant one containing:\n%s", warningsText(c), tt.wantWarning)
			}
		})
	}
}

// TestFlowResolution covers connector settings: defaults, the top level as
// the default for every flow, flow scope overriding it, worker keys read
// from the target, legacy names and Strait's own keys.
func TestFlowResolution(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		check       func(t *testing.T, c *Config)
		wantWarning string
	}{
		{
			name: "MM2 defaults, with Strait's shorter refresh and flush",
			src:  base,
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "A->B")
				want := Flow{
					Source: "A", Target: "B", Enabled: true,
					Policy:                            Policy{Class: DefaultPolicyClass, Separator: ".", InternalSeparatorEnabled: true},
					Topics:                            []string{".*"},
					TopicsExclude:                     []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`},
					ReplicationFactor:                 2,
					RefreshTopicsEnabled:              true,
					RefreshTopicsInterval:             5 * time.Second,
					SyncTopicConfigsEnabled:           true,
					SyncTopicConfigsInterval:          600 * time.Second,
					ConfigPropertiesExclude:           defaultConfigPropertiesExclude,
					UseDefaultsFrom:                   "target",
					SyncTopicACLsEnabled:              true,
					SyncTopicACLsInterval:             600 * time.Second,
					HeartbeatsReplication:             true,
					EmitOffsetSyncsEnabled:            true,
					OffsetSyncsTopicLocation:          "source",
					OffsetSyncsTopicReplicationFactor: 3,
					OffsetLagMax:                      100,
					Groups:                            []string{".*"},
					GroupsExclude:                     []string{"console-consumer-.*", "connect-.*", "__.*"},
					RefreshGroupsEnabled:              true,
					RefreshGroupsInterval:             StraitRefreshGroupsInterval,
					EmitCheckpointsEnabled:            true,
					EmitCheckpointsInterval:           StraitCheckpointInterval,
					SyncGroupOffsetsInterval:          StraitCheckpointInterval,
					CheckpointsTopicReplicationFactor: 3,
					EmitHeartbeatsEnabled:             true,
					EmitHeartbeatsInterval:            time.Second,
					HeartbeatsTopicReplicationFactor:  3,
					TasksMax:                          1,
					AdminTimeout:                      time.Minute,
					FlushInterval:                     time.Second,
					SessionTimeout:                    10 * time.Second,
					HeartbeatInterval:                 3 * time.Second,
					RebalanceTimeout:                  time.Minute,
					FastPath:                          true,
					IndexMaxSegments:                  10000,
					ExactlyOnceSourceSupport:          "disabled",
					ExactlyOnceSupport:                "requested",
					TransactionBoundary:               "poll",
					TransactionInterval:               time.Second,
					TransactionTimeout:                StraitTransactionTimeout,
					OffsetStorageTopic:                "mm2-offsets.A.internal",
					PreserveTopics:                    []string{".*"},
				}
				got := *f
				got.SourceConsumer, got.SourceAdmin, got.SourceProducer = Client{}, Client{}, Client{}
				got.TargetProducer, got.TargetAdmin, got.TargetConsumer = Client{}, Client{}, Client{}
				got.Origins = nil
				if msg := diffFlows(got, want); msg != "" {
					t.Error(msg)
				}
				if len(f.Origins) != 1 || f.Origins["enabled"].Key != "A->B.enabled" {
					t.Errorf("origins = %v, want only enabled", f.Origins)
				}
			},
		},
		{
			name: "top level is the default, flow scope overrides it",
			src:  base + "B->A.enabled = true\ntopics = orders.*\nA->B.topics = payments\nreplication.factor = 3\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"payments"}) {
					t.Errorf("A->B topics = %q", got)
				}
				if got := flowOf(t, c, "B->A").Topics; !slices.Equal(got, []string{"orders.*"}) {
					t.Errorf("B->A topics = %q", got)
				}
				if f := flowOf(t, c, "A->B"); f.ReplicationFactor != 3 || f.Origins["replication.factor"].Line != 8 {
					t.Errorf("replication.factor = %d from %v", f.ReplicationFactor, f.Origins["replication.factor"])
				}
			},
		},
		{
			name: "connector keys at cluster scope have no effect",
			src:  base + "A.topics = orders\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{".*"}) {
					t.Errorf("topics = %q", got)
				}
			},
			wantWarning: `key "A.topics" (line 5): has no effect: MM2 reads connector settings at the top level or per flow, not per cluster; set topics or A->B.topics`,
		},
		{
			name: "LIST parsing keeps a trailing empty element",
			src:  base + "topics = a , b,\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"a", "b", ""}) {
					t.Errorf("topics = %q", got)
				}
			},
		},
		{
			name: "an empty list matches nothing",
			src:  base + "A->B.groups =\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Groups; got == nil || len(got) != 0 {
					t.Errorf("groups = %#v, want empty", got)
				}
			},
		},
		{
			name: "set refresh interval is kept and marked",
			src:  base + "refresh.topics.interval.seconds = 600\n",
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "A->B")
				if f.RefreshTopicsInterval != 10*time.Minute || !f.RefreshTopicsIntervalSet {
					t.Errorf("refresh = %v set %v", f.RefreshTopicsInterval, f.RefreshTopicsIntervalSet)
				}
			},
		},
		{
			name: "flush interval from the target's worker config; top level ignored",
			src:  base + "offset.flush.interval.ms = 100\nB.offset.flush.interval.ms = 250\n",
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "A->B")
				if f.FlushInterval != 250*time.Millisecond || !f.FlushIntervalSet || f.Origins["offset.flush.interval.ms"].Key != "B.offset.flush.interval.ms" {
					t.Errorf("flush = %v set %v from %v", f.FlushInterval, f.FlushIntervalSet, f.Origins["offset.flush.interval.ms"])
				}
			},
			wantWarning: `key "offset.flush.interval.ms" (line 5): has no effect at the top level: offset.flush.interval.ms is a Connect worker setting, which MM2 reads per target cluster; set B.offset.flush.interval.ms`,
		},
		{
			name: "top-level worker-prefixed keys override the target's",
			src:  base + "B.offset.storage.topic = b-offsets\noffset.storage.topic = all-offsets\n",
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "A->B")
				if f.OffsetStorageTopic != "all-offsets" || f.Origins["offset.storage.topic"].Key != "offset.storage.topic" {
					t.Errorf("offset.storage.topic = %q from %v", f.OffsetStorageTopic, f.Origins["offset.storage.topic"])
				}
			},
		},
		{
			name: "worker keys from the target's cluster scope",
			src:  base + "B.offset.storage.topic = b-offsets\n",
			check: func(t *testing.T, c *Config) {
				if f := flowOf(t, c, "A->B"); f.OffsetStorageTopic != "b-offsets" {
					t.Errorf("offset.storage.topic = %q", f.OffsetStorageTopic)
				}
			},
		},
		{
			name: "source cluster worker keys do not apply",
			src:  base + "A.offset.flush.interval.ms = 250\n",
			check: func(t *testing.T, c *Config) {
				if f := flowOf(t, c, "A->B"); f.FlushIntervalSet || f.FlushInterval != time.Second {
					t.Errorf("flush = %v set %v", f.FlushInterval, f.FlushIntervalSet)
				}
			},
		},
		{
			name: "exactly once from the target",
			src:  base + "B.exactly.once.source.support = ENABLED\nA.consumer.isolation.level = read_committed\nA->B.exactly.once.support = required\n",
			check: func(t *testing.T, c *Config) {
				if f := flowOf(t, c, "A->B"); !f.ExactlyOnce || f.ExactlyOnceSupport != "required" {
					t.Errorf("exactly once = %v support %q", f.ExactlyOnce, f.ExactlyOnceSupport)
				}
			},
		},
		{
			name: "exactly.once.support is ignored at the top level",
			src:  base + "exactly.once.support = required\n",
			check: func(t *testing.T, c *Config) {
				if f := flowOf(t, c, "A->B"); f.ExactlyOnceSupport != "requested" {
					t.Errorf("support = %q", f.ExactlyOnceSupport)
				}
			},
			wantWarning: "has no effect at the top level: MM2 reads exactly.once.support only per flow; set A->B.exactly.once.support",
		},
		{
			name: "required without isolation.level warns for MM2's sake",
			src:  base + "A->B.exactly.once.support = required\nstrait.exactly.once = true\n",
			check: func(t *testing.T, c *Config) {
				if f := flowOf(t, c, "A->B"); f.ExactlyOnceSupport != "required" {
					t.Errorf("support = %q", f.ExactlyOnceSupport)
				}
			},
			wantWarning: "set A.consumer.isolation.level = read_committed so the file also works with MM2",
		},
		{
			name: "throttle at the top level, overridden per flow",
			src:  base + "B->A.enabled = true\nstrait.throttle.bytes.per.second = 1000\nA->B.strait.throttle.bytes.per.second = 0\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").ThrottleBytesPerSecond; got != 0 {
					t.Errorf("A->B throttle = %d", got)
				}
				if got := flowOf(t, c, "B->A").ThrottleBytesPerSecond; got != 1000 {
					t.Errorf("B->A throttle = %d", got)
				}
			},
		},
		{
			name: "throttle at cluster scope has no effect",
			src:  base + "A.strait.throttle.bytes.per.second = 1000\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").ThrottleBytesPerSecond; got != 0 {
					t.Errorf("throttle = %d", got)
				}
			},
			wantWarning: "has no effect: Strait reads strait.throttle.bytes.per.second at the top level or per flow (A->B.strait.throttle.bytes.per.second), not per cluster",
		},
		{
			name: "deprecated blacklist is read as exclude",
			src:  base + "topics.blacklist = tmp.*\n",
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "A->B")
				if !slices.Equal(f.TopicsExclude, []string{"tmp.*"}) || f.Origins["topics.exclude"].Key != "topics.blacklist" {
					t.Errorf("exclude = %q from %v", f.TopicsExclude, f.Origins["topics.exclude"])
				}
			},
			wantWarning: `key "topics.blacklist" (line 5): topics.blacklist is deprecated since Kafka 2.8 and removed in 4.0: rename it to topics.exclude`,
		},
		{
			name: "the new name wins over the deprecated one",
			src:  base + "groups.blacklist = tmp.*\nA->B.groups.exclude = test.*\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").GroupsExclude; !slices.Equal(got, []string{"test.*"}) {
					t.Errorf("groups.exclude = %q", got)
				}
			},
			wantWarning: `key "groups.blacklist" (line 5): ignored: "A->B.groups.exclude" (line 6) is set too and wins, as in MM2`,
		},
		{
			name: "whitelist is applied as the include list, with a warning",
			src:  base + "topics.whitelist = orders.*\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"orders.*"}) {
					t.Errorf("topics = %q", got)
				}
			},
			wantWarning: "MM2 has no topics.whitelist (MirrorMaker 1 had --whitelist) and ignores it, replicating everything; the include list is topics",
		},
		{
			name: "whitelist loses to topics",
			src:  base + "topics = payments\nA->B.whitelist = orders.*\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"payments"}) {
					t.Errorf("topics = %q", got)
				}
			},
			wantWarning: `key "A->B.whitelist" (line 6): ignored: "topics" (line 5) is set too and wins`,
		},
		{
			name:        "removed keys are ignored with a warning",
			src:         base + "use.incremental.alter.configs = required\n",
			check:       func(t *testing.T, c *Config) {},
			wantWarning: "use.incremental.alter.configs was removed in Kafka 4.0",
		},
		{
			name: "every ordered pair gets a heartbeat flow by default",
			src:  "clusters = A, B, C\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nC.bootstrap.servers = c:1\nA->B.enabled = TRUE\n",
			check: func(t *testing.T, c *Config) {
				want := []string{"A->B", "A->C", "B->A", "B->C", "C->A", "C->B"}
				if got := flowNames(c); !slices.Equal(got, want) {
					t.Errorf("flows = %v, want %v", got, want)
				}
				if got := len(c.EnabledFlows()); got != 1 {
					t.Errorf("enabled = %d, want 1", got)
				}
			},
		},
		{
			name: "heartbeats off: only enabled pairs, plus pairs that turn heartbeats back on",
			src:  base + "emit.heartbeats.enabled = false\nB->A.emit.heartbeats.enabled = true\n",
			check: func(t *testing.T, c *Config) {
				if got := flowNames(c); !slices.Equal(got, []string{"A->B", "B->A"}) {
					t.Errorf("flows = %v", got)
				}
				if f := flowOf(t, c, "A->B"); f.EmitHeartbeatsEnabled {
					t.Error("A->B emits heartbeats")
				}
			},
		},
		{
			name: "a top-level enabled enables every pair",
			src:  "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nenabled = true\n",
			check: func(t *testing.T, c *Config) {
				if got := len(c.EnabledFlows()); got != 2 {
					t.Errorf("enabled = %d, want 2", got)
				}
			},
			wantWarning: "a top-level enabled applies to every pair MM2 creates",
		},
		{
			name: "trailing whitespace on enabled: the connectors trim it",
			src:  base + "B->A.enabled = true \n",
			check: func(t *testing.T, c *Config) {
				if !flowOf(t, c, "B->A").Enabled {
					t.Error("B->A is not enabled")
				}
			},
			wantWarning: `key "B->A.enabled" (line 5): the value has whitespace around it: MM2 reads this key both untrimmed (as false) and trimmed (as true); remove the whitespace`,
		},
		{
			name: "separator is used raw",
			src:  base + "replication.policy.separator = _ \n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Policy.Separator; got != "_ " {
					t.Errorf("separator = %q", got)
				}
			},
			wantWarning: `the separator "_ " has whitespace around it`,
		},
		{
			name: "policy by simple name",
			src:  base + "A->B.replication.policy.class = IdentityReplicationPolicy\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Policy.Class; got != IdentityPolicyClass {
					t.Errorf("class = %q", got)
				}
			},
			wantWarning: "MM2 loads the policy by its full class name",
		},
		{
			name:  "unknown keys get a suggestion",
			src:   base + "A->B.sync.group.offset.enabled = true\nB.producer.lingr.ms = 5\nA.consumer.linger.ms = 5\nrefresh.topic.interval.seconds = 5\n",
			check: func(t *testing.T, c *Config) {},
			wantWarning: `key "A->B.sync.group.offset.enabled" (line 5): unknown key (not an MM2, Connect or Kafka client setting), ignored; did you mean A->B.sync.group.offsets.enabled?
key "B.producer.lingr.ms" (line 6): unknown key (not an MM2, Connect or Kafka client setting), ignored; did you mean B.producer.linger.ms?
key "A.consumer.linger.ms" (line 7): has no effect: linger.ms is a producer setting, not a consumer setting
key "refresh.topic.interval.seconds" (line 8): unknown key (not an MM2, Connect or Kafka client setting), ignored; did you mean refresh.topics.interval.seconds?`,
		},
		{
			name:  "a misspelt alias prefix",
			src:   "clusters = west, east\nwest.bootstrap.servers = w:1\neast.bootstrap.servers = e:1\nwest->east.enabled = true\nwset.consumer.max.poll.records = 5\nprimary.bootstrap.servers = x:1\n",
			check: func(t *testing.T, c *Config) {},
			wantWarning: `key "wset.consumer.max.poll.records" (line 5): unknown key, ignored: "wset" is not in clusters (west, east); did you mean "west.consumer.max.poll.records"?
key "primary.bootstrap.servers" (line 6): unknown key, ignored: "primary" is not in clusters (west, east)`,
		},
		{
			name: "a duplicate key: the last wins",
			src:  base + "topics = a\ntopics = b\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"b"}) {
					t.Errorf("topics = %q", got)
				}
			},
			wantWarning: `key "topics" (line 6): the key is set again; this value replaces the one on line 5 (the last one wins, as in MM2)`,
		},
		{
			name: "a regex escape lost to properties escaping",
			src:  base + `topics = orders-\d+` + "\n",
			check: func(t *testing.T, c *Config) {
				if got := flowOf(t, c, "A->B").Topics; !slices.Equal(got, []string{"orders-d+"}) {
					t.Errorf("topics = %q", got)
				}
			},
			wantWarning: `\d in a properties file is an escape that reads as plain "d", not a regex class: write \\d`,
		},
		{
			name: "cluster-level clients for tools",
			src:  base + "A.admin.request.timeout.ms = 5\nA.consumer.isolation.level = read_committed\n",
			check: func(t *testing.T, c *Config) {
				a := c.Cluster["A"]
				if v, _ := a.Admin.Get("request.timeout.ms"); v != "5" {
					t.Errorf("admin request.timeout.ms = %q", v)
				}
				if v, _ := a.Consumer.Get("isolation.level"); v != "read_committed" {
					t.Errorf("consumer isolation.level = %q", v)
				}
				if v, _ := a.Producer.Get("bootstrap.servers"); v != "a.example:9092" {
					t.Errorf("producer bootstrap.servers = %q", v)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
			if tt.wantWarning != "" && !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant them to contain:\n%s", warningsText(c), tt.wantWarning)
			}
		})
	}
}

// diffFlows names the first field where two flows differ.
func diffFlows(got, want Flow) string {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			return fmt.Sprintf("%s = %#v, want %#v", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
	return ""
}
