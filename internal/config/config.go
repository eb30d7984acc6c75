// Package config turns an MM2 dedicated-mode .properties file into a typed,
// validated Config: clusters, flows (ordered source->target pairs) and the
// client settings of every role, resolved with MM2's precedence rules
// (spec mm2-compat.md §1). It does no network I/O.
//
// Parse (and Load) is the single entry point and runs every check: it
// collects each problem with its key and line into an *Errors, and the
// non-fatal findings into Config.Warnings. Choices where Strait reads a file
// differently from MM2, each reported by a warning or an error:
//
//   - Validation covers the whole file, every pair MM2 would create, not only
//     the flows --clusters selects, so all nodes sharing a file agree on it.
//   - topics.whitelist, groups.whitelist and the like (never MM2 keys) are
//     applied as the include list when topics/groups is not set; MM2 ignores
//     them and would replicate everything.
//   - offset.flush.interval.ms and exactly.once.source.support are worker
//     settings: read from <target>.*, ignored at the top level, as in MM2.
//   - Settings Strait reads but does not act on yet (tasks.max,
//     admin.timeout.ms, ...) each get a warning that says so and what
//     Strait does instead; Connect transforms are refused.
//   - The producer of replicated data must use acks=all.
//   - Exactly-once mode is on when the target's
//     exactly.once.source.support is enabled or strait.exactly.once is
//     true. It needs the fast path, the idempotent producer and a
//     transaction.timeout.ms of at least twice the transaction interval;
//     exactly.once.support = required on a flow without it is an error, as
//     MM2 refuses such a connector. transaction.boundary = poll commits
//     every offset.flush.interval.ms, not per poll.
//   - Strait rejects up front what MM2 fails on only at runtime
//     (non-positive intervals of running features, emit.checkpoints or
//     emit.offset-syncs disabled on an enabled flow), and what it cannot run
//     the same way: regexes RE2 cannot express (lookaround, backreferences,
//     possessive quantifiers) and custom filter or policy classes.
//   - Values are read as UTF-8 (java.util.Properties reads ISO-8859-1).
package config

import (
	"fmt"
	"time"

	"strait/internal/policy"
)

// Secret holds a sensitive value. It prints as [redacted] everywhere
// (fmt verbs, slog, JSON) so that a secret cannot leak through logs, errors
// or `strait check` output. Reveal returns the real value for the one place
// that needs it: building a client.
type Secret struct{ v string }

// NewSecret wraps a sensitive value.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the secret value.
func (s Secret) Reveal() string { return s.v }

// String implements fmt.Stringer.
func (s Secret) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer.
func (s Secret) GoString() string { return "[redacted]" }

// MarshalText implements encoding.TextMarshaler (JSON, YAML, slog).
func (s Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Origin says where a value came from, for error messages.
type Origin struct {
	Key  string // the key as written in the file, e.g. "A->B.topics"
	Line int    // 1-based line of the key; 0 when the value is a default
	// File names the overlay the key came from (LoadOptions.Overlays: a
	// file or flag of the command line); "" is the configuration file.
	File string
}

// String implements fmt.Stringer: `key "A->B.topics" (line 12)`, or
// `key "A.ssl.truststore.location" (source.properties, line 3)`.
func (o Origin) String() string {
	switch {
	case o.Line == 0:
		return fmt.Sprintf("key %q (default)", o.Key)
	case o.File != "":
		return fmt.Sprintf("key %q (%s, line %d)", o.Key, o.File, o.Line)
	}
	return fmt.Sprintf("key %q (line %d)", o.Key, o.Line)
}

// ClientProp is one Java client property (e.g. "linger.ms") as it applies to
// one client role after MM2's precedence rules.
type ClientProp struct {
	Key    string // Java client key without any prefix, e.g. "compression.type"
	Value  Secret // the value; secret or not, it is only revealed when building a client
	Secret bool   // true for passwords, JAAS configs, private keys
	Origin Origin
}

// Display returns the value for humans: the value itself, or [redacted].
func (p ClientProp) Display() string {
	if p.Secret {
		return "[redacted]"
	}
	return p.Value.Reveal()
}

// Client is the resolved Java-client configuration of one role of a flow.
type Client struct {
	Cluster string       // alias of the cluster this client talks to
	Props   []ClientProp // sorted by Key; each key at most once
}

// Get returns the value of a Java client key and whether it is set.
func (c Client) Get(key string) (string, bool) {
	for _, p := range c.Props {
		if p.Key == key {
			return p.Value.Reveal(), true
		}
	}
	return "", false
}

// Prop returns the property for key and whether it is set.
func (c Client) Prop(key string) (ClientProp, bool) {
	for _, p := range c.Props {
		if p.Key == key {
			return p, true
		}
	}
	return ClientProp{}, false
}

// Cluster is one alias of the `clusters` list with its connection settings.
type Cluster struct {
	Alias            string
	BootstrapServers []string // from <alias>.bootstrap.servers > bootstrap.servers
	SecurityProtocol string   // resolved: <alias>.security.protocol > security.protocol > PLAINTEXT

	// Clients for tools that talk to one cluster outside any flow (status,
	// offset translation, failover), as MM2's MirrorClientConfig builds
	// them: the cluster's connection keys, then <alias>.admin.*,
	// <alias>.consumer.* or <alias>.producer.*.
	Admin    Client
	Consumer Client
	Producer Client
}

// Policy names the replication policy of a flow (spec §3) and its rename
// rules. Flow.ReplicationPolicy builds it.
type Policy struct {
	// Class is the built-in policy that runs: DefaultPolicyClass or
	// IdentityPolicyClass. A simple name in the file is expanded, and a
	// third-party class that names topics the same way
	// (policy.BuiltinClass) is replaced, with a warning.
	Class                    string
	Separator                string // replication.policy.separator, raw (not trimmed), default "."
	InternalSeparatorEnabled bool   // replication.policy.internal.topic.separator.enabled, default true
	// Rules is strait.rename.rules (top level, or per flow): the remote
	// names of the topics a rule matches; Class names the others. nil when
	// the flow renames nothing.
	Rules *policy.Rules
	// Inbound are the policies of the enabled flows into this flow's
	// source that have rename rules, by their source alias (nil when none
	// has): reading a topic name of the source, cycle detection and
	// checkpoints undo those flows' renames. Their own Inbound is nil.
	Inbound map[string]Policy
}

// Flow is one ordered pair source->target that this node runs: either an
// enabled replication flow, or a heartbeat-only pair (as MM2 creates a herder
// for every pair with heartbeats enabled, spec §1.5).
//
// Every field holds MM2's default unless the file sets it (see Origins);
// Strait departs from MM2's defaults only where a field's comment says so.
// Every interval is positive: a feature that is off keeps its interval, so
// check the matching ...Enabled field.
type Flow struct {
	Source string // source alias
	Target string // target alias
	// Enabled is true when the flow replicates data: the connectors' enabled
	// (from <src>-><tgt>.enabled, or a top-level enabled) is true. It is
	// false for a heartbeat-only pair.
	Enabled bool

	Policy Policy

	// Topic selection and creation (MirrorSourceConnector).
	Topics               []string // regex list, default [".*"]
	TopicsExclude        []string // default [".*[\-\.]internal", ".*\.replica", "__.*"]
	ReplicationFactor    int      // replication.factor, default 2; -1 = broker default
	RefreshTopicsEnabled bool
	// RefreshTopicsInterval is refresh.topics.interval.seconds. When the
	// file does not set it (RefreshTopicsIntervalSet false) it is 5 s, not
	// MM2's 600 s: Strait picks up new topics within seconds.
	RefreshTopicsInterval    time.Duration
	RefreshTopicsIntervalSet bool
	// SyncTopicConfigsEnabled and SyncTopicACLsEnabled (and their
	// intervals) turn on the topic reconciler's config sync and the ACL
	// syncer (internal/topics, internal/acls).
	SyncTopicConfigsEnabled  bool
	SyncTopicConfigsInterval time.Duration
	ConfigPropertiesExclude  []string
	UseDefaultsFrom          string // "target" (default) or "source"
	SyncTopicACLsEnabled     bool
	SyncTopicACLsInterval    time.Duration
	HeartbeatsReplication    bool // heartbeats.replication.enabled, default true

	// Offset syncs.
	EmitOffsetSyncsEnabled            bool
	OffsetSyncsTopicLocation          string // "source" (default) or "target"
	OffsetSyncsTopicReplicationFactor int
	OffsetLagMax                      int64

	// Checkpoints and group offset sync (MirrorCheckpointConnector).
	Groups                            []string // default [".*"]
	GroupsExclude                     []string // default ["console-consumer-.*", "connect-.*", "__.*"]
	RefreshGroupsEnabled              bool     // not honoured yet when false: groups are listed every RefreshGroupsInterval (Parse warns)
	RefreshGroupsInterval             time.Duration
	EmitCheckpointsEnabled            bool
	EmitCheckpointsInterval           time.Duration
	SyncGroupOffsetsEnabled           bool
	SyncGroupOffsetsInterval          time.Duration
	CheckpointsTopicReplicationFactor int

	// Heartbeats (MirrorHeartbeatConnector).
	EmitHeartbeatsEnabled            bool
	EmitHeartbeatsInterval           time.Duration
	HeartbeatsTopicReplicationFactor int

	TasksMax     int           // tasks.max; not honoured (Parse warns when it is set): Strait has no tasks
	AdminTimeout time.Duration // admin.timeout.ms; not honoured yet (Parse warns unless it is MM2's 60 s)
	// FlushInterval is the worker's offset.flush.interval.ms, which MM2 reads
	// only from the target's cluster scope (<target>.offset.flush.interval.ms;
	// a top-level offset.flush.interval.ms is ignored, spec §1.2). When the
	// file does not set it (FlushIntervalSet false) Strait commits progress
	// every second instead of Connect's 60 s.
	FlushInterval    time.Duration
	FlushIntervalSet bool

	// ExactlyOnce turns on exactly-once mode: the flow writes its data in
	// transactions on the target. It is true when the target's worker
	// setting <target>.exactly.once.source.support is enabled (MM2's key;
	// preparing is not), or when strait.exactly.once (top level, or per
	// flow) is true; an explicit strait.exactly.once = false against an
	// enabled worker setting is an error. Parse refuses an exactly-once
	// flow that turns the fast path or the idempotent producer off.
	ExactlyOnce bool
	// ExactlyOnceSourceSupport is the target's worker setting
	// exactly.once.source.support as the file gives it: "disabled"
	// (default), "preparing" or "enabled". Read ExactlyOnce to know whether
	// the flow is exactly-once.
	ExactlyOnceSourceSupport string
	// ExactlyOnceSupport is the flow's exactly.once.support: "requested"
	// (default) or "required". Parse refuses required on a flow that is not
	// exactly-once, as MM2 refuses the connector on a worker without
	// exactly-once source support.
	ExactlyOnceSupport string
	// TransactionBoundary is the flow's transaction.boundary: "poll"
	// (default) or "interval" (MM2's connector cannot define boundaries,
	// so Parse refuses "connector").
	TransactionBoundary string
	// TransactionInterval is how long one transaction collects data before
	// it commits, in exactly-once mode: transaction.boundary.interval.ms
	// when transaction.boundary is interval and the key is set, else
	// FlushInterval (offset.flush.interval.ms; Strait's default 1 s). MM2's
	// poll boundary commits a transaction per poll of the source; Strait
	// has no polls and commits every FlushInterval instead. Always
	// positive; it applies only when ExactlyOnce is true.
	TransactionInterval time.Duration
	// TransactionTimeout is the target producer's transaction.timeout.ms
	// (TargetProducer, recorded in Origins as "transaction.timeout.ms"):
	// how long the target lets a transaction stay open before it aborts
	// it. When the file does not set it, it is 15 s instead of the Java
	// producer's 60 s: the target aborts sooner a transaction left open by
	// a node that died, which holds back its read_committed consumers until
	// then. On an
	// exactly-once flow Parse requires at least twice TransactionInterval,
	// so that a transaction can commit within it. It applies only when
	// ExactlyOnce is true.
	TransactionTimeout time.Duration

	// OffsetStorageTopic is the Connect offsets topic of MM2's herder for
	// this flow, on the target (worker offset.storage.topic; a top-level
	// offset.storage.topic overrides <target>.offset.storage.topic; default
	// mm2-offsets.<source>.internal). Strait reads it to take over from a
	// Java MM2 deployment without copying everything again (spec §2.6).
	OffsetStorageTopic string

	// Client settings per role, with MM2's precedence already applied.
	SourceConsumer Client // data consumer: source conn keys < consumer.* < source.consumer.*
	SourceAdmin    Client
	SourceProducer Client // writes offset-syncs when they live on the source
	TargetProducer Client // data producer: <target>.producer.* and <src>-><tgt>.producer.override.*
	TargetAdmin    Client
	TargetConsumer Client // reads internal topics on the target

	// Strait's own keys (prefix "strait.").
	ThrottleBytesPerSecond int64 // strait.throttle.bytes.per.second (top level, or per flow); 0 = unlimited
	// FastPath is strait.fast.path (default true): forward raw record
	// batches where no record needs changing.
	FastPath bool
	// IndexMaxSegments is strait.index.max.segments: the most segments
	// one partition's offset map keeps exact (offsets.DefaultMaxSegments
	// by default); beyond it the oldest merge and translate rounded down.
	IndexMaxSegments int
	// ReverseEnabled: the file enables the reverse flow too (target->source),
	// whether or not this node runs it: the pair is active-active, and this
	// flow skips the records the reverse flow wrote on its source.
	ReverseEnabled bool
	// SyncTopicDeletion is strait.sync.topic.deletion (default false): a
	// remote topic is deleted when its source topic is. MM2 never deletes
	// one; Strait only reports the deletion unless this is true.
	SyncTopicDeletion bool
	// SessionTimeout, HeartbeatInterval and RebalanceTimeout are the
	// target's worker settings session.timeout.ms (10 s), heartbeat.interval.ms
	// (3 s) and rebalance.timeout.ms (60 s), as Connect's worker group reads
	// them: the group of the nodes that share the flow uses them.
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	// SyncGroupACLs is strait.sync.group.acls.enabled (default false):
	// ACL sync also copies consumer group ACLs, so that consumers can
	// commit on the target after a failover. MM2 has no such option.
	SyncGroupACLs bool
	// PreserveOffsets is strait.offsets.preserve (default false): the
	// records of the source topics PreserveTopics names
	// (strait.offsets.preserve.topics, default every topic) land at their
	// source offsets on the target. Those RefuseGaps names
	// (strait.offsets.preserve.refuse.gaps, default none) stop at the first
	// source offset with nothing to copy instead of filling it. Parse
	// refuses the mode with exactly-once mode, without the fast path, and
	// with isolation.level = read_uncommitted.
	PreserveOffsets            bool
	PreserveTopics, RefuseGaps []string

	// Transforms are the flow's Connect transforms (transforms, and
	// transforms.<name>.* at the top level or per flow), which Strait
	// does not run: Parse refuses them, and RegexRouterRules converts a
	// RegexRouter to the equivalent strait.rename.rules.
	Transforms []Transform

	// Origins says where each setting above came from, by MM2 key name
	// (e.g. "topics", "offset.flush.interval.ms"); a key that is absent has
	// its default value.
	Origins map[string]Origin
}

// Transform is one Connect transform (SMT) of a flow as the file sets it.
type Transform struct {
	Name string // its alias in the transforms list, e.g. "route"
	Type string // transforms.<name>.type, the Java class
	// Props are the other transforms.<name>.* settings by the key after
	// that prefix (e.g. "regex"); a value that came through a config
	// provider is left out, and Redacted says so.
	Props    map[string]string
	Redacted bool
	Origin   Origin // the transforms key that lists it
}

// Name returns "source->target".
func (f *Flow) Name() string { return f.Source + "->" + f.Target }

// Warning is a non-fatal finding: a deprecated or unknown key, a Java client
// setting with no franz-go equivalent, a flow that is not enabled.
type Warning struct {
	Origin  Origin
	Message string
}

// String implements fmt.Stringer.
func (w Warning) String() string {
	if w.Origin.Key == "" {
		return w.Message
	}
	return w.Origin.String() + ": " + w.Message
}

// Config is a loaded MM2 configuration. Secrecy travels with client
// properties (ClientProp.Secret); Describe also hides every other setting
// whose value came through a config provider.
type Config struct {
	Path     string              // file it was loaded from ("" for strings)
	Clusters []string            // aliases, in file order
	Cluster  map[string]*Cluster // by alias
	// Flows this node runs: every pair MM2's dedicated mode would create a
	// herder for, restricted to targets in the --clusters selection.
	Flows []*Flow
	// Node is the process-wide settings: the API and metrics.
	Node     Node
	Warnings []Warning

	secrets map[string]bool // file keys whose values are secret, for Describe
}

// EnabledFlows returns the flows that replicate data.
func (c *Config) EnabledFlows() []*Flow {
	var out []*Flow
	for _, f := range c.Flows {
		if f.Enabled {
			out = append(out, f)
		}
	}
	return out
}
