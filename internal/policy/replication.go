package policy

import (
	"fmt"
	"strings"
)

// DefaultClass is the replication.policy.class of MM2's default policy: remote topics are named
// "<source alias><separator><topic>".
const DefaultClass = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"

// IdentityClass is the replication.policy.class of MM2's identity policy: remote topics keep
// their names, which makes fail-over transparent but cycle detection impossible.
const IdentityClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

// DefaultSeparator is the default replication.policy.separator.
const DefaultSeparator = "."

// HeartbeatsTopic is the name of the heartbeats topic every MM2 flow writes to its source
// cluster; it never depends on the separator.
const HeartbeatsTopic = "heartbeats"

// internalSuffixDot is the suffix of every Connect and MM2 internal topic under the "."
// separator; it is always internal, whatever the configured separator.
const internalSuffixDot = ".internal"

// maxNonShrinkingHops bounds walks along upstream names (OriginalTopic, IsCycle) for policies
// whose upstream name is not shorter than the topic. The built-in policies always shorten the
// name, so for them the walk is exactly Java's recursion; a faulty custom policy stops here
// instead of recursing forever as Java would.
const maxNonShrinkingHops = 64

// ReplicationPolicy mirrors MM2's ReplicationPolicy interface (spec §3.1): how remote topics
// are named and how a name is traced back to its source cluster. Java's null is reported as
// (.., false). Implementations must be safe for concurrent use.
type ReplicationPolicy interface {
	// FormatRemoteTopic returns the target-side name of topic replicated from sourceAlias.
	FormatRemoteTopic(sourceAlias, topic string) string
	// TopicSource returns the alias of the cluster topic was replicated from; false when topic
	// is not a remote topic.
	TopicSource(topic string) (alias string, ok bool)
	// UpstreamTopic returns the name of topic on the cluster it was replicated from; false
	// when topic is not a remote topic.
	UpstreamTopic(topic string) (upstream string, ok bool)
	// OriginalTopic follows UpstreamTopic across every hop back to the first cluster's name.
	OriginalTopic(topic string) string
	// HeartbeatsTopic returns the name of the topic heartbeats are written to.
	HeartbeatsTopic() string
	// OffsetSyncsTopic returns the name of the offset-syncs topic for clusterAlias.
	OffsetSyncsTopic(clusterAlias string) string
	// CheckpointsTopic returns the name of the checkpoints topic for clusterAlias.
	CheckpointsTopic(clusterAlias string) string
	// IsHeartbeatsTopic reports whether topic is a heartbeats topic, local or replicated.
	IsHeartbeatsTopic(topic string) bool
	// IsCheckpointsTopic reports whether topic is a checkpoints topic.
	IsCheckpointsTopic(topic string) bool
	// IsMM2InternalTopic reports whether topic is one of MM2's own internal topics.
	IsMM2InternalTopic(topic string) bool
	// IsInternalTopic reports whether topic is internal (Kafka, Connect or MM2) and so is
	// never replicated.
	IsInternalTopic(topic string) bool
}

// New builds the policy named by class, the value of replication.policy.class: the fully
// qualified name of DefaultClass or IdentityClass, its simple name (a Strait convenience;
// Java needs the full name), or a third-party class BuiltinClass maps to one of them,
// surrounding white space ignored as Java's config parser does. separator (replication.policy.separator) is used
// verbatim, trailing spaces included, because MM2 passes the raw property to the policy.
// internalSeparatorEnabled is replication.policy.internal.topic.separator.enabled: when false,
// internal topic names use "." whatever the separator. sourceAlias (source.cluster.alias) is
// only read by IdentityReplicationPolicy; "" means unset, so the identity policy then reports
// non-heartbeat topics as having no source.
func New(class, separator string, internalSeparatorEnabled bool, sourceAlias string) (ReplicationPolicy, error) {
	if separator == "" {
		return nil, fmt.Errorf("replication.policy.separator is empty: set it to a non-empty string such as %q (the default)", DefaultSeparator)
	}
	internalSep := DefaultSeparator
	if internalSeparatorEnabled {
		internalSep = separator
	}
	d := newDefault(separator, internalSep)
	builtin, _, ok := BuiltinClass(class)
	switch {
	case !ok:
		return nil, fmt.Errorf("replication.policy.class %q is not supported: Strait implements only %s and %s (custom Java policies cannot run in Go); set it to one of them, and rename topics with strait.rename.rules",
			class, DefaultClass, IdentityClass)
	case builtin == IdentityClass:
		return &identityPolicy{defaultPolicy: *d, sourceAlias: sourceAlias}, nil
	}
	return d, nil
}

func simpleName(class string) string {
	return class[strings.LastIndexByte(class, '.')+1:]
}

// Third-party replication policies whose remote topic names Strait reproduces with a
// built-in policy. Each was checked against its public source.
const (
	// StrimziIdentityClass is the identity policy of Strimzi's mirror-maker-2-extensions
	// (deprecated since Kafka 3.0 has its own): topic names unchanged.
	StrimziIdentityClass = "io.strimzi.kafka.connect.mirror.IdentityReplicationPolicy"
	// AWSIdentityClass is the identity policy of AWS's MSK migration samples
	// (aws-samples/mirrormaker2-msk-migration): topic names unchanged.
	AWSIdentityClass = "com.amazonaws.kafka.samples.CustomMM2ReplicationPolicy"
)

// knownClasses maps third-party classes to the built-in class that names topics as they do,
// with what differs.
var knownClasses = map[string]struct{ builtin, differs string }{
	StrimziIdentityClass: {IdentityClass, identityDiffers},
	AWSIdentityClass:     {IdentityClass, identityDiffers},
}

// identityDiffers is how the old identity policies differ from Kafka's: they keep the name of
// the heartbeats topic too, so replicated heartbeats mix with the target's own.
const identityDiffers = `remote topics keep their names as with that class, but replicated heartbeats go to "<source>.heartbeats" as with Kafka's policy, not into the target's own "heartbeats" topic`

// BuiltinClass returns the built-in policy class (DefaultClass or IdentityClass) that runs the
// replication.policy.class value class: the class itself, its simple name (a Strait
// convenience; Java needs the full name), or a third-party class that names topics the same
// way (StrimziIdentityClass, AWSIdentityClass), for which differs says what Strait does
// differently. Surrounding white space is ignored, as Java's config parser does. ok is false
// for any other class, which cannot run in Strait.
func BuiltinClass(class string) (builtin, differs string, ok bool) {
	switch class = strings.TrimSpace(class); class {
	case DefaultClass, simpleName(DefaultClass):
		return DefaultClass, "", true
	case IdentityClass, simpleName(IdentityClass):
		return IdentityClass, "", true
	}
	if k, found := knownClasses[class]; found {
		return k.builtin, k.differs, true
	}
	return "", "", false
}

// defaultPolicy is DefaultReplicationPolicy (spec §3.2).
type defaultPolicy struct {
	sep string
	// Suffixes precomputed from the internal separator (sep, or "." when the internal topic
	// separator is disabled).
	internalSep      string
	internalSuffix   string // internalSep + "internal"
	checkpointSuffix string // internalSep + "checkpoints" + internalSuffix
}

func newDefault(sep, internalSep string) *defaultPolicy {
	internalSuffix := internalSep + "internal"
	return &defaultPolicy{
		sep:              sep,
		internalSep:      internalSep,
		internalSuffix:   internalSuffix,
		checkpointSuffix: internalSep + "checkpoints" + internalSuffix,
	}
}

func (p *defaultPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	return sourceAlias + p.sep + topic
}

// TopicSource is Java's topic.split(quote(sep)) followed by "fewer than two parts means no
// source, else the first part". Java's split drops trailing empty parts and keeps a leading
// one, which comes down to: the prefix before the first separator, unless there is none or
// only separators follow it (spec §3.2).
func (p *defaultPolicy) TopicSource(topic string) (string, bool) {
	i := strings.Index(topic, p.sep)
	if i < 0 || onlyRepeats(topic[i+len(p.sep):], p.sep) {
		return "", false
	}
	return topic[:i], true
}

// onlyRepeats reports whether s is zero or more copies of sep.
func onlyRepeats(s, sep string) bool {
	for s != "" {
		if !strings.HasPrefix(s, sep) {
			return false
		}
		s = s[len(sep):]
	}
	return true
}

func (p *defaultPolicy) UpstreamTopic(topic string) (string, bool) {
	src, ok := p.TopicSource(topic)
	if !ok {
		return "", false
	}
	return topic[len(src)+len(p.sep):], true
}

func (p *defaultPolicy) OriginalTopic(topic string) string { return originalTopic(p, topic) }

func (p *defaultPolicy) HeartbeatsTopic() string { return HeartbeatsTopic }

func (p *defaultPolicy) OffsetSyncsTopic(clusterAlias string) string {
	return "mm2-offset-syncs" + p.internalSep + clusterAlias + p.internalSuffix
}

func (p *defaultPolicy) CheckpointsTopic(clusterAlias string) string {
	return clusterAlias + p.checkpointSuffix
}

func (p *defaultPolicy) IsHeartbeatsTopic(topic string) bool {
	return p.OriginalTopic(topic) == HeartbeatsTopic
}

func (p *defaultPolicy) IsCheckpointsTopic(topic string) bool {
	return strings.HasSuffix(topic, p.checkpointSuffix)
}

func (p *defaultPolicy) IsMM2InternalTopic(topic string) bool {
	return strings.HasSuffix(topic, p.internalSuffix)
}

func (p *defaultPolicy) IsInternalTopic(topic string) bool { return isInternalTopic(p, topic) }

// identityPolicy is IdentityReplicationPolicy (spec §3.3): the default policy for topics whose
// name ends in "heartbeats", names unchanged for every other topic.
type identityPolicy struct {
	defaultPolicy
	sourceAlias string // "" = unset (Java null)
}

// looksLikeHeartbeat is Java's suffix test, so "myheartbeats" counts too.
func looksLikeHeartbeat(topic string) bool { return strings.HasSuffix(topic, HeartbeatsTopic) }

func (p *identityPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.defaultPolicy.FormatRemoteTopic(sourceAlias, topic)
	}
	return topic
}

func (p *identityPolicy) TopicSource(topic string) (string, bool) {
	if looksLikeHeartbeat(topic) {
		return p.defaultPolicy.TopicSource(topic)
	}
	return p.sourceAlias, p.sourceAlias != ""
}

func (p *identityPolicy) UpstreamTopic(topic string) (string, bool) {
	if looksLikeHeartbeat(topic) {
		return p.defaultPolicy.UpstreamTopic(topic)
	}
	return topic, true
}

// The methods below are redefined so that they call the identity versions of TopicSource and
// UpstreamTopic, as Java's virtual dispatch does.

func (p *identityPolicy) OriginalTopic(topic string) string { return originalTopic(p, topic) }

func (p *identityPolicy) IsHeartbeatsTopic(topic string) bool {
	return p.OriginalTopic(topic) == HeartbeatsTopic
}

func (p *identityPolicy) IsInternalTopic(topic string) bool { return isInternalTopic(p, topic) }

// originalTopic is the interface's default originalTopic: follow upstream names until there is
// none or it stops changing.
func originalTopic(p ReplicationPolicy, topic string) string {
	for grown := 0; ; {
		up, ok := p.UpstreamTopic(topic)
		if !ok || up == topic {
			return topic
		}
		if len(up) >= len(topic) {
			if grown++; grown > maxNonShrinkingHops {
				return topic
			}
		}
		topic = up
	}
}

// isInternalTopic is the interface's default isInternalTopic: MM2's own topics plus Kafka's
// ("__", ".") and Connect's ("-internal", ".internal") by name, whatever the separator.
func isInternalTopic(p ReplicationPolicy, topic string) bool {
	return p.IsMM2InternalTopic(topic) ||
		strings.HasPrefix(topic, "__") ||
		strings.HasPrefix(topic, ".") ||
		strings.HasSuffix(topic, "-internal") ||
		strings.HasSuffix(topic, internalSuffixDot)
}
