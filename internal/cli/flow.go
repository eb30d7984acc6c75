package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/index"
	"strait/internal/kafkaclient"
	"strait/internal/policy"
	"strait/internal/tail"
)

// openFlow is one flow of a configuration opened for a one-shot command
// (offsets translate, verify, failover): its clients, built as run builds
// them, its rules, and its offset index read to the end.
type openFlow struct {
	cfg     *config.Config
	fp      *kafkaclient.FlowPlan
	fc      *config.Flow
	pol     policy.ReplicationPolicy
	topics  *policy.Filter
	groups  *policy.Filter
	srcAdm  *kadm.Client
	dstAdm  *kadm.Client
	srcRead *kgo.Client // tail.ClientOpts: read_committed, markers kept
	dstRead *kgo.Client
	idx     index.Map
	reverse *checkpoint.Reverse // active-active, else nil (see loadReverse)
	id      kafkaclient.Identity
	closers []func()
}

// parseFlow splits "A->B".
func parseFlow(s string) (from, to string, err error) {
	from, to, ok := strings.Cut(s, "->")
	if !ok || from == "" || to == "" {
		return "", "", usageError{fmt.Errorf("--flow %q: give it as SOURCE->TARGET, e.g. --flow 'A->B' (quoted for the shell)", s)}
	}
	return from, to, nil
}

// open opens the flow from->to of plan; role names its clients. It reads
// only the target: call loadReverse for an active-active flow's
// translations, which read the source.
func open(ctx context.Context, file string, cfg *config.Config, plan *kafkaclient.Plan, from, to, role string) (*openFlow, error) {
	fp := plan.Flow(from, to)
	if fp == nil || !fp.Replicates {
		return nil, usageError{fmt.Errorf("%s has no enabled flow %s->%s: set %s->%s.enabled = true (flows: %s)", file, from, to, from, to, enabledFlows(plan))}
	}
	o := &openFlow{cfg: cfg, fp: fp, fc: fp.Flow}
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	var err error
	if o.pol, err = o.fc.ReplicationPolicy(); err != nil { // the class, with strait.rename.rules
		return nil, err
	}
	if o.topics, err = policy.NewFilter(o.fc.Topics, o.fc.TopicsExclude); err != nil {
		return nil, err
	}
	if o.groups, err = policy.NewFilter(o.fc.Groups, o.fc.GroupsExclude); err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	id := kafkaclient.Identity{Flow: o.fc.Name(), Role: role}
	build := func(c *kafkaclient.Client, opts ...kgo.Opt) (*kgo.Client, error) {
		cl, err := c.New(id, quiet, opts...)
		if err == nil {
			o.closers = append(o.closers, cl.Close)
		}
		return cl, err
	}
	src, err := build(fp.SourceAdmin)
	if err != nil {
		return nil, err
	}
	dst, err := build(fp.TargetAdmin)
	if err != nil {
		return nil, err
	}
	o.srcAdm, o.dstAdm = kadm.NewClient(src), kadm.NewClient(dst)
	if o.srcRead, err = build(fp.SourceConsumer, tail.ClientOpts()...); err != nil {
		return nil, err
	}
	if o.dstRead, err = build(fp.TargetConsumer, tail.ClientOpts()...); err != nil {
		return nil, err
	}
	if o.idx, err = index.Load(ctx, o.dstRead, index.TopicName(o.fc.Source)); err != nil {
		return nil, fmt.Errorf("reading the offset index on %s: %w", o.fc.Target, err)
	}
	o.id = id
	ok = true
	return o, nil
}

// loadReverse reads the reverse flow's offset index, on the flow's source,
// for an active-active flow (see the function loadReverse); it needs the
// source.
func (o *openFlow) loadReverse(ctx context.Context) error {
	var err error
	o.reverse, err = loadReverse(ctx, o.cfg, o.fp, o.id, slog.New(slog.DiscardHandler), o.dstAdm)
	return err
}

// Close closes the flow's clients.
func (o *openFlow) Close() {
	for _, c := range o.closers {
		c()
	}
}

// replicates reports whether the flow copies topic, as run decides.
func (o *openFlow) replicates(topic string) bool {
	return policy.ShouldReplicateTopic(o.pol, o.topics, o.fc.HeartbeatsReplication, o.fc.Target, topic)
}

// translator is the flow's checkpoint.Flow.
func (o *openFlow) translator() checkpoint.Flow {
	return checkpoint.Flow{Source: o.fc.Source, Target: o.fc.Target, Policy: o.pol, Topics: o.topics, Reverse: o.reverse}
}

func enabledFlows(plan *kafkaclient.Plan) string {
	var names []string
	for _, fp := range plan.Flows {
		if fp.Replicates {
			names = append(names, fp.Flow.Name())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
