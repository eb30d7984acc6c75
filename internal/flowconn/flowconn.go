// Package flowconn opens one flow of a configuration for the one-shot
// commands (offsets translate, verify, failover, failback, drill): its
// clients, built as strait run builds them, its rules, and its offset
// index read to the end.
package flowconn

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/index"
	"strait/internal/kafkaclient"
	"strait/internal/policy"
	"strait/internal/tail"
)

// Conn is one flow of a configuration opened for a one-shot command
// (offsets translate, verify, failover): its clients, built as run builds
// them, its rules, and its offset index read to the end.
type Conn struct {
	Config       *config.Config
	Plan         *kafkaclient.FlowPlan
	Flow         *config.Flow
	Policy       policy.ReplicationPolicy
	Topics       *policy.Filter
	Groups       *policy.Filter
	SourceAdmin  *kadm.Client
	TargetAdmin  *kadm.Client
	SourceReader *kgo.Client // tail.ClientOpts: read_committed, markers kept
	TargetReader *kgo.Client
	Index        index.Map
	Reverse      *checkpoint.Reverse // active-active, else nil (see LoadReverse)
	ID           kafkaclient.Identity
	closers      []func()
}

// Open opens the enabled flow fp of cfg; role names its clients. It reads
// only the target: call LoadReverse for an active-active flow's
// translations, which read the source.
func Open(ctx context.Context, cfg *config.Config, fp *kafkaclient.FlowPlan, role string) (*Conn, error) {
	o := &Conn{Config: cfg, Plan: fp, Flow: fp.Flow}
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	var err error
	if o.Policy, err = o.Flow.ReplicationPolicy(); err != nil { // the class, with strait.rename.rules
		return nil, err
	}
	if o.Topics, err = policy.NewFilter(o.Flow.Topics, o.Flow.TopicsExclude); err != nil {
		return nil, err
	}
	if o.Groups, err = policy.NewFilter(o.Flow.Groups, o.Flow.GroupsExclude); err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	id := kafkaclient.Identity{Flow: o.Flow.Name(), Role: role}
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
	o.SourceAdmin, o.TargetAdmin = kadm.NewClient(src), kadm.NewClient(dst)
	if o.SourceReader, err = build(fp.SourceConsumer, tail.ClientOpts()...); err != nil {
		return nil, err
	}
	if o.TargetReader, err = build(fp.TargetConsumer, tail.ClientOpts()...); err != nil {
		return nil, err
	}
	if o.Index, err = index.Load(ctx, o.TargetReader, index.TopicName(o.Flow.Source)); err != nil {
		return nil, fmt.Errorf("reading the offset index on %s: %w", o.Flow.Target, err)
	}
	o.ID = id
	ok = true
	return o, nil
}

// LoadReverse reads, for an active-active flow whose topics may come back
// under their own names (daemon.ReversePolicy), the reverse flow's offset
// index on the flow's source, as run's checkpoints follow it. It needs the
// source.
func (o *Conn) LoadReverse(ctx context.Context) error {
	pol, err := daemon.ReversePolicy(o.Config, o.Flow)
	if pol == nil || err != nil {
		return err
	}
	cl, err := o.Plan.SourceConsumer.New(o.ID, slog.New(slog.DiscardHandler), tail.ClientOpts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	m, err := index.Load(ctx, cl, index.TopicName(o.Flow.Target))
	if err != nil {
		return fmt.Errorf("reading the offset index of the reverse flow %s->%s on %s: %w", o.Flow.Target, o.Flow.Source, o.Flow.Source, err)
	}
	o.Reverse = &checkpoint.Reverse{Policy: pol, Index: checkpoint.LoadedIndex(m), TargetAdmin: o.TargetAdmin, SourceAdmin: o.SourceAdmin, Group: daemon.ProgressGroup(o.Flow.Target)}
	return nil
}

// Close closes the flow's clients.
func (o *Conn) Close() {
	for _, c := range o.closers {
		c()
	}
}

// Replicates reports whether the flow copies topic, as run decides.
func (o *Conn) Replicates(topic string) bool {
	return policy.ShouldReplicateTopic(o.Policy, o.Topics, o.Flow.HeartbeatsReplication, o.Flow.Target, topic)
}

// Translator is the flow's checkpoint.Flow.
func (o *Conn) Translator() checkpoint.Flow {
	return checkpoint.Flow{Source: o.Flow.Source, Target: o.Flow.Target, Policy: o.Policy, Topics: o.Topics, Reverse: o.Reverse}
}

// SelectedGroup reports whether the flow checkpoints group and re (nil:
// any) matches it: the groups verify and failover look at.
func (o *Conn) SelectedGroup(re *regexp.Regexp, group string) bool {
	return o.Groups.Accepts(group) && (re == nil || re.MatchString(group)) && !daemon.IsProgressGroup(o.Config, group)
}
