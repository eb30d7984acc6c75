// Package daemon builds every component of a Strait node from a Config,
// runs them, and stops them in order: control plane first (topics,
// checkpoints, heartbeats), then the data plane (which flushes and commits),
// then the clients.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/acls"
	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/coord"
	"strait/internal/heartbeat"
	"strait/internal/index"
	"strait/internal/kafkaclient"
	"strait/internal/mirror"
	"strait/internal/policy"
	"strait/internal/tail"
	"strait/internal/topics"
)

// Options tune a daemon beyond the MM2 config.
type Options struct {
	Logger *slog.Logger
	// ShutdownTimeout bounds the flush of in-flight records on stop.
	ShutdownTimeout time.Duration
	// ConnectTimeout bounds the first contact with each cluster.
	ConnectTimeout time.Duration
	// NoMM2Takeover turns off resuming from a Java MM2's stored progress.
	NoMM2Takeover bool
	// Plan is the client plan of the config (kafkaclient.NewPlan), so that
	// run builds exactly what check validated; nil plans it in Run.
	Plan *kafkaclient.Plan
	// Latency, when set, gives the replication latency observer (seconds)
	// of a flow's source partition (metrics.Registry.Latency).
	Latency func(flow, topic string, partition int32) func(seconds float64)
}

// DefaultShutdownTimeout bounds a stop's flush of in-flight records when
// Options leave it unset (strait run --shutdown-timeout's default).
const DefaultShutdownTimeout = 30 * time.Second

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
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 15 * time.Second
	}
	return &Daemon{cfg: cfg, opts: opts, log: opts.Logger}
}

// ProgressGroup is the consumer group on the target that stores the
// progress of the flow from source.
func ProgressGroup(source string) string { return "strait-" + source }

// isProgressGroup reports whether group is one of Strait's progress groups
// for the configured clusters; those are never checkpointed.
func (d *Daemon) isProgressGroup(group string) bool { return IsProgressGroup(d.cfg, group) }

// IsProgressGroup reports whether group is Strait's progress group of one
// of cfg's clusters.
func IsProgressGroup(cfg *config.Config, group string) bool {
	for _, a := range cfg.Clusters {
		if group == ProgressGroup(a) {
			return true
		}
	}
	return false
}

// flow is one flow of the config with its clients and components. A
// heartbeat-only pair has only the heartbeat emitter.
type flow struct {
	cfg      *config.Flow
	clients  []*kgo.Client // every client of the flow, closed last
	pings    []ping        // one client per cluster the flow talks to
	internal []internalTopic

	topics      *topics.Reconciler
	acls        *acls.Syncer // nil unless sync.topic.acls.enabled
	indexReader *index.Reader
	checkpoints *checkpoint.Checkpointer
	heartbeat   *heartbeat.Emitter

	// replicates: the flow copies data (not only heartbeats).
	replicates bool
	// share runs the flow's part on this node, with the other nodes that
	// run it (share.go); its mirrors are built from mirrorCfg and
	// mirrorClients. Nil for a heartbeat-only pair.
	share         *share
	member        *coord.Member
	mirrorCfg     mirror.Config
	mirrorClients mirror.Clients
	mirrorDeps    mirror.Deps // mirrorClients and what the flow's mirrors share
	// control is the control duty running now (replicating flows; the
	// share's loop starts and stops it).
	control *controlDuty
	// drReader reads and follows the flow's failover state (package dr)
	// on its target; nil for a heartbeat-only pair.
	drReader *kgo.Client
}

// controlDuty is the control-plane components of a replicating flow while
// this node holds the flow's control duty.
type controlDuty struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// dataPlane returns the mirror copying the flow's data on this node now,
// nil when there is none (heartbeats only, or before the first
// assignment).
func (f *flow) dataPlane() *mirror.Mirror {
	if f.share != nil {
		return f.share.dataPlane()
	}
	return nil
}

// controlComponents are the flow's control duties besides the topic
// reconciler: run by the duty's holder of a replicating flow, by every node
// for a heartbeat-only pair.
func (f *flow) controlComponents() map[string]func(context.Context) error {
	out := map[string]func(context.Context) error{}
	if f.acls != nil {
		out["ACLs"] = f.acls.Run
	}
	if f.checkpoints != nil {
		out["checkpoints"] = f.checkpoints.Run
	}
	if f.heartbeat != nil {
		out["heartbeats"] = f.heartbeat.Run
	}
	return out
}

// controlRunning reports whether this node runs the flow's control duty
// (called by the share's loop only).
func (f *flow) controlRunning() bool { return f.control != nil }

// setControl starts or stops the control duty of a replicating flow (called by
// the share's loop only). Stopping waits until every component returned
// and the reconciler only follows the target.
func (f *flow) setControl(ctx context.Context, on bool, fail func(error)) {
	if on == (f.control != nil) {
		return
	}
	if !on {
		if f.topics != nil {
			f.topics.SetFollowing(true)
		}
		f.control.cancel()
		f.control.wg.Wait()
		f.control = nil
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	f.control = &controlDuty{cancel: cancel}
	for name, run := range f.controlComponents() {
		f.control.wg.Go(func() {
			if err := run(cctx); err != nil && cctx.Err() == nil {
				fail(fmt.Errorf("flow %s: %s: %w", f.cfg.Name(), name, err))
			}
		})
	}
	if f.topics != nil {
		f.topics.SetFollowing(false)
		f.topics.Wake()
	}
}

// internalTopic is a compacted topic a flow writes its own records to.
type internalTopic struct {
	adm  *kadm.Client
	name string
	rf   int
}

type ping struct {
	alias string
	cl    *kgo.Client
}

func (f *flow) close() {
	for _, c := range f.clients {
		c.Close()
	}
}

// Run builds and runs every flow until ctx is done or a flow fails.
func (d *Daemon) Run(ctx context.Context) error {
	if len(d.cfg.EnabledFlows()) == 0 {
		return errors.New("no flow is enabled: set SOURCE->TARGET.enabled = true for at least one pair of clusters")
	}
	flows, err := d.buildAll()
	defer closeAll(flows)
	if err != nil {
		return err
	}
	if err := d.prepare(ctx, flows); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	flows, follow, err := d.withoutFailedOver(ctx, flows)
	if err != nil {
		return err
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
	runner := func(wg *sync.WaitGroup, ctx context.Context, name string, run func(context.Context) error) {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				fail(fmt.Errorf("%s: %w", name, err))
			}
		})
	}
	for _, f := range flows {
		name := "flow " + f.cfg.Name()
		// Each flow stops alone when a failover marks it (watchFailover),
		// the control plane first as at shutdown.
		ctlCtx, stopFlowCtl := context.WithCancel(ctlCtx)
		dataCtx, stopFlowData := context.WithCancel(dataCtx)
		defer stopFlowCtl()
		defer stopFlowData()
		if f.drReader != nil {
			ctl.Go(func() {
				d.watchFailover(ctlCtx, f, follow[f], func() { stopFlowCtl(); stopFlowData() })
			})
		}
		if f.topics != nil {
			runner(&ctl, ctlCtx, name+": topics", f.topics.Run)
		}
		if f.indexReader != nil {
			runner(&ctl, ctlCtx, name+": offset index", f.indexReader.Run)
		}
		if f.share != nil {
			// The member leaves the group only after the share's loop
			// flushed and committed, as its commits need the membership.
			memberCtx, stopMember := context.WithCancel(context.WithoutCancel(ctx))
			data.Go(func() {
				defer stopMember()
				_ = f.share.run(dataCtx, fail)
			})
			runner(&data, memberCtx, name+": group membership", f.member.Run)
			continue
		}
		for what, run := range f.controlComponents() {
			runner(&ctl, ctlCtx, name+": "+what, run)
		}
	}
	d.log.Info("running", "flows", flowNames(flows))
	<-dataCtx.Done()
	stopCtl()
	ctl.Wait()
	data.Wait()
	errMu.Lock()
	defer errMu.Unlock()
	return firstErr
}

// buildAll builds every flow of the client plan (kafkaclient.NewPlan of
// the config unless Options.Plan gives one); the caller closes them, also
// when it returns an error.
func (d *Daemon) buildAll() ([]*flow, error) {
	plan := d.opts.Plan
	if plan == nil {
		var err error
		if plan, err = kafkaclient.NewPlan(d.cfg); err != nil {
			return nil, err
		}
	}
	var flows []*flow
	for _, fp := range plan.Flows {
		f, err := d.build(fp)
		if err != nil {
			return flows, err
		}
		if f != nil {
			flows = append(flows, f)
		}
	}
	return flows, nil
}

func closeAll(flows []*flow) {
	for _, f := range flows {
		f.close()
	}
}

// prepare checks every cluster once (ping), then creates the internal
// topics.
func (d *Daemon) prepare(ctx context.Context, flows []*flow) error {
	if err := d.ping(ctx, flows); err != nil {
		return err
	}
	for _, f := range flows {
		for _, it := range f.internal {
			if err := topics.EnsureCompacted(ctx, it.adm, it.name, it.rf); err != nil {
				return fmt.Errorf("flow %s: %w", f.cfg.Name(), err)
			}
		}
	}
	return nil
}

// ping checks every cluster the flows use once, so an unreachable cluster
// fails fast with its alias and address instead of retrying silently.
func (d *Daemon) ping(ctx context.Context, flows []*flow) error {
	var pings []ping
	seen := map[string]bool{}
	for _, f := range flows {
		for _, p := range f.pings {
			if !seen[p.alias] {
				seen[p.alias] = true
				pings = append(pings, p)
			}
		}
	}
	errs := make([]error, len(pings))
	var wg sync.WaitGroup
	for i, p := range pings {
		wg.Go(func() {
			errs[i] = kafkaclient.Ping(ctx, p.cl, p.alias, strings.Join(d.cfg.Cluster[p.alias].BootstrapServers, ","), d.opts.ConnectTimeout)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// builder creates a flow's clients and remembers them for closing.
type builder struct {
	d      *Daemon
	f      *flow
	p      *kafkaclient.FlowPlan
	warned map[string]bool
}

// settings returns a planned client's mapped settings, logging each warning
// once per flow even when several clients share the settings.
func (b *builder) settings(c *kafkaclient.Client) (kafkaclient.Mapped, error) {
	name := b.f.cfg.Name()
	if c == nil {
		return kafkaclient.Mapped{}, fmt.Errorf("flow %s: a client is missing from the client plan (a bug in Strait)", name)
	}
	for _, w := range c.Mapped.Warnings {
		if msg := w.String(); !b.warned[msg] {
			b.warned[msg] = true
			b.d.log.Warn("client setting", "flow", name, "role", c.Role, "warning", msg)
		}
	}
	return c.Mapped, nil
}

// build creates a client from planned settings and remembers it for closing.
func (b *builder) build(c *kafkaclient.Client, id string, extra ...kgo.Opt) (*kgo.Client, error) {
	name := b.f.cfg.Name()
	cl, err := c.New(kafkaclient.Identity{Flow: name, Role: id}, b.d.log, extra...)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", name, err)
	}
	b.f.clients = append(b.f.clients, cl)
	return cl, nil
}

// client is settings then build.
func (b *builder) client(c *kafkaclient.Client, id string, extra ...kgo.Opt) (*kgo.Client, error) {
	if _, err := b.settings(c); err != nil {
		return nil, err
	}
	return b.build(c, id, extra...)
}

// build creates the clients and components of one flow, or returns nil
// when the flow has nothing to do on this node.
func (d *Daemon) build(fp *kafkaclient.FlowPlan) (_ *flow, err error) {
	fc := fp.Flow
	f := &flow{cfg: fc}
	b := &builder{d: d, f: f, p: fp, warned: map[string]bool{}}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	pol, err := fc.ReplicationPolicy() // the class, with strait.rename.rules
	if err != nil {
		return nil, err
	}
	if fp.Heartbeats {
		if err := d.buildHeartbeats(b, pol); err != nil {
			return nil, err
		}
	}
	if fp.Replicates {
		if err := d.buildReplication(b, pol); err != nil {
			return nil, err
		}
	}
	if f.heartbeat == nil && !f.replicates {
		return nil, nil
	}
	if f.replicates {
		if err := d.buildShare(b); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (d *Daemon) buildHeartbeats(b *builder, pol policy.ReplicationPolicy) error {
	fc := b.f.cfg
	cl, err := b.client(b.p.TargetProducer, "heartbeats-target-producer", internalProducerOpts()...)
	if err != nil {
		return err
	}
	b.f.pings = append(b.f.pings, ping{fc.Target, cl})
	b.f.internal = append(b.f.internal, internalTopic{adm: kadm.NewClient(cl), name: pol.HeartbeatsTopic(), rf: fc.HeartbeatsTopicReplicationFactor})
	b.f.heartbeat = heartbeat.New(heartbeat.Config{
		Source: fc.Source, Target: fc.Target, Topic: pol.HeartbeatsTopic(), Interval: fc.EmitHeartbeatsInterval,
	}, cl, d.log)
	return nil
}

// buildReplication creates the data plane, the topic reconciler and the
// checkpointer of an enabled flow.
func (d *Daemon) buildReplication(b *builder, pol policy.ReplicationPolicy) error {
	f, fc, name := b.f, b.f.cfg, b.f.cfg.Name()
	consMap, err := b.settings(b.p.SourceConsumer)
	if err != nil {
		return err
	}
	sourceOpts := mirror.SourceOpts(consMap.Settings.ReadCommitted, consMap.Settings.FetchMaxBytes)
	src, err := b.build(b.p.SourceConsumer, "replication-consumer", sourceOpts...)
	if err != nil {
		return err
	}
	prodMap, err := b.settings(b.p.TargetProducer)
	if err != nil {
		return err
	}
	targetOpts := mirror.TargetOpts(prodMap.Settings.BufferBytes)
	if fc.ExactlyOnce {
		targetOpts = append(targetOpts, mirror.TransactionOpts()...)
	}
	dst, err := b.build(b.p.TargetProducer, "replication-producer", targetOpts...)
	if err != nil {
		return err
	}
	srcAdm, err := b.client(b.p.SourceAdmin, "replication-source-admin")
	if err != nil {
		return err
	}
	dstAdm, err := b.client(b.p.TargetAdmin, "replication-target-admin")
	if err != nil {
		return err
	}
	f.pings = append(f.pings, ping{fc.Source, srcAdm}, ping{fc.Target, dstAdm})
	meta, err := b.client(b.p.TargetProducer, "internal-target-producer", internalProducerOpts()...)
	if err != nil {
		return err
	}
	loader, err := b.client(b.p.TargetConsumer, "internal-target-consumer", tail.ClientOpts()...)
	if err != nil {
		return err
	}
	syncWriter := meta
	if b.p.SourceProducer != nil { // offset syncs live on the source
		if syncWriter, err = b.client(b.p.SourceProducer, "offset-syncs-source-producer", internalProducerOpts()...); err != nil {
			return err
		}
	}
	topicFilter, err := policy.NewFilter(fc.Topics, fc.TopicsExclude)
	if err != nil {
		return fmt.Errorf("flow %s: %w", name, err)
	}
	cfgFilter, err := policy.NewConfigFilter(fc.ConfigPropertiesExclude, fc.UseDefaultsFrom)
	if err != nil {
		return fmt.Errorf("flow %s: %w", name, err)
	}
	group := ProgressGroup(fc.Source)
	indexTopic := index.TopicName(fc.Source)
	tgtAdm, srcAdmK := kadm.NewClient(dstAdm), kadm.NewClient(srcAdm)
	f.internal = append(f.internal, internalTopic{adm: tgtAdm, name: indexTopic, rf: fc.OffsetSyncsTopicReplicationFactor})
	var syncTopic string
	if fc.EmitOffsetSyncsEnabled {
		if fc.OffsetSyncsTopicLocation == "target" {
			syncTopic = pol.OffsetSyncsTopic(fc.Source)
			f.internal = append(f.internal, internalTopic{adm: tgtAdm, name: syncTopic, rf: fc.OffsetSyncsTopicReplicationFactor})
		} else {
			syncTopic = pol.OffsetSyncsTopic(fc.Target)
			f.internal = append(f.internal, internalTopic{adm: srcAdmK, name: syncTopic, rf: fc.OffsetSyncsTopicReplicationFactor})
		}
	}
	prov, err := b.provenance(prodMap.Settings.Idempotent, meta, tgtAdm)
	if err != nil {
		return err
	}
	f.replicates = true
	if f.drReader, err = b.client(b.p.TargetConsumer, "failover-state-target-consumer", tail.ClientOpts()...); err != nil {
		return err
	}
	f.mirrorClients = mirror.Clients{Source: src, Target: dst, Meta: meta, IndexReader: loader, SyncWriter: syncWriter,
		// The fast path's lanes and fetch connections close their clients at the end of every
		// forwarder run: each needs a SASL login of its own.
		NewTarget: func(opts ...kgo.Opt) (*kgo.Client, error) {
			return b.p.TargetProducer.New(kafkaclient.Identity{Flow: name, Role: "replication-producer"}, d.log, append(slices.Clone(targetOpts), opts...)...)
		},
		NewSource: func(opts ...kgo.Opt) (*kgo.Client, error) {
			return b.p.SourceConsumer.New(kafkaclient.Identity{Flow: name, Role: "replication-consumer"}, d.log, append(slices.Clone(sourceOpts), opts...)...)
		}}
	f.mirrorCfg = mirrorConfig(fc, consMap.Settings, prodMap.Settings, d.opts, mirrorTopicNames{Group: group, Index: indexTopic, Sync: syncTopic})
	if err := f.mirrorCfg.Validate(); err != nil {
		return err
	}
	f.mirrorDeps = mirror.Deps{
		Clients: f.mirrorClients, Log: d.log, Latency: d.latency(name), Provenance: prov,
		// The share records the control plane's first listing in it.
		Beginning: &mirror.Beginning{},
		// Counted across the mirrors the share runs.
		Counters: &mirror.Counters{},
	}

	interval := fc.RefreshTopicsInterval
	if !fc.RefreshTopicsEnabled {
		interval = 24 * time.Hour
	}
	f.topics = topics.New(topics.Config{
		Flow:                         name,
		Source:                       fc.Source,
		Target:                       fc.Target,
		Policy:                       pol,
		Topics:                       topicFilter,
		Configs:                      cfgFilter,
		HeartbeatsReplication:        fc.HeartbeatsReplication,
		ReplicationFactor:            fc.ReplicationFactor,
		Interval:                     interval,
		Group:                        group,
		SyncConfigs:                  fc.SyncTopicConfigsEnabled,
		SyncConfigsInterval:          fc.SyncTopicConfigsInterval,
		DeleteRemoteOnSourceDeletion: fc.SyncTopicDeletion,
		// The first listing is where the flow began on this node, whether
		// or not the remote topics are there yet.
		Listed: func(selected []topics.Ready) { f.mirrorDeps.Beginning.Listed(mirrorTopics(selected)) },
	}, srcAdm, dstAdm, func(ready []topics.Ready, gone []string) {
		f.share.topicsReady(mirrorTopics(ready), gone)
	}, d.log)

	if err := d.buildACLs(b, pol, topicFilter, srcAdmK, tgtAdm); err != nil {
		return err
	}
	if !fc.EmitCheckpointsEnabled && !fc.SyncGroupOffsetsEnabled {
		return nil
	}
	return d.buildCheckpoints(b, pol, topicFilter, srcAdmK, tgtAdm, meta)
}

// mirrorTopicNames are the names a flow's data plane uses on the clusters.
type mirrorTopicNames struct {
	Group string // the progress group on the target
	Index string // the offset index topic on the target
	Sync  string // MM2's offset syncs topic; empty when not emitted
}

// mirrorConfig is the data plane's configuration of flow fc, from the
// client settings kafkaclient resolved (every default filled in) and the
// daemon's options: a pure function, so that each field has one source
// (TestMirrorConfig).
func mirrorConfig(fc *config.Flow, cons, prod kafkaclient.Settings, opts Options, names mirrorTopicNames) mirror.Config {
	maxBuffered, linkBuffer := mirror.Budget(prod.BufferBytes, prod.BufferBytesSet)
	cfg := mirror.Config{
		Flow:                   fc.Name(),
		Source:                 fc.Source,
		Group:                  names.Group,
		FlushInterval:          fc.FlushInterval,
		AutoOffsetReset:        cons.AutoOffsetReset,
		ReadCommitted:          cons.ReadCommitted,
		ShutdownTimeout:        opts.ShutdownTimeout,
		IndexTopic:             names.Index,
		SyncTopic:              names.Sync,
		OffsetLagMax:           fc.OffsetLagMax,
		FastPath:               fc.FastPath,
		Compression:            prod.Compression,
		CompressionLevel:       prod.CompressionLevel,
		Idempotent:             prod.Idempotent,
		Acks:                   acks(prod.Acks),
		PartitionFetchSize:     cons.PartitionFetchBytes,
		FetchMaxBytes:          cons.FetchMaxBytes,
		MaxBuffered:            maxBuffered,
		LinkBuffer:             linkBuffer,
		ThrottleBytesPerSecond: fc.ThrottleBytesPerSecond,
		IndexMaxSegments:       fc.IndexMaxSegments,
	}
	if !opts.NoMM2Takeover {
		cfg.TakeoverTopic = fc.OffsetStorageTopic
	}
	if fc.ExactlyOnce {
		// The share gives each mirror its id (transactionalID, by the
		// member's slot).
		cfg.Transactions = &mirror.Transactions{Interval: fc.TransactionInterval, Timeout: fc.TransactionTimeout}
	}
	if fc.PreserveOffsets {
		// The config checked both lists with the same compiler.
		topics, _ := policy.CompilePattern(fc.PreserveTopics)
		refuse, _ := policy.CompilePattern(fc.RefuseGaps)
		cfg.Preserve = &mirror.Preserve{Topics: topics, RefuseGaps: refuse, Timeout: fillerTimeout}
	}
	return cfg
}

// mirrorTopics converts the topic reconciler's topics for the data plane.
func mirrorTopics(ready []topics.Ready) []mirror.Topic {
	ts := make([]mirror.Topic, len(ready))
	for i, r := range ready {
		ts[i] = mirror.Topic{Source: r.Source, Remote: r.Remote, ID: r.ID, Partitions: r.Partitions}
	}
	return ts
}

// buildShare makes a replicating flow shared with the other nodes that run
// it: a member of its progress group on the target, on a client of its own,
// and the share that runs the flow's part on this node. The topic
// reconciler only follows the target until the node holds the control
// duty.
func (d *Daemon) buildShare(b *builder) error {
	f := b.f
	cl, err := b.client(b.p.TargetAdmin, "group-member")
	if err != nil {
		return err
	}
	f.share = newShare(d, f, func(c coord.Config) *coord.Member {
		f.member = coord.New(c, cl, d.log.With("flow", f.cfg.Name()))
		return f.member
	})
	f.topics.SetFollowing(true)
	return nil
}

// buildACLs creates the ACL syncer of a flow with sync.topic.acls.enabled.
func (d *Daemon) buildACLs(b *builder, pol policy.ReplicationPolicy, topicFilter *policy.Filter, srcAdm, tgtAdm *kadm.Client) error {
	fc := b.f.cfg
	if !fc.SyncTopicACLsEnabled {
		return nil
	}
	var groups *policy.Filter
	if fc.SyncGroupACLs {
		var err error
		if groups, err = policy.NewFilter(fc.Groups, fc.GroupsExclude); err != nil {
			return fmt.Errorf("flow %s: %w", fc.Name(), err)
		}
	}
	b.f.acls = acls.New(acls.Config{
		Flow: fc.Name(), Source: fc.Source, Target: fc.Target, Policy: pol,
		Topics: topicFilter, HeartbeatsReplication: fc.HeartbeatsReplication,
		Groups: groups, OwnGroup: d.isProgressGroup, Interval: fc.SyncTopicACLsInterval,
	}, srcAdm, tgtAdm, d.log)
	return nil
}

func (d *Daemon) buildCheckpoints(b *builder, pol policy.ReplicationPolicy, topicFilter *policy.Filter, srcAdm, tgtAdm *kadm.Client, producer *kgo.Client) error {
	f, fc := b.f, b.f.cfg
	groupFilter, err := policy.NewFilter(fc.Groups, fc.GroupsExclude)
	if err != nil {
		return fmt.Errorf("flow %s: %w", fc.Name(), err)
	}
	follower, err := b.client(b.p.TargetConsumer, "index-target-consumer", tail.ClientOpts()...)
	if err != nil {
		return err
	}
	loader, err := b.client(b.p.TargetConsumer, "checkpoints-target-consumer", tail.ClientOpts()...)
	if err != nil {
		return err
	}
	cpTopic := pol.CheckpointsTopic(fc.Source)
	f.internal = append(f.internal, internalTopic{adm: tgtAdm, name: cpTopic, rf: fc.CheckpointsTopicReplicationFactor})
	f.indexReader = index.NewReader(follower, index.TopicName(fc.Source), d.log)
	emit := fc.EmitCheckpointsInterval
	if !fc.EmitCheckpointsEnabled {
		emit = fc.SyncGroupOffsetsInterval
	}
	reverse, err := d.reverse(b, srcAdm, tgtAdm) // active-active: see reverse.go
	if err != nil {
		return err
	}
	f.checkpoints = checkpoint.New(checkpoint.Config{
		Flow:                  checkpoint.Flow{Source: fc.Source, Target: fc.Target, Policy: pol, Topics: topicFilter, Reverse: reverse},
		Groups:                groupFilter,
		Internal:              d.isProgressGroup,
		Topic:                 cpTopic,
		EmitInterval:          emit,
		RefreshGroupsInterval: fc.RefreshGroupsInterval,
		SyncGroupOffsets:      fc.SyncGroupOffsetsEnabled,
		SyncInterval:          fc.SyncGroupOffsetsInterval,
	}, checkpoint.Clients{SourceAdmin: srcAdm, TargetAdmin: tgtAdm, Producer: producer, Loader: loader}, f.indexReader, d.log)
	return nil
}

// internalProducerOpts configure the producers of Strait's own records
// (offset index, offset syncs, checkpoints, heartbeats). Those records are
// compacted and rewriting one is harmless, so the producers are not
// idempotent: an unacknowledged write can then be abandoned when a stop's
// deadline passes or the cluster is gone, where an idempotent producer
// must wait for an answer it may never get.
func internalProducerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableIdempotentWrite(),
		// One request at a time keeps the index topic in write order
		// (an old incarnation's tombstones before the new one's segments).
		kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.RecordDeliveryTimeout(30 * time.Second),
	}
}

// acks converts the producer's acks setting for a produce request.
func acks(s string) int16 {
	switch s {
	case "1":
		return 1
	case "0":
		return 0
	}
	return -1
}

// Status is a snapshot of every flow.
type Status struct {
	Flows []FlowStatus `json:"flows"`
}

// FlowStatus is a snapshot of one flow.
type FlowStatus struct {
	Name        string             `json:"name"`
	Source      string             `json:"source"`
	Target      string             `json:"target"`
	Mirror      mirror.Status      `json:"mirror"`
	Topics      []topics.Result    `json:"-"`
	Checkpoints *checkpoint.Status `json:"checkpoints,omitempty"`
	// BadInternalRecords counts undecodable records skipped in internal
	// topics (offset index, MM2 offsets, checkpoints).
	BadInternalRecords int64 `json:"bad_internal_records"`
	// Problems are the control plane's per-item errors of its last passes
	// (controlProblems): each item failed alone while the rest synced.
	Problems []ControlProblem `json:"control_problems,omitempty"`
	// Share is this node's membership of the flow's group: its generation,
	// slot, the partitions it owns and whether it holds the control duty.
	Share *coord.Status `json:"share,omitempty"`
}

// Status returns a snapshot of every replicating flow.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	flows := d.flows
	d.mu.Unlock()
	var st Status
	for _, f := range flows {
		if !f.replicates {
			continue
		}
		fs := FlowStatus{Name: f.cfg.Name(), Source: f.cfg.Source, Target: f.cfg.Target, Topics: f.topics.Results()}
		if m := f.dataPlane(); m != nil {
			fs.Mirror = m.Status()
		} else {
			fs.Mirror = mirror.Status{Flow: f.cfg.Name()}
		}
		if f.member != nil {
			ms := f.member.Status()
			fs.Share = &ms
		}
		fs.BadInternalRecords = fs.Mirror.BadInternalRecords
		fs.Problems = controlProblems(fs.Topics, f.acls)
		if f.checkpoints != nil {
			cs := f.checkpoints.Status()
			fs.Checkpoints = &cs
			fs.BadInternalRecords += cs.Skipped + int64(f.indexReader.Skipped())
		}
		st.Flows = append(st.Flows, fs)
	}
	return st
}

// ErrNoFlow is returned for a flow name the node does not run.
var ErrNoFlow = errors.New("no such flow")

// checkpointer returns the checkpointer of the named flow.
func (d *Daemon) checkpointer(flow string) (*checkpoint.Checkpointer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.flows {
		if f.cfg.Name() == flow {
			if f.checkpoints == nil {
				return nil, fmt.Errorf("flow %s emits no checkpoints (emit.checkpoints.enabled is false, or it is a heartbeat-only pair)", flow)
			}
			return f.checkpoints, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrNoFlow, flow)
}

// Groups returns the checkpoint and sync state of every group of a flow,
// or of group alone when it is not empty.
func (d *Daemon) Groups(ctx context.Context, flow, group string) ([]checkpoint.GroupState, error) {
	c, err := d.checkpointer(flow)
	if err != nil {
		return nil, err
	}
	return c.Groups(ctx, group), nil
}

// Translate translates a group's committed offsets through a flow's index.
func (d *Daemon) Translate(ctx context.Context, flow, group string) ([]checkpoint.Translation, error) {
	c, err := d.checkpointer(flow)
	if err != nil {
		return nil, err
	}
	return c.Translate(ctx, group)
}

// TranslateOffset translates one source offset through a flow's index.
func (d *Daemon) TranslateOffset(ctx context.Context, flow, topic string, partition int32, offset int64) (checkpoint.Translation, error) {
	c, err := d.checkpointer(flow)
	if err != nil {
		return checkpoint.Translation{}, err
	}
	return c.TranslateOffset(ctx, topic, partition, offset)
}

// latency is the flow's replication latency observer for mirror.Config,
// nil without one.
func (d *Daemon) latency(flow string) func(topic string, partition int32) func(float64) {
	if d.opts.Latency == nil {
		return nil
	}
	return func(topic string, partition int32) func(float64) { return d.opts.Latency(flow, topic, partition) }
}

func flowNames(flows []*flow) []string {
	out := make([]string, len(flows))
	for i, f := range flows {
		out[i] = f.cfg.Name()
		if !f.replicates {
			out[i] += " (heartbeats)"
		}
	}
	return out
}

// setBufferBytes is buffer.memory as the user set it, 0 when unset: the
// fast path then takes its default, and more over a long link.
