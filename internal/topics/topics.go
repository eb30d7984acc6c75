// Package topics is the control plane of one flow for topics: it discovers
// the source topics the flow replicates, creates their remote topics on the
// target with the source's partition count and filtered configs, grows
// partitions, keeps remote topic configs in line with the source's, reports
// source topics that were deleted (and deletes their remote topics when told
// to), and hands the topics that are ready to the data plane.
//
// Every pass first reads both clusters and decides (a Plan), then applies
// what it decided, so `Plan` and a reconcile never disagree. One bad topic
// never blocks the others: every reconcile returns a result per topic.
package topics

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/policy"
)

// Config is what the reconciler needs from the flow's configuration.
type Config struct {
	Flow                  string // "A->B"
	Source                string // source alias, prefixed to remote topic names
	Target                string // target alias, for cycle detection
	Policy                policy.ReplicationPolicy
	Topics                *policy.Filter
	Configs               *policy.ConfigFilter
	HeartbeatsReplication bool
	ReplicationFactor     int           // -1 = broker default
	Interval              time.Duration // between reconciles
	// Group is the progress group on the target. A remote topic with
	// progress stored in it was created by Strait and may be grown.
	Group string

	// SyncConfigs is sync.topic.configs.enabled: every SyncConfigsInterval
	// (sync.topic.configs.interval.seconds; every pass when not positive) a
	// pass also brings the configs of existing remote topics in line with
	// their source topics' (spec §4.6, with the rules of diffConfigs).
	// Configs are copied at creation either way.
	SyncConfigs         bool
	SyncConfigsInterval time.Duration
	// DeleteRemoteOnSourceDeletion is strait.sync.topic.deletion: a remote
	// topic whose source topic was deleted is deleted too. When false (the
	// default, as MM2) it is left on the target and reported.
	DeleteRemoteOnSourceDeletion bool
	// Listed, when set, is given at every pass, in either mode, the
	// selected source topics with their source partition counts, whether
	// their remote topics are ready or not: the first listing is where the
	// flow began (auto.offset.reset applies to its partitions).
	Listed func(selected []Ready)
}

// Ready is a source topic whose remote topic exists with enough partitions.
type Ready struct {
	Source     string
	Remote     string
	ID         [16]byte // source topic ID
	Partitions int32
}

// Action is what a reconcile did for a topic.
type Action string

// Actions.
const (
	Unchanged     Action = "unchanged"
	Created       Action = "created"
	Grown         Action = "grown"
	ConfigsSynced Action = "configs-synced" // only configs changed
	Failed        Action = "failed"
	// SourceDeleted is a remote topic left on the target after its source
	// topic was deleted (strait.sync.topic.deletion=false).
	SourceDeleted Action = "source-deleted"
	// RemoteDeleted is a remote topic deleted because its source topic was
	// (strait.sync.topic.deletion=true).
	RemoteDeleted Action = "remote-deleted"
)

// Result is the outcome for one source topic.
type Result struct {
	Source     string
	Remote     string
	Partitions int32
	Action     Action
	// Err is why the topic is not replicated (with SourceDeleted: why its
	// remote topic could not be deleted).
	Err error
	// Configs are the config changes applied to the remote topic.
	Configs []ConfigChange
	// Problems are what could not be applied to a topic that is replicated
	// anyway: a config the target rejected, a min.insync.replicas lower
	// than the target's, configs that could not be described.
	Problems []Problem
}

// passTimeout bounds one reconcile pass. A pass that runs out of time says so
// and leaves the topics it did not finish to the next pass.
const passTimeout = time.Minute

// Reconciler keeps the remote topics of one flow in line with the source.
type Reconciler struct {
	cfg   Config
	src   *kadm.Client
	dst   *kadm.Client
	srcCl *kgo.Client // for requests kadm cannot shape: uncached metadata, configs without synonyms
	dstCl *kgo.Client // also CreateTopics and IncrementalAlterConfigs with configs per topic
	apply func(ready []Ready, gone []string)
	log   *slog.Logger
	// timeout bounds one pass: passTimeout but in tests.
	timeout time.Duration
	// editSourceConfigs, in tests only, changes the source configs a pass
	// read, to bring in what a real source cannot hold (a vendor's key).
	editSourceConfigs func(topic string, c topicConfigs)

	// passMu makes Reconcile and Plan take turns: both read and the
	// first writes the state below.
	passMu sync.Mutex

	// listed holds the selected source topics of the last listing, to
	// notice topics deleted on the source.
	listed map[string]bool
	// vanished holds selected source topics that disappeared from the
	// source while this process watched and whose remote topic is still
	// there. With a policy whose remote names do not say their source
	// (identity), it is the only way to know a remote topic lost its source.
	vanished map[string]bool

	// owned remembers remote topics this process created or saw with the
	// source's partition count: those are grown when the source grows.
	owned map[string]bool
	// rejected holds, by remote topic and key, config values the target
	// refused, so they are not sent again every interval.
	rejected map[string]map[string]rejection
	// lastConfigSync is when the last pass that synced configs started.
	lastConfigSync time.Time
	// reported avoids logging the same topic error every interval;
	// reportedProblems the same config problem.
	reported         map[string]string
	reportedProblems map[string]string

	mu      sync.Mutex
	results []Result

	// following: another node holds the flow's control duty (package
	// coord), so a pass only follows the target (follow).
	following atomic.Bool
	wake      chan struct{}
}

// SetFollowing switches the reconciler between changing the target
// (false, the default: this node holds the flow's control duty) and only
// following it (true: another node creates, grows and configures the
// remote topics; this one hands the data plane the topics that are ready).
//
// Switching to following waits for a pass in flight, so that once it
// returns this node changes nothing more on the target.
func (r *Reconciler) SetFollowing(following bool) {
	if following {
		r.passMu.Lock() // the pass in flight ends first
		defer r.passMu.Unlock()
	}
	r.following.Store(following)
}

// Wake makes Run start a pass now rather than at the next interval (a node
// that just took the control duty creates what is missing). It never blocks.
func (r *Reconciler) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// New returns a Reconciler that calls apply after every reconcile with the
// topics that are ready and the selected topics that disappeared from the
// source since the previous reconcile. src and dst are admin clients of the
// source and the target, left open.
func New(cfg Config, src, dst *kgo.Client, apply func(ready []Ready, gone []string), log *slog.Logger) *Reconciler {
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	return &Reconciler{
		cfg: cfg, src: kadm.NewClient(src), dst: kadm.NewClient(dst), srcCl: src, dstCl: dst, apply: apply,
		log:              log.With("component", "topics", "flow", cfg.Flow),
		timeout:          passTimeout,
		vanished:         make(map[string]bool),
		owned:            make(map[string]bool),
		rejected:         make(map[string]map[string]rejection),
		reported:         make(map[string]string),
		reportedProblems: make(map[string]string),
		wake:             make(chan struct{}, 1),
	}
}

// Run reconciles at once and then every Interval (or every
// SyncConfigsInterval, when shorter) until ctx is done.
func (r *Reconciler) Run(ctx context.Context) error {
	every := r.cfg.Interval
	if r.cfg.SyncConfigs && r.cfg.SyncConfigsInterval > 0 && r.cfg.SyncConfigsInterval < every {
		every = r.cfg.SyncConfigsInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("topic reconcile failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.wake:
		}
	}
}

// Results returns the outcome of the last reconcile.
func (r *Reconciler) Results() []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.results)
}

// Reconcile makes one pass: it returns a result per selected source topic
// and per deleted source topic whose remote topic is (or was, until this
// pass) on the target, and an error only when the clusters could not be
// listed at all.
func (r *Reconciler) Reconcile(parent context.Context) ([]Result, error) {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	if r.following.Load() {
		return nil, r.follow(ctx)
	}
	start := time.Now()
	syncConfigs := r.configsDue(start)
	obs, err := r.observe(ctx, syncConfigs)
	if err != nil {
		return nil, err
	}
	p := r.decide(obs)
	r.giveListing(obs, p)
	r.create(ctx, p)
	r.grow(ctx, p)
	r.alter(ctx, p)
	if syncConfigs {
		r.lastConfigSync = start
	}

	var ready []Ready
	for i, res := range p.results[:len(p.ids)] {
		if res.Err == nil {
			r.owned[res.Remote] = true
			ready = append(ready, Ready{Source: res.Source, Remote: res.Remote, ID: p.ids[i], Partitions: res.Partitions})
		}
	}
	if failed := len(p.ids) - len(ready); failed > 0 && ctx.Err() != nil && parent.Err() == nil {
		r.log.Warn("topic reconcile pass ran out of time; topics not done wait for the next pass",
			"timeout", r.timeout, "topics", len(p.ids), "failed", failed)
	}
	gone := r.relist(obs)
	r.apply(ready, gone)
	// Remote topics are deleted after the data plane was told their
	// source topics are gone, so it stops writing to them first.
	r.delete(ctx, p)
	r.remember(obs, p, gone)

	for _, res := range p.results {
		r.report(res)
	}
	if syncConfigs || !r.cfg.SyncConfigs {
		r.forgetProblems(p.results)
	}
	r.mu.Lock()
	r.results = p.results
	r.mu.Unlock()
	return p.results, nil
}

// follow is the pass of a node without the control duty: it changes
// nothing on the target and hands the data plane the selected topics whose
// remote topic is there, with the partitions both sides have (the node
// holding the duty creates and grows them), and the topics gone from the
// source. A topic the duty holder would refuse (decide's verdict, such as
// a foreign remote topic with fewer partitions) is not handed. Its results
// are not kept: problems are the duty holder's.
func (r *Reconciler) follow(ctx context.Context) error {
	obs, err := r.observe(ctx, false)
	if err != nil {
		return err
	}
	p := r.decide(obs)
	r.giveListing(obs, p)
	var ready []Ready
	for i, res := range p.results[:len(p.ids)] {
		remote, there := obs.target[res.Remote]
		if res.Err != nil || !there || remote.Err != nil {
			continue
		}
		ready = append(ready, Ready{Source: res.Source, Remote: res.Remote, ID: p.ids[i], Partitions: min(res.Partitions, remote.Partitions)})
	}
	gone := r.relist(obs)
	r.apply(ready, gone)
	r.mu.Lock()
	r.results = nil
	r.mu.Unlock()
	return nil
}

// giveListing gives Config.Listed the pass's selected source topics.
func (r *Reconciler) giveListing(obs *observed, p *pass) {
	if r.cfg.Listed == nil {
		return
	}
	selected := make([]Ready, 0, len(p.ids))
	for i, res := range p.results[:len(p.ids)] {
		if obs.nameErrs[res.Source] == nil {
			selected = append(selected, Ready{Source: res.Source, Remote: res.Remote, ID: p.ids[i], Partitions: res.Partitions})
		}
	}
	r.cfg.Listed(selected)
}

// relist keeps the pass's listing of selected source topics and returns
// those of the previous listing that are gone from it, sorted.
func (r *Reconciler) relist(obs *observed) []string {
	var gone []string
	for name := range r.listed {
		if !obs.listed[name] {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	r.listed = obs.listed
	return gone
}

// configsDue reports whether the pass starting now syncs configs.
func (r *Reconciler) configsDue(now time.Time) bool {
	return r.cfg.SyncConfigs && (r.lastConfigSync.IsZero() || now.Sub(r.lastConfigSync) >= r.cfg.SyncConfigsInterval)
}

// remember updates what the next passes need to know about deleted source
// topics: topics gone in this pass are watched until their source topic
// comes back or their remote topic is no longer on the target.
func (r *Reconciler) remember(obs *observed, p *pass, gone []string) {
	for _, name := range gone {
		r.vanished[name] = true
	}
	removed := make(map[string]bool)
	for _, res := range p.results[len(p.ids):] {
		if res.Action == RemoteDeleted {
			removed[res.Source] = true
		}
	}
	for name := range r.vanished {
		_, there := obs.target[r.remote(name)]
		if obs.listed[name] || removed[name] || !there {
			delete(r.vanished, name)
		}
	}
}

// report logs a topic's error, its source's deletion and its problems once
// per distinct message.
func (r *Reconciler) report(res Result) {
	msg := string(res.Action)
	if res.Err != nil {
		msg = res.Err.Error()
	}
	switch {
	case r.reported[res.Source] == msg:
	case res.Err != nil && res.Action == SourceDeleted:
		r.log.Error("remote topic of a deleted source topic not deleted", "topic", res.Source, "remote", res.Remote, "err", res.Err)
	case res.Err != nil:
		r.log.Error("topic not replicated", "topic", res.Source, "remote", res.Remote, "err", res.Err)
	case res.Action == SourceDeleted:
		r.log.Warn("source topic deleted; remote topic left on the target (strait.sync.topic.deletion=false)", "topic", res.Source, "remote", res.Remote)
	case res.Action == RemoteDeleted:
		r.log.Info("deleted remote topic, as its source topic was deleted (strait.sync.topic.deletion=true)", "topic", res.Source, "remote", res.Remote)
	}
	if res.Err != nil || res.Action == SourceDeleted || res.Action == RemoteDeleted {
		r.reported[res.Source] = msg
	} else {
		delete(r.reported, res.Source)
	}
	for _, pr := range res.Problems {
		key := pr.Topic + "\x00" + pr.Key
		if r.reportedProblems[key] == pr.Err {
			continue
		}
		r.reportedProblems[key] = pr.Err
		r.log.Warn("remote topic change not applied", "topic", res.Source, "remote", pr.Topic, "key", pr.Key, "err", pr.Err)
	}
}

// forgetProblems drops logged problems that a full pass no longer has, so
// that one coming back is logged again.
func (r *Reconciler) forgetProblems(results []Result) {
	current := make(map[string]bool)
	for _, res := range results {
		for _, pr := range res.Problems {
			current[pr.Topic+"\x00"+pr.Key] = true
		}
	}
	for key := range r.reportedProblems {
		if !current[key] {
			delete(r.reportedProblems, key)
		}
	}
}
