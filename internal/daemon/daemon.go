// Package daemon builds every component of a Strait node from a Config,
// runs them, and stops them in order: control plane first, then the data
// plane (which flushes and commits), then the clients.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/index"
	"strait/internal/kafkaclient"
	"strait/internal/mirror"
	"strait/internal/policy"
	"strait/internal/topics"
)

// Options tune a daemon beyond the MM2 config.
type Options struct {
	Logger *slog.Logger
	// ShutdownTimeout bounds the flush of in-flight records on stop.
	ShutdownTimeout time.Duration
	// ConnectTimeout bounds the first contact with each cluster.
	ConnectTimeout time.Duration
}

// Daemon runs the flows of one config.
type Daemon struct {
	cfg  *config.Config
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	flows []*flow
}

// New returns a daemon; it starts nothing.
func New(cfg *config.Config, opts Options) *Daemon {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 15 * time.Second
	}
	return &Daemon{cfg: cfg, opts: opts, log: opts.Logger}
}

// ProgressGroup is the consumer group on the target that stores the
// progress of the flow from source.
func ProgressGroup(source string) string { return "strait-" + source }

// flow is one enabled flow with its clients and components.
type flow struct {
	cfg      *config.Flow
	clients  []*kgo.Client // every client of the flow, closed last
	srcAdmin *kgo.Client
	dstAdmin *kgo.Client
	internal []internalTopic // created before the flow starts
	mirror   *mirror.Mirror
	topics   *topics.Reconciler
}

// internalTopic is a compacted topic a flow writes its own records to.
type internalTopic struct {
	adm  *kadm.Client
	name string
	rf   int
}

func (f *flow) close() {
	for _, c := range f.clients {
		c.Close()
	}
}

// Run builds and runs every enabled flow until ctx is done or a flow fails.
func (d *Daemon) Run(ctx context.Context) error {
	enabled := d.cfg.EnabledFlows()
	if len(enabled) == 0 {
		return errors.New("no flow is enabled: set SOURCE->TARGET.enabled = true for at least one pair of clusters")
	}
	var flows []*flow
	defer func() {
		for _, f := range flows {
			f.close()
		}
	}()
	for _, fc := range enabled {
		f, err := d.build(fc)
		if err != nil {
			return err
		}
		flows = append(flows, f)
	}
	if err := d.ping(ctx, flows); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	for _, f := range flows {
		for _, it := range f.internal {
			if err := topics.EnsureCompacted(ctx, it.adm, it.name, it.rf); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("flow %s: %w", f.cfg.Name(), err)
			}
		}
	}
	d.mu.Lock()
	d.flows = flows
	d.mu.Unlock()

	// The control plane runs under its own context so it stops before
	// the data plane drains.
	ctlCtx, stopCtl := context.WithCancel(ctx)
	defer stopCtl()
	dataCtx, stopData := context.WithCancel(ctx)
	defer stopData()

	var (
		ctl, data sync.WaitGroup
		errMu     sync.Mutex
		firstErr  error
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		stopCtl()
		stopData()
	}
	for _, f := range flows {
		ctl.Go(func() {
			if err := f.topics.Run(ctlCtx); err != nil {
				fail(fmt.Errorf("flow %s: topics: %w", f.cfg.Name(), err))
			}
		})
		data.Go(func() {
			if err := f.mirror.Run(dataCtx); err != nil {
				fail(err)
			}
		})
	}
	d.log.Info("replicating", "flows", flowNames(flows))
	<-dataCtx.Done()
	stopCtl()
	ctl.Wait()
	data.Wait()
	errMu.Lock()
	defer errMu.Unlock()
	return firstErr
}

// build creates the clients and components of one flow.
func (d *Daemon) build(fc *config.Flow) (_ *flow, err error) {
	f := &flow{cfg: fc}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	name := fc.Name()
	newClient := func(role kafkaclient.Role, c config.Client, id string, extra ...kgo.Opt) (*kgo.Client, kafkaclient.Mapped, error) {
		cl, m, err := kafkaclient.New(role, c, kafkaclient.Identity{Flow: name, Role: id}, d.log, extra...)
		if err != nil {
			return nil, m, fmt.Errorf("flow %s: %w", name, err)
		}
		f.clients = append(f.clients, cl)
		for _, w := range m.Warnings {
			d.log.Warn("client setting", "flow", name, "role", id, "warning", w.String())
		}
		return cl, m, nil
	}
	consMap, err := kafkaclient.Map(kafkaclient.Consumer, fc.SourceConsumer)
	if err != nil {
		return nil, fmt.Errorf("flow %s: source consumer settings: %w", name, err)
	}
	src, _, err := newClient(kafkaclient.Consumer, fc.SourceConsumer, "replication-consumer", mirror.SourceOpts(consMap.Settings.ReadCommitted)...)
	if err != nil {
		return nil, err
	}
	dst, _, err := newClient(kafkaclient.Producer, fc.TargetProducer, "replication-producer", mirror.TargetOpts()...)
	if err != nil {
		return nil, err
	}
	srcAdm, _, err := newClient(kafkaclient.Admin, fc.SourceAdmin, "replication-source-admin")
	if err != nil {
		return nil, err
	}
	dstAdm, _, err := newClient(kafkaclient.Admin, fc.TargetAdmin, "replication-target-admin")
	if err != nil {
		return nil, err
	}
	f.srcAdmin, f.dstAdmin = srcAdm, dstAdm
	meta, _, err := newClient(kafkaclient.Producer, fc.TargetProducer, "internal-target-producer", kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	indexReader, _, err := newClient(kafkaclient.Consumer, fc.TargetConsumer, "index-target-consumer")
	if err != nil {
		return nil, err
	}
	syncWriter := meta
	if fc.EmitOffsetSyncsEnabled && fc.OffsetSyncsTopicLocation != "target" {
		if syncWriter, _, err = newClient(kafkaclient.Producer, fc.SourceProducer, "offset-syncs-source-producer", kgo.RecordPartitioner(kgo.ManualPartitioner())); err != nil {
			return nil, err
		}
	}

	pol, err := policy.New(fc.Policy.Class, fc.Policy.Separator, fc.Policy.InternalSeparatorEnabled, fc.Source)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", name, err)
	}
	topicFilter, err := policy.NewFilter(fc.Topics, fc.TopicsExclude)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", name, err)
	}
	cfgFilter, err := policy.NewConfigFilter(fc.ConfigPropertiesExclude, fc.UseDefaultsFrom)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", name, err)
	}
	group := ProgressGroup(fc.Source)
	f.internal = []internalTopic{{adm: kadm.NewClient(dstAdm), name: index.TopicName(fc.Source), rf: fc.OffsetSyncsTopicReplicationFactor}}
	var syncTopic string
	if fc.EmitOffsetSyncsEnabled {
		if fc.OffsetSyncsTopicLocation == "target" {
			syncTopic = pol.OffsetSyncsTopic(fc.Source)
			f.internal = append(f.internal, internalTopic{adm: kadm.NewClient(dstAdm), name: syncTopic, rf: fc.OffsetSyncsTopicReplicationFactor})
		} else {
			syncTopic = pol.OffsetSyncsTopic(fc.Target)
			f.internal = append(f.internal, internalTopic{adm: kadm.NewClient(srcAdm), name: syncTopic, rf: fc.OffsetSyncsTopicReplicationFactor})
		}
	}
	f.mirror = mirror.New(mirror.Config{
		Flow:            name,
		Group:           group,
		FlushInterval:   fc.FlushInterval,
		AutoOffsetReset: consMap.Settings.AutoOffsetReset,
		ReadCommitted:   consMap.Settings.ReadCommitted,
		ShutdownTimeout: d.opts.ShutdownTimeout,
		IndexTopic:      index.TopicName(fc.Source),
		SyncTopic:       syncTopic,
		OffsetLagMax:    fc.OffsetLagMax,
	}, mirror.Clients{Source: src, Target: dst, Meta: meta, IndexReader: indexReader, SyncWriter: syncWriter}, d.log)
	interval := fc.RefreshTopicsInterval
	if !fc.RefreshTopicsEnabled {
		interval = 24 * time.Hour
	}
	f.topics = topics.New(topics.Config{
		Flow:                  name,
		Source:                fc.Source,
		Target:                fc.Target,
		Policy:                pol,
		Topics:                topicFilter,
		Configs:               cfgFilter,
		HeartbeatsReplication: fc.HeartbeatsReplication,
		ReplicationFactor:     fc.ReplicationFactor,
		Interval:              interval,
		Group:                 group,
	}, kadm.NewClient(srcAdm), kadm.NewClient(dstAdm), func(ready []topics.Ready, gone []string) {
		ts := make([]mirror.Topic, len(ready))
		for i, r := range ready {
			ts[i] = mirror.Topic{Source: r.Source, Remote: r.Remote, ID: r.ID, Partitions: r.Partitions}
		}
		f.mirror.Update(ts, gone)
	}, d.log)
	return f, nil
}

// ping checks every cluster once, so an unreachable cluster fails fast with
// its alias and address instead of retrying silently.
func (d *Daemon) ping(ctx context.Context, flows []*flow) error {
	type target struct {
		alias string
		cl    *kgo.Client
	}
	var targets []target
	seen := map[string]bool{}
	for _, f := range flows {
		for _, t := range []target{{f.cfg.Source, f.srcAdmin}, {f.cfg.Target, f.dstAdmin}} {
			if !seen[t.alias] {
				seen[t.alias] = true
				targets = append(targets, t)
			}
		}
	}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			errs[i] = kafkaclient.Ping(ctx, t.cl, t.alias, strings.Join(d.cfg.Cluster[t.alias].BootstrapServers, ","), d.opts.ConnectTimeout)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Status is a snapshot of every flow.
type Status struct {
	Flows []FlowStatus `json:"flows"`
}

// FlowStatus is a snapshot of one flow.
type FlowStatus struct {
	Name   string          `json:"name"`
	Mirror mirror.Status   `json:"mirror"`
	Topics []topics.Result `json:"-"`
}

// Status returns a snapshot of every running flow.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	flows := d.flows
	d.mu.Unlock()
	var st Status
	for _, f := range flows {
		st.Flows = append(st.Flows, FlowStatus{Name: f.cfg.Name(), Mirror: f.mirror.Status(), Topics: f.topics.Results()})
	}
	return st
}

func flowNames(flows []*flow) []string {
	out := make([]string, len(flows))
	for i, f := range flows {
		out[i] = f.cfg.Name()
	}
	return out
}
