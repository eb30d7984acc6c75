package acls

import (
	"fmt"
	"slices"

	"strait/internal/policy"
)

// Why a source binding is not copied: the reasons a Plan gives.
const (
	reasonAllowWrite = "ALLOW WRITE is never copied: only the replicator writes remote topics (MM2's rule)"
	reasonPattern    = "only LITERAL and PREFIXED ACLs are copied"
	reasonType       = "only TOPIC ACLs are copied (and GROUP ACLs with strait.sync.group.acls.enabled)"
	reasonGroupOwn   = "Strait's own progress group"
	reasonGroupFilt  = "the group is not selected by groups and groups.exclude"
)

// rules decide what one flow copies. They are pure: the same source bindings always give
// the same target bindings.
type rules struct {
	source, target string // the flow's aliases
	policy         policy.ReplicationPolicy
	topics         *policy.Filter
	heartbeats     bool           // heartbeats.replication.enabled
	groups         *policy.Filter // nil: GROUP ACLs are not copied
	ownGroup       func(group string) bool
}

// wanted returns the target bindings the source bindings ask for, sorted and without
// duplicates (ALLOW ALL and ALLOW READ on one topic both become ALLOW READ), and the source
// bindings the rules leave out, sorted, with their reasons.
func (r rules) wanted(source []Binding) (want []Binding, skipped []Skip) {
	for _, b := range source {
		out, why := r.copyOf(b)
		if why != "" {
			skipped = append(skipped, Skip{Binding: b, Reason: why})
			continue
		}
		want = append(want, out)
	}
	slices.SortFunc(skipped, func(a, b Skip) int { return compareBindings(a.Binding, b.Binding) })
	return sortedUnique(want), skipped
}

// copyOf returns the target binding for source binding b, or the reason it is not copied.
func (r rules) copyOf(b Binding) (Binding, string) {
	if b.PatternType != Literal && b.PatternType != Prefixed {
		return Binding{}, reasonPattern
	}
	switch {
	case b.ResourceType == Topic:
		return r.topicCopy(b)
	case b.ResourceType == Group && r.groups != nil:
		return r.groupCopy(b)
	}
	return Binding{}, reasonType
}

// topicCopy is spec §5 for a topic binding. Principal, host and permission never change:
//   - ALLOW WRITE is dropped: on the target only the replicator writes remote topics;
//   - ALLOW ALL becomes ALLOW READ, for the same reason;
//   - everything else (DENY WRITE, DENY ALL, ALLOW DESCRIBE, ...) is copied as it is.
func (r rules) topicCopy(b Binding) (Binding, string) {
	if b.Permission == Allow && b.Operation == Write {
		return Binding{}, reasonAllowWrite
	}
	if why := r.whyNotReplicated(b.ResourceName, b.PatternType); why != "" {
		return Binding{}, why
	}
	out := b
	out.ResourceName, out.PatternType = r.remoteResource(b.ResourceName, b.PatternType)
	if b.Permission == Allow && b.Operation == All {
		out.Operation = Read
	}
	return out, ""
}

// whyNotReplicated says why the flow does not replicate the topic a binding names, or ""
// when it does. The decision is the data plane's own predicate, policy.ShouldReplicateTopic
// (filter or heartbeats, not internal, not a cycle), applied to the name:
//   - a LITERAL name is a topic name, and MM2 decides it so (spec §5 step 4), the wildcard
//     "*" included;
//   - a PREFIXED name P is copied when P itself, read as a topic name, is replicated: then
//     the filter certainly matches some name with that prefix. It is the simplest honest
//     rule, and conservative: a prefix shorter than what the include list requires (prefix
//     "ord" with topics = orders.*) is not copied, although some topics it covers are
//     replicated (Go's regexp cannot tell whether a pattern matches some name with a given
//     prefix); grant such an ACL on the target yourself. A copied prefix never grants more
//     than the source ACL did: on the target it covers only the remote topics of source
//     topics it covers (remoteResource).
func (r rules) whyNotReplicated(name, pattern string) string {
	if policy.ShouldReplicateTopic(r.policy, r.topics, r.heartbeats, r.target, name) {
		return ""
	}
	what := "the topic"
	if pattern == Prefixed {
		what = "the prefix, read as a topic name,"
	}
	switch {
	case r.policy.IsInternalTopic(name):
		return what + " is internal and never replicated"
	case policy.IsCycle(r.policy, r.target, name):
		return fmt.Sprintf("%s came from %s: replicating it back would be a cycle", what, r.target)
	}
	return what + " is not selected by topics and topics.exclude"
}

// remoteResource names, on the target, the topics a source resource pattern covers.
//
// A PREFIXED pattern P becomes PREFIXED FormatRemoteTopic(source, P). With the default
// policy that is "<source><sep>P", and a target topic starts with it exactly when it is the
// remote topic of a source topic that starts with P: the ACL covers the same topics on both
// sides. The identity policy keeps P, which also covers the same topics (and, as every ACL
// under the identity policy, topics of the target's own with such names). The one name the
// identity policy changes is a heartbeats-like one: a prefix ending in "heartbeats" becomes
// "<source>.<prefix>", which covers the remote heartbeats topics only.
//
// The LITERAL wildcard "*" (every topic) is where Strait departs from MM2 (spec §5, edge):
// MM2 writes a LITERAL ACL on the topic "<source>.*", which no topic can be named, so it
// grants nothing. When the policy gives remote topics a prefix (the default policy,
// FormatRemoteTopic(source, "") = "<source><sep>"), Strait writes PREFIXED on that prefix:
// every topic that came from the source, as the wildcard meant on the source (the remote
// heartbeats and checkpoints topics of the source included, which tools read). The
// identity policy keeps the wildcard as it is, as MM2 does.
func (r rules) remoteResource(name, pattern string) (string, string) {
	if pattern == Literal && name == Wildcard {
		if prefix := r.policy.FormatRemoteTopic(r.source, ""); prefix != "" {
			return prefix, Prefixed
		}
	}
	return r.policy.FormatRemoteTopic(r.source, name), pattern
}

// groupCopy copies a group binding unchanged (strait.sync.group.acls.enabled; MM2 has no
// such option). Group ids are not renamed by replication policies, and the operations on a
// group (READ, DESCRIBE, DELETE) write no replicated data, so a consumer that fails over
// needs the same entries as on the source. A PREFIXED group pattern is copied when the
// prefix itself is a group the flow selects, the topic prefix rule.
func (r rules) groupCopy(b Binding) (Binding, string) {
	if r.ownGroup != nil && r.ownGroup(b.ResourceName) {
		return Binding{}, reasonGroupOwn
	}
	if !r.groups.Accepts(b.ResourceName) {
		return Binding{}, reasonGroupFilt
	}
	return b, ""
}

// missing returns the bindings of want (sorted) that have lacks, in order, and how many are
// there already. Only exact matches count: an ALLOW ALL on the target does not stand for
// the ALLOW READ the rules ask for, so that the target ends up with exactly the bindings a
// plan shows.
func missing(want, have []Binding) (add []Binding, present int) {
	there := make(map[Binding]bool, len(have))
	for _, b := range have {
		there[b] = true
	}
	for _, b := range want {
		if there[b] {
			present++
			continue
		}
		add = append(add, b)
	}
	return add, present
}
