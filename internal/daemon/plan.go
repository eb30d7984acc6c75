package daemon

import (
	"context"
	"errors"
	"fmt"

	"strait/internal/acls"
	"strait/internal/kafkaclient"
	"strait/internal/topics"
)

// FlowChanges is what the control plane of one flow would change on its
// target: topics, partitions and configs, and ACLs.
type FlowChanges struct {
	Flow   string      `json:"flow"`
	Topics topics.Plan `json:"topics"`
	// ACLs is nil when sync.topic.acls.enabled is false.
	ACLs *acls.Plan `json:"acls,omitempty"`
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
	plan := d.opts.Plan
	if plan == nil {
		var err error
		if plan, err = kafkaclient.NewPlan(d.cfg); err != nil {
			return nil, err
		}
	}
	var flows []*flow
	defer func() {
		for _, f := range flows {
			f.close()
		}
	}()
	for _, fp := range plan.Flows {
		f, err := d.build(fp)
		if err != nil {
			return nil, err
		}
		if f != nil && f.topics != nil {
			flows = append(flows, f)
		}
	}
	if err := d.ping(ctx, flows); err != nil {
		return nil, err
	}
	var (
		out  []FlowChanges
		errs []error
	)
	for _, f := range flows {
		c := FlowChanges{Flow: f.cfg.Name()}
		var err error
		if c.Topics, err = f.topics.Plan(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flow %s: planning topics: %w", c.Flow, err))
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
