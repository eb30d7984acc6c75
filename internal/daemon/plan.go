package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/acls"
	"strait/internal/policy"
	"strait/internal/preserve"
	"strait/internal/topics"
)

// FlowChanges is what the control plane of one flow would change on its
// target: topics, partitions and configs, and ACLs.
type FlowChanges struct {
	Flow   string      `json:"flow"`
	Topics topics.Plan `json:"topics"`
	// ACLs is nil when sync.topic.acls.enabled is false.
	ACLs *acls.Plan `json:"acls,omitempty"`
	// KeepOffsets are the topics whose offsets the flow keeps
	// (strait.offsets.preserve), with the gaps each will have; not changes.
	KeepOffsets []preserve.TopicGaps `json:"keep_offsets,omitempty"`
}

// Pending reports whether the flow's control plane would change anything
// on the target. Problems (what it cannot apply) are not changes.
func (c FlowChanges) Pending() bool {
	return !c.Topics.Empty() || (c.ACLs != nil && len(c.ACLs.Add) > 0)
}

// Plan builds every flow as Run would, checks that its clusters answer,
// and returns what each flow's control plane would change, changing
// nothing: it computes the same plans the running reconciler and ACL
// syncer apply.
func (d *Daemon) Plan(ctx context.Context) ([]FlowChanges, error) {
	flows, err := d.buildAll()
	defer closeAll(flows)
	if err != nil {
		return nil, err
	}
	if err := d.ping(ctx, flows); err != nil {
		return nil, err
	}
	var (
		out  []FlowChanges
		errs []error
	)
	for _, f := range flows {
		if f.topics == nil {
			continue // heartbeats only: no control plane to plan
		}
		c := FlowChanges{Flow: f.cfg.Name()}
		var err error
		if c.Topics, err = f.topics.Plan(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flow %s: planning topics: %w", c.Flow, err))
		}
		if f.cfg.PreserveOffsets {
			if c.KeepOffsets, err = f.surveyGaps(ctx, c.Topics.Names); err != nil {
				errs = append(errs, fmt.Errorf("flow %s: %w", c.Flow, err))
			}
		}
		if f.acls != nil {
			p, err := f.acls.Plan(ctx)
			if err != nil {
				errs = append(errs, fmt.Errorf("flow %s: planning ACLs: %w", c.Flow, err))
			}
			c.ACLs = &p
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// surveyGaps lists the topics of names whose offsets the flow keeps, with the gaps
// each will have (preserve.Survey).
func (f *flow) surveyGaps(ctx context.Context, names []topics.TopicName) ([]preserve.TopicGaps, error) {
	keep, _ := policy.CompilePattern(f.cfg.PreserveTopics)
	refuse, _ := policy.CompilePattern(f.cfg.RefuseGaps)
	kept := map[string]string{}
	for _, n := range names {
		if keep.Matches(n.Source) {
			kept[n.Source] = n.Remote
		}
	}
	return preserve.Survey(ctx, kadm.NewClient(f.mirrorClients.Source), kept, refuse.Matches)
}
