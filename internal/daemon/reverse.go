package daemon

import (
	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/index"
	"strait/internal/policy"
	"strait/internal/tail"
)

// reverse returns what the checkpoints of an active-active flow need from
// its reverse flow (checkpoint.Reverse): its policy, and a follower of its
// offset index, which lives on this flow's source cluster; nil when
// ReversePolicy is.
func (d *Daemon) reverse(b *builder, srcAdm, tgtAdm *kadm.Client) (*checkpoint.Reverse, error) {
	fc := b.f.cfg
	pol, err := ReversePolicy(d.cfg, fc)
	if pol == nil || err != nil {
		return nil, err
	}
	cl, err := b.client(b.p.SourceConsumer, "reverse-index-source-consumer", tail.ClientOpts()...)
	if err != nil {
		return nil, err
	}
	return &checkpoint.Reverse{
		Policy:      pol,
		Index:       index.NewReader(cl, index.TopicName(fc.Target), d.log.With("flow", fc.Name())),
		TargetAdmin: tgtAdm,
		SourceAdmin: srcAdm,
		Group:       ProgressGroup(fc.Target),
	}, nil
}

// ReversePolicy returns the policy of fc's reverse flow when that flow is
// enabled too and may copy a topic back into a source topic of fc, else
// nil: for a one-way flow, and when both flows give names of their own
// (the default policy without rename rules).
func ReversePolicy(cfg *config.Config, fc *config.Flow) (policy.ReplicationPolicy, error) {
	if !fc.ReverseEnabled {
		return nil, nil
	}
	rev := reverseFlow(cfg, fc)
	if !keepsNames(fc.Policy) && !keepsNames(rev.Policy) {
		return nil, nil
	}
	return rev.ReplicationPolicy()
}

// reverseFlow returns the reverse flow of fc from the loaded config. A node
// that does not run it (--clusters) has not loaded it; its policy is then
// the one Policy.Inbound records when it renames, else taken to be fc's
// class (usually set once for the file). Wrongly taking a topic to come
// back costs re-reads, never skips: the reverse flow only lowers a
// translation.
func reverseFlow(cfg *config.Config, fc *config.Flow) *config.Flow {
	for _, f := range cfg.Flows {
		if f.Source == fc.Target && f.Target == fc.Source {
			return f
		}
	}
	pol := config.Policy{Class: fc.Policy.Class, Separator: fc.Policy.Separator, InternalSeparatorEnabled: fc.Policy.InternalSeparatorEnabled}
	if in, ok := fc.Policy.Inbound[fc.Target]; ok {
		pol = in
	}
	return &config.Flow{Source: fc.Target, Target: fc.Source, Enabled: true, Policy: pol}
}

// keepsNames reports whether a policy may give a remote topic the name of
// a topic of another cluster: any class but the default, or rename rules.
func keepsNames(p config.Policy) bool {
	return p.Class != config.DefaultPolicyClass || p.Rules != nil
}
