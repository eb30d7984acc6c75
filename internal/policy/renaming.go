package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Renaming is the ReplicationPolicy of a flow source->target that has rename rules
// (strait.rename.rules), or whose source receives topics renamed by other flows. It names
// remote topics with the flow's rules and falls back to the flow's replication.policy.class
// (Default or Identity) for every topic no rule matches. Heartbeats and internal topics are
// never renamed, so heartbeats, checkpoints and offset syncs keep MM2's names.
//
// Reading a name back (TopicSource, UpstreamTopic, and so OriginalTopic, IsCycle and
// CheckpointTopic) inverts the rules. A name is tried, in this order:
//
//  1. as a name on the flow's source cluster that an inbound flow (X->source, given to
//     NewRenaming) gave one of its topics: it came from X;
//  2. as a remote name this flow's rules give one of its topics: it came from source;
//  3. by the fallback policy.
//
// So TopicSource(FormatRemoteTopic(source, t)) is source for every renamed t, unless an inbound
// flow's rules also produce that name, as the same top-level rules do on both flows of an
// active-active pair. Then the source-side reading wins, because the callers that read names
// back (isCycle and checkpoints, spec §3.4 and §6.3) read names of the source cluster: on
// A<->B with re:^(.*)$=$1.mirror on both flows, x.mirror on A came from B, so A->B does not
// send it back. A local topic that happens to look like such a name is taken for a remote one
// too, as DefaultReplicationPolicy takes a local "B.x" for a topic from B.
type Renaming struct {
	fallback ReplicationPolicy
	source   string
	rules    *Rules
	inbound  []*Renaming // by source alias
}

// NewRenaming builds the policy of the flow from sourceAlias: rules first, then fallback, the
// policy New builds for the flow's replication.policy.class. inbound are the policies of the
// enabled flows into sourceAlias that have rules (their own inbound flows are not used); nil
// rules rename nothing, so a flow with no rules of its own still reads the names its inbound
// flows make. It fails when an exact rule's remote name is an internal topic of fallback (the
// separator decides some of those names).
func NewRenaming(fallback ReplicationPolicy, sourceAlias string, rules *Rules, inbound ...*Renaming) (*Renaming, error) {
	if fallback == nil {
		return nil, errors.New("renaming policy: no fallback policy")
	}
	p := &Renaming{fallback: fallback, source: sourceAlias, rules: rules}
	var errs []error
	if rules != nil {
		for _, r := range rules.rules {
			if r.re == nil && fallback.IsInternalTopic(r.to) {
				errs = append(errs, &RuleError{Rule: r.index, Text: r.text,
					Message: fmt.Sprintf("the remote name %q is an internal topic name under replication.policy.separator: name the remote topic like an ordinary topic", r.to)})
			}
		}
	}
	seen := map[string]bool{}
	for _, q := range inbound {
		switch {
		case q == nil:
			continue
		case q.source == sourceAlias:
			errs = append(errs, fmt.Errorf("renaming policy of flows from %q: an inbound flow cannot come from the flow's own source", sourceAlias))
		case seen[q.source]:
			errs = append(errs, fmt.Errorf("renaming policy of flows from %q: two inbound flows from %q", sourceAlias, q.source))
		}
		seen[q.source] = true
		p.inbound = append(p.inbound, q)
	}
	slices.SortFunc(p.inbound, func(a, b *Renaming) int { return cmp.Compare(a.source, b.source) })
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Rules returns the flow's own rules (nil when it has none).
func (p *Renaming) Rules() *Rules { return p.rules }

// protected reports whether topic is one that is never renamed.
func (p *Renaming) protected(topic string) bool {
	return looksLikeHeartbeat(topic) || p.fallback.IsInternalTopic(topic)
}

// rename applies the flow's rules to a topic of its source.
func (p *Renaming) rename(topic string) (string, bool) {
	if p.rules == nil || p.protected(topic) {
		return "", false
	}
	return p.rules.Rename(topic)
}

// own returns the topic of the flow's source that its rules named remote.
func (p *Renaming) own(remote string) (string, bool) {
	if p.rules == nil || p.protected(remote) {
		return "", false
	}
	return p.rules.invert(remote, func(x string) bool { return !p.protected(x) })
}

// lookup reads a name back through the rules (see Renaming): the alias it came from and its
// name there.
func (p *Renaming) lookup(topic string) (alias, upstream string, ok bool) {
	for _, q := range p.inbound {
		if up, ok := q.own(topic); ok {
			return q.source, up, true
		}
	}
	if up, ok := p.own(topic); ok {
		return p.source, up, true
	}
	return "", "", false
}

// FormatRemoteTopic applies the first rule that matches topic, when sourceAlias is the flow's
// source; otherwise, and for heartbeats and internal topics, it is the fallback's name.
func (p *Renaming) FormatRemoteTopic(sourceAlias, topic string) string {
	if sourceAlias == p.source {
		if remote, ok := p.rename(topic); ok {
			return remote
		}
	}
	return p.fallback.FormatRemoteTopic(sourceAlias, topic)
}

// TopicSource is the alias a renamed name came from (see Renaming), else the fallback's.
func (p *Renaming) TopicSource(topic string) (string, bool) {
	if alias, _, ok := p.lookup(topic); ok {
		return alias, true
	}
	return p.fallback.TopicSource(topic)
}

// UpstreamTopic is the name a renamed name had on the cluster it came from, else the
// fallback's.
func (p *Renaming) UpstreamTopic(topic string) (string, bool) {
	if _, up, ok := p.lookup(topic); ok {
		return up, true
	}
	return p.fallback.UpstreamTopic(topic)
}

// OriginalTopic follows UpstreamTopic, through rules and fallback, back to the first name.
func (p *Renaming) OriginalTopic(topic string) string { return originalTopic(p, topic) }

// HeartbeatsTopic is the fallback's.
func (p *Renaming) HeartbeatsTopic() string { return p.fallback.HeartbeatsTopic() }

// OffsetSyncsTopic is the fallback's.
func (p *Renaming) OffsetSyncsTopic(clusterAlias string) string {
	return p.fallback.OffsetSyncsTopic(clusterAlias)
}

// CheckpointsTopic is the fallback's.
func (p *Renaming) CheckpointsTopic(clusterAlias string) string {
	return p.fallback.CheckpointsTopic(clusterAlias)
}

// IsHeartbeatsTopic reports whether the original name of topic is the heartbeats topic.
func (p *Renaming) IsHeartbeatsTopic(topic string) bool {
	return p.OriginalTopic(topic) == p.HeartbeatsTopic()
}

// IsCheckpointsTopic is the fallback's.
func (p *Renaming) IsCheckpointsTopic(topic string) bool { return p.fallback.IsCheckpointsTopic(topic) }

// IsMM2InternalTopic is the fallback's.
func (p *Renaming) IsMM2InternalTopic(topic string) bool { return p.fallback.IsMM2InternalTopic(topic) }

// IsInternalTopic is the fallback's: renaming never makes a topic internal.
func (p *Renaming) IsInternalTopic(topic string) bool { return p.fallback.IsInternalTopic(topic) }

// RemoteNames names the remote topic of each of topics, source topics of a flow from
// sourceAlias selected for replication (ShouldReplicateTopic), and checks the names: errs[i]
// is non-nil when topics[i] must not be replicated because its remote name is not a valid
// topic name, is a heartbeats or internal topic name that the topic itself is not (a rename
// rule made it so), or is the remote name of another of topics too. Every topic of such a
// collision gets an error, so none of them is copied into another's remote topic. The topic
// reconciler calls it for each pass, so that rules whose conflicts ParseRules cannot see are
// reported for the topics that have them.
func RemoteNames(p ReplicationPolicy, sourceAlias string, topics []string) (names []string, errs []error) {
	names = make([]string, len(topics))
	errs = make([]error, len(topics))
	byRemote := map[string][]int{}
	for i, t := range topics {
		n := p.FormatRemoteTopic(sourceAlias, t)
		names[i] = n
		if why := checkTopicName(n); why != "" {
			errs[i] = fmt.Errorf("topic %q is not replicated: its remote name %s; fix strait.rename.rules", t, why)
			continue
		}
		if why := neverRenamed(n); why != "" && neverRenamed(t) == "" || p.IsInternalTopic(n) && !p.IsInternalTopic(t) {
			if why == "" {
				why = "an internal topic"
			}
			errs[i] = fmt.Errorf("topic %q is not replicated: its remote name %q is %s; fix strait.rename.rules so that it gets an ordinary name", t, n, why)
			continue
		}
		byRemote[n] = append(byRemote[n], i)
	}
	for n, idx := range byRemote {
		if len(idx) < 2 {
			continue
		}
		all := make([]string, len(idx))
		for j, i := range idx {
			all[j] = fmt.Sprintf("%q", topics[i])
		}
		slices.Sort(all)
		for _, i := range idx {
			errs[i] = fmt.Errorf("topic %q is not replicated: topics %s would all be replicated to %q; change strait.rename.rules so that each gets its own remote topic (none of them is replicated until then)",
				topics[i], strings.Join(all, ", "), n)
		}
	}
	return names, errs
}
