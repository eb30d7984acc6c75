// Package topics is the control plane of one flow for topics: it discovers
// the source topics the flow replicates, creates their remote topics on the
// target with the source's partition count and filtered configs, grows
// partitions, and hands the topics that are ready to the data plane.
//
// One bad topic never blocks the others: every reconcile returns a result
// per topic.
package topics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

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
	Unchanged Action = "unchanged"
	Created   Action = "created"
	Grown     Action = "grown"
	Failed    Action = "failed"
)

// Result is the outcome for one source topic.
type Result struct {
	Source     string
	Remote     string
	Partitions int32
	Action     Action
	Err        error
}

// passTimeout bounds one reconcile pass. A pass that runs out of time says so
// and leaves the topics it did not finish to the next pass.
const passTimeout = time.Minute

// Requests that create topics are cut into chunks of at most createChunkTopics
// topics and createChunkRecords metadata records, a topic counting one record
// for itself, one per partition and one per config, as the KRaft controller
// counts them. 2,000 topics then take 20 round trips instead of 2,000, and a
// request that fails as a whole (a timeout, a controller failover) costs at
// most 100 topics, which the next pass retries. The controller refuses a
// request of more than 10,000 partitions ("Excessively large number of
// partitions per request", KAFKA-17870) or, before Kafka 3.9, of more than
// 10,000 records; half of that leaves room for configs counted differently
// across versions. A request of 100 topics with their configs is some tens of
// kilobytes, far below any request size limit. A topic larger than the record
// budget goes alone, as every topic did before batching.
const (
	createChunkTopics  = 100
	createChunkRecords = 5000
)

// createTimeout is how long the target waits for the topics of one request
// to be created before it answers REQUEST_TIMED_OUT, kadm's default.
const createTimeout = 15 * time.Second

// Reconciler keeps the remote topics of one flow in line with the source.
type Reconciler struct {
	cfg   Config
	src   *kadm.Client
	dst   *kadm.Client
	dstCl *kgo.Client // for requests kadm cannot shape: CreateTopics with configs per topic, uncached metadata
	apply func(ready []Ready, gone []string)
	log   *slog.Logger
	// timeout bounds one pass: passTimeout but in tests.
	timeout time.Duration

	// listed holds the selected source topics of the last listing, to
	// notice topics deleted on the source.
	listed map[string]bool

	// owned remembers remote topics this process created or saw with the
	// source's partition count: those are grown when the source grows.
	owned map[string]bool
	// reported avoids logging the same topic error every interval.
	reported map[string]string

	mu      sync.Mutex
	results []Result
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
		cfg: cfg, src: kadm.NewClient(src), dst: kadm.NewClient(dst), dstCl: dst, apply: apply,
		log:      log.With("component", "topics", "flow", cfg.Flow),
		timeout:  passTimeout,
		owned:    make(map[string]bool),
		reported: make(map[string]string),
	}
}

// Run reconciles at once and then every Interval until ctx is done.
func (r *Reconciler) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("topic reconcile failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
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
// and an error only when the clusters could not be listed at all.
func (r *Reconciler) Reconcile(parent context.Context) ([]Result, error) {
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	srcTopics, err := r.src.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing topics on the source: %w", err)
	}
	var selected []kadm.TopicDetail
	listed := make(map[string]bool)
	for _, name := range srcTopics.Names() {
		d := srcTopics[name]
		if !policy.ShouldReplicateTopic(r.cfg.Policy, r.cfg.Topics, r.cfg.HeartbeatsReplication, r.cfg.Target, name) {
			continue
		}
		listed[name] = true // even when it failed to describe: it is not gone
		if d.Err == nil {
			selected = append(selected, d)
		}
	}
	remoteNames := make([]string, len(selected))
	for i, d := range selected {
		remoteNames[i] = r.cfg.Policy.FormatRemoteTopic(r.cfg.Source, d.Topic)
	}
	var dstTopics kadm.TopicDetails
	if len(remoteNames) > 0 {
		if dstTopics, err = r.dst.ListTopics(ctx, remoteNames...); err != nil {
			return nil, fmt.Errorf("listing topics on the target: %w", err)
		}
	}

	results := make([]Result, len(selected))
	var missing []int
	for i, d := range selected {
		res := Result{Source: d.Topic, Remote: remoteNames[i], Partitions: int32(len(d.Partitions))}
		remote, ok := dstTopics[res.Remote]
		if !ok || errors.Is(remote.Err, kerr.UnknownTopicOrPartition) {
			missing = append(missing, i)
		} else if remote.Err != nil {
			res.Action, res.Err = Failed, fmt.Errorf("describing remote topic %q on the target: %w", res.Remote, remote.Err)
		} else {
			res.Action, res.Err = r.matchPartitions(ctx, res, int32(len(remote.Partitions)))
		}
		results[i] = res
	}
	if len(missing) > 0 {
		r.createMissing(ctx, selected, missing, results)
	}

	var ready []Ready
	for i, res := range results {
		if res.Err == nil {
			ready = append(ready, Ready{Source: res.Source, Remote: res.Remote, ID: selected[i].ID, Partitions: res.Partitions})
		}
		r.report(res)
	}
	if failed := len(results) - len(ready); failed > 0 && ctx.Err() != nil && parent.Err() == nil {
		r.log.Warn("topic reconcile pass ran out of time; topics not done wait for the next pass",
			"timeout", r.timeout, "topics", len(results), "failed", failed)
	}
	var gone []string
	for name := range r.listed {
		if !listed[name] {
			gone = append(gone, name)
		}
	}
	r.listed = listed
	r.apply(ready, gone)
	r.mu.Lock()
	r.results = results
	r.mu.Unlock()
	return results, nil
}

// matchPartitions handles a remote topic that exists: grow it when it is
// Strait's and the source has more partitions; a foreign topic with fewer
// partitions is an error, since records of the missing partitions have
// nowhere to go and Strait does not alter topics it does not own.
func (r *Reconciler) matchPartitions(ctx context.Context, res Result, have int32) (Action, error) {
	want := res.Partitions
	if have >= want {
		r.owned[res.Remote] = true
		return Unchanged, nil
	}
	if !r.owned[res.Remote] {
		owned, err := r.hasProgress(ctx, res.Remote)
		if err != nil {
			return Failed, fmt.Errorf("remote topic %q has %d partitions but source topic %q has %d, and checking whether Strait owns it failed: %w", res.Remote, have, res.Source, want, err)
		}
		if !owned {
			return Failed, fmt.Errorf("remote topic %q already exists on the target with %d partitions but source topic %q has %d: Strait copies each partition to the same partition number and does not alter topics it did not create; increase its partitions (kafka-topics.sh --alter --topic %s --partitions %d) or delete it",
				res.Remote, have, res.Source, want, res.Remote, want)
		}
		r.owned[res.Remote] = true
	}
	resp, err := r.dst.UpdatePartitions(ctx, int(want), res.Remote)
	if err == nil {
		var one kadm.CreatePartitionsResponse
		if one, err = resp.On(res.Remote, nil); err == nil {
			err = one.Err
		}
	}
	if err != nil && !errors.Is(err, kerr.InvalidPartitions) {
		return Failed, fmt.Errorf("growing remote topic %q from %d to %d partitions: %w", res.Remote, have, want, err)
	}
	r.log.Info("grew remote topic", "topic", res.Source, "remote", res.Remote, "from", have, "to", want)
	return Grown, nil
}

// matchExisting matches the partitions of remote topics that turned out to
// exist when created (results at idx). It describes them all in one metadata
// request that bypasses the client's metadata cache: the cache still holds
// the listing at the start of the pass, in which they did not exist.
func (r *Reconciler) matchExisting(ctx context.Context, idx []int, results []Result) {
	req := kmsg.NewPtrMetadataRequest()
	for _, i := range idx {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(results[i].Remote)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, r.dstCl)
	described := make(map[string]*kmsg.MetadataResponseTopic)
	if err == nil {
		for j := range resp.Topics {
			if t := &resp.Topics[j]; t.Topic != nil {
				described[*t.Topic] = t
			}
		}
	}
	for _, i := range idx {
		res := &results[i]
		if err != nil {
			res.Action, res.Err = Failed, fmt.Errorf("describing remote topic %q on the target: %w", res.Remote, err)
			continue
		}
		var derr error
		d, ok := described[res.Remote]
		if ok {
			derr = kerr.ErrorForCode(d.ErrorCode)
		}
		if !ok || derr != nil {
			res.Action, res.Err = Failed, fmt.Errorf("remote topic %q exists on the target but cannot be described yet (%v); retrying", res.Remote, derr)
			continue
		}
		res.Action, res.Err = r.matchPartitions(ctx, *res, int32(len(d.Partitions)))
	}
}

func (r *Reconciler) hasProgress(ctx context.Context, remote string) (bool, error) {
	resps, err := r.dst.FetchOffsets(ctx, r.cfg.Group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	owned := false
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == remote && o.Err == nil && o.At >= 0 {
			owned = true
		}
	})
	return owned, nil
}

// createMissing creates remote topics with the source's partition count,
// the configured replication factor and the source's configs as MM2 copies
// them (spec §4.4). It describes the configs of all missing topics in one
// request and creates the topics in chunks, one CreateTopics request each.
func (r *Reconciler) createMissing(ctx context.Context, selected []kadm.TopicDetail, missing []int, results []Result) {
	names := make([]string, len(missing))
	for j, i := range missing {
		names[j] = selected[i].Topic
	}
	configs, cerr := r.src.DescribeTopicConfigs(ctx, names...)
	described := make(map[string]kadm.ResourceConfig, len(configs))
	for _, rc := range configs {
		described[rc.Name] = rc
	}
	var todo []toCreate
	for _, i := range missing {
		res := &results[i]
		if cerr != nil {
			res.Action, res.Err = Failed, fmt.Errorf("describing configs of source topic %q: %w", res.Source, cerr)
			continue
		}
		rc, ok := described[res.Source]
		err := rc.Err
		if !ok {
			err = kerr.UnknownTopicOrPartition // as kadm's ResourceConfigs.On
		}
		if err != nil {
			res.Action, res.Err = Failed, fmt.Errorf("describing configs of source topic %q: %w", res.Source, err)
			continue
		}
		todo = append(todo, toCreate{i: i, configs: r.targetConfigs(rc.Configs)})
	}
	var exist []int
	for len(todo) > 0 {
		n := chunkLen(todo, results)
		exist = append(exist, r.create(ctx, todo[:n], results)...)
		todo = todo[n:]
	}
	if len(exist) > 0 {
		// Our metadata was stale, or another node created them: match them
		// like any existing topic.
		r.matchExisting(ctx, exist, results)
	}
}

// toCreate is a missing remote topic, results[i], to create with configs.
type toCreate struct {
	i       int
	configs map[string]*string
}

// chunkLen returns how many topics at the head of todo go in one request:
// at least one, and within createChunkTopics and createChunkRecords.
func chunkLen(todo []toCreate, results []Result) int {
	records := 0
	for n, t := range todo {
		records += 1 + int(results[t.i].Partitions) + len(t.configs)
		if n == createChunkTopics || (n > 0 && records > createChunkRecords) {
			return n
		}
	}
	return len(todo)
}

// create sends one CreateTopics request for chunk, each topic with its own
// partitions and configs, and sets each topic's result from its own answer.
// It returns the indexes of the topics that already existed, for
// matchExisting.
//
// A raw request rather than kadm's CreateTopics, which gives all its topics
// one partition count and one config map: grouping by those would batch only
// topics that are alike, leaving the request count to the data.
func (r *Reconciler) create(ctx context.Context, chunk []toCreate, results []Result) (exist []int) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(createTimeout / time.Millisecond)
	for _, t := range chunk {
		res := &results[t.i]
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = res.Remote
		rt.NumPartitions = res.Partitions
		rt.ReplicationFactor = int16(r.cfg.ReplicationFactor)
		for k, v := range t.configs {
			rc := kmsg.NewCreateTopicsRequestTopicConfig()
			rc.Name, rc.Value = k, v
			rt.Configs = append(rt.Configs, rc)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, rerr := req.RequestWith(ctx, r.dstCl)
	answers := make(map[string]error)
	if rerr == nil {
		for _, t := range resp.Topics {
			answers[t.Topic] = kerr.ErrorForCode(t.ErrorCode)
		}
	}
	for _, t := range chunk {
		res := &results[t.i]
		err, ok := answers[res.Remote]
		switch {
		case rerr != nil:
			err = rerr
		case !ok:
			err = errors.New("the target's answer left the topic out")
		}
		switch {
		case err == nil:
			r.owned[res.Remote] = true
			res.Action = Created
			r.log.Info("created remote topic", "topic", res.Source, "remote", res.Remote, "partitions", res.Partitions, "replication_factor", r.cfg.ReplicationFactor, "configs", len(t.configs))
		case errors.Is(err, kerr.TopicAlreadyExists):
			exist = append(exist, t.i)
		case errors.Is(err, kerr.InvalidReplicationFactor):
			res.Action, res.Err = Failed, fmt.Errorf("creating remote topic %q on the target: %w; set replication.factor to at most the number of target brokers (or -1 for the broker default)", res.Remote, err)
		default:
			res.Action, res.Err = Failed, fmt.Errorf("creating remote topic %q on the target: %w", res.Remote, err)
		}
	}
	return exist
}

// targetConfigs filters source topic configs the way MM2 does on creation:
// drop sensitive and static-broker values and excluded names; keep defaults
// only with use.defaults.from=source.
func (r *Reconciler) targetConfigs(src []kadm.Config) map[string]*string {
	out := make(map[string]*string)
	for _, c := range src {
		if c.Sensitive || c.Value == nil || c.Source == kmsg.ConfigSourceStaticBrokerConfig {
			continue
		}
		if c.Source == kmsg.ConfigSourceDefaultConfig && !r.cfg.Configs.ShouldReplicateSourceDefault() {
			continue
		}
		if !r.cfg.Configs.ShouldReplicateConfig(c.Key) {
			continue
		}
		out[c.Key] = c.Value
	}
	return out
}

// report logs a topic's error once per distinct message.
func (r *Reconciler) report(res Result) {
	if res.Err == nil {
		delete(r.reported, res.Source)
		return
	}
	msg := res.Err.Error()
	if r.reported[res.Source] == msg {
		return
	}
	r.reported[res.Source] = msg
	r.log.Error("topic not replicated", "topic", res.Source, "remote", res.Remote, "err", res.Err)
}

// EnsureCompacted creates a one-partition compacted topic for internal
// records unless it exists, as MM2 does for its internal topics: an existing
// topic is left untouched, and authorization errors are tolerated (the
// topic may exist or be created by an operator).
func EnsureCompacted(ctx context.Context, adm *kadm.Client, name string, replicationFactor int) error {
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, int16(replicationFactor), map[string]*string{"cleanup.policy": &compact}, name)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil, errors.Is(err, kerr.TopicAlreadyExists), errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return nil
	case errors.Is(err, kerr.InvalidReplicationFactor):
		return fmt.Errorf("creating internal topic %q: %w; lower its replication factor setting to at most the number of brokers", name, err)
	default:
		return fmt.Errorf("creating internal topic %q: %w", name, err)
	}
}
