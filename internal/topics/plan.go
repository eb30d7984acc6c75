package topics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/policy"
)

// Plan is what a reconcile would change, computed without changing anything.
type Plan struct {
	// Names maps every source topic the flow replicates to its remote
	// topic, changed or not, so that a rename can be checked before it runs.
	Names    []TopicName     `json:"names,omitempty"`
	Create   []PlannedTopic  `json:"create,omitempty"`
	Grow     []PlannedGrowth `json:"grow,omitempty"`
	Configs  []ConfigChange  `json:"configs,omitempty"`
	Deleted  []DeletedTopic  `json:"deleted,omitempty"`
	Problems []Problem       `json:"problems,omitempty"`
}

// TopicName is a source topic and the name of its remote topic.
type TopicName struct {
	Source string `json:"source"`
	Remote string `json:"remote"`
}

// PlannedTopic is a remote topic a reconcile would create.
type PlannedTopic struct {
	Source     string            `json:"source"`
	Remote     string            `json:"remote"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// PlannedGrowth is a remote topic a reconcile would add partitions to.
type PlannedGrowth struct {
	Remote string `json:"remote"`
	From   int32  `json:"from"`
	To     int32  `json:"to"`
}

// ConfigChange is one config a reconcile sets on an existing remote topic.
type ConfigChange struct {
	Remote string `json:"remote"`
	Key    string `json:"key"`
	// Old is the target's current value, its own override or its
	// default; nil when the target has no value for Key (a key it does
	// not know, such as another vendor's).
	Old *string `json:"old"`
	New string  `json:"new"`
}

// DeletedTopic is a source topic the flow selected that no longer exists
// while its remote topic does.
type DeletedTopic struct {
	Source string `json:"source"`
	Remote string `json:"remote"`
	// Delete is true when the reconcile deletes the remote topic
	// (strait.sync.topic.deletion=true); otherwise it stays.
	Delete bool `json:"delete"`
}

// Problem is something a reconcile cannot apply: a topic it cannot
// replicate, or a config it leaves alone and why.
type Problem struct {
	Topic string `json:"topic"`         // the remote topic
	Key   string `json:"key,omitempty"` // the config, when it is about one
	Err   string `json:"error"`
}

// Empty reports whether no change is pending: nothing to create, grow, set
// or delete. Problems, and deleted source topics whose remote topics stay,
// change nothing.
func (p Plan) Empty() bool {
	for _, d := range p.Deleted {
		if d.Delete {
			return false
		}
	}
	return len(p.Create) == 0 && len(p.Grow) == 0 && len(p.Configs) == 0
}

// Plan reads both clusters and returns what a reconcile would change now,
// configs included when SyncConfigs is on, and changes nothing. It may be
// called while Run runs; it waits for a pass in progress. Deleted source
// topics are found by the remote topics' names (A.orders on the target,
// orders selected but not on the source) and, on a Reconciler that has
// run, by the topics it saw disappear, which is the only way with a policy
// whose names do not say their source (identity).
func (r *Reconciler) Plan(parent context.Context) (Plan, error) {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	obs, err := r.observe(ctx, r.cfg.SyncConfigs)
	if err != nil {
		return Plan{}, err
	}
	return r.decide(obs).plan, nil
}

// observed is what one pass reads from both clusters before it decides
// anything.
type observed struct {
	syncConfigs bool
	source      map[string]topicInfo // every source topic
	selected    []string             // source topics the flow replicates that described, sorted
	listed      map[string]bool      // every source topic the flow replicates, described or not
	target      map[string]topicInfo // every topic on the target
	// remote holds the remote topic name of every selected topic,
	// formatted once per pass (policy.RemoteNames). nameErrs holds those
	// whose name cannot be used: not a valid topic name, or the name of
	// another selected topic's remote topic too (strait.rename.rules).
	// They are neither created nor copied.
	remote   map[string]string
	nameErrs map[string]error

	// Configs by source and by remote topic name: the source's for
	// remote topics to create and, with syncConfigs, for all; the
	// target's with syncConfigs.
	srcConfigs, dstConfigs       map[string]topicConfigs
	srcConfigErrs, dstConfigErrs map[string]error

	// minISR is the target's default min.insync.replicas, read only when
	// a topic to create would get one.
	minISR    *string
	minISRErr error

	// progress holds the remote topics with progress in the flow's group,
	// read only when a remote topic not known to be Strait's needs growing.
	progress    map[string]bool
	progressErr error
}

// topicInfo is a topic as a metadata request describes it.
type topicInfo struct {
	ID         [16]byte
	Partitions int32
	Err        error
}

// Selects reports whether the flow replicates source topic name, by its
// config (topics, topics.exclude, the policy, heartbeats).
func (r *Reconciler) Selects(name string) bool {
	return policy.ShouldReplicateTopic(r.cfg.Policy, r.cfg.Topics, r.cfg.HeartbeatsReplication, r.cfg.Target, name)
}

// observe reads what the pass decides from: both clusters' topics and the
// configs, broker default and ownership the decisions need.
func (r *Reconciler) observe(ctx context.Context, syncConfigs bool) (*observed, error) {
	obs := &observed{syncConfigs: syncConfigs, listed: make(map[string]bool)}
	var err error
	if obs.source, err = listTopics(ctx, r.srcCl, nil); err != nil {
		return nil, fmt.Errorf("listing topics on the source: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(obs.source)) {
		if !r.Selects(name) {
			continue
		}
		obs.listed[name] = true // even when it failed to describe: it is not gone
		if obs.source[name].Err == nil {
			obs.selected = append(obs.selected, name)
		}
	}
	if obs.target, err = listTopics(ctx, r.dstCl, nil); err != nil {
		return nil, fmt.Errorf("listing topics on the target: %w", err)
	}

	names, errs := policy.RemoteNames(r.cfg.Policy, r.cfg.Source, obs.selected)
	obs.remote, obs.nameErrs = make(map[string]string, len(names)), map[string]error{}
	for i, name := range obs.selected {
		obs.remote[name] = names[i]
		if errs[i] != nil {
			obs.nameErrs[name] = errs[i]
		}
	}
	var missing, existing []string // source names
	for _, name := range obs.selected {
		if obs.nameErrs[name] != nil {
			continue
		}
		remote, ok := obs.target[obs.remote[name]]
		switch {
		case !ok || errors.Is(remote.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, name)
		case remote.Err == nil:
			existing = append(existing, name)
		}
	}
	describe := missing
	if syncConfigs {
		describe = append(slices.Clone(missing), existing...)
		remotes := make([]string, len(existing))
		for i, name := range existing {
			remotes[i] = obs.remote[name]
		}
		obs.dstConfigs, obs.dstConfigErrs = describeConfigs(ctx, r.dstCl, remotes)
	}
	obs.srcConfigs, obs.srcConfigErrs = describeConfigs(ctx, r.srcCl, describe)
	if r.editSourceConfigs != nil {
		for name, c := range obs.srcConfigs {
			r.editSourceConfigs(name, c)
		}
	}

	for _, name := range missing {
		if _, ok := replicable(obs.srcConfigs[name], r.cfg.Configs)[minISR]; ok {
			obs.minISR, obs.minISRErr = targetDefaultMinISR(ctx, r.dstCl)
			break
		}
	}
	for _, name := range existing {
		remote := obs.remote[name]
		if obs.target[remote].Partitions < obs.source[name].Partitions && !r.owned[remote] {
			obs.progress, obs.progressErr = r.progressTopics(ctx)
			break
		}
	}
	return obs, nil
}

// remote is the name of source topic name's remote topic.
func (r *Reconciler) remote(name string) string {
	return r.cfg.Policy.FormatRemoteTopic(r.cfg.Source, name)
}

// listTopics describes topics, or every topic but Kafka's internal ones
// when names is nil, in a metadata request of its own: kadm's listing may
// answer from the client's metadata cache, which can predate a topic
// created or deleted since.
func listTopics(ctx context.Context, cl *kgo.Client, names []string) (map[string]topicInfo, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]topicInfo, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil || t.IsInternal {
			continue
		}
		out[*t.Topic] = topicInfo{ID: t.TopicID, Partitions: int32(len(t.Partitions)), Err: kerr.ErrorForCode(t.ErrorCode)}
	}
	return out, nil
}

// progressTopics returns the remote topics with progress stored in the
// flow's group: Strait created them, so Strait may grow them.
func (r *Reconciler) progressTopics(ctx context.Context) (map[string]bool, error) {
	resps, err := r.dst.FetchOffsets(ctx, r.cfg.Group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool)
	for _, ps := range resps {
		for _, o := range ps {
			if o.Err == nil && o.At >= 0 {
				out[o.Topic] = true
			}
		}
	}
	return out, nil
}

// pass is one reconcile's decisions and, once applied, their outcome.
type pass struct {
	results []Result   // one per selected source topic (ids[i] its ID), then one per deleted source topic
	ids     [][16]byte // source topic IDs of the selected topics
	creates []toCreate
	grows   []toGrow
	alters  []toAlter
	deletes []int // indexes of results whose remote topic is deleted
	plan    Plan
}

// toGrow is a remote topic, results[i], with from partitions to grow.
type toGrow struct {
	i    int
	from int32
}

// toAlter is a remote topic, results[i], with configs to set.
type toAlter struct {
	i       int
	changes []ConfigChange
}

// decide turns what a pass observed into what it will do, with the Plan
// that says so. It reads but never changes the Reconciler's state.
func (r *Reconciler) decide(obs *observed) *pass {
	p := &pass{}
	for _, name := range obs.selected {
		src := obs.source[name]
		i := len(p.results)
		p.results = append(p.results, Result{Source: name, Remote: obs.remote[name], Partitions: src.Partitions, Action: Unchanged})
		p.ids = append(p.ids, src.ID)
		res := &p.results[i]
		remote, ok := obs.target[res.Remote]
		switch {
		case obs.nameErrs[name] != nil:
			res.Action, res.Err = Failed, obs.nameErrs[name]
		case !ok || errors.Is(remote.Err, kerr.UnknownTopicOrPartition):
			r.planCreate(obs, p, i)
		case remote.Err != nil:
			res.Action, res.Err = Failed, fmt.Errorf("describing remote topic %q on the target: %w", res.Remote, remote.Err)
		default:
			r.planExisting(obs, p, i, remote.Partitions)
		}
	}
	r.planDeleted(obs, p)
	for _, name := range obs.selected {
		p.plan.Names = append(p.plan.Names, TopicName{Source: name, Remote: obs.remote[name]})
	}
	p.plan.Problems = problemsOf(p.results)
	p.plan.sort()
	return p
}

// planCreate plans the creation of results[i]'s remote topic.
func (r *Reconciler) planCreate(obs *observed, p *pass, i int) {
	res := &p.results[i]
	src, err := configsOf(obs.srcConfigs, obs.srcConfigErrs, res.Source)
	if err != nil {
		res.Action, res.Err = Failed, fmt.Errorf("describing configs of source topic %q: %w", res.Source, err)
		return
	}
	configs, problems := createConfigs(res.Remote, src, r.cfg.Configs, obs.minISR, obs.minISRErr, r.rejected[res.Remote])
	res.Problems = problems
	p.creates = append(p.creates, toCreate{i: i, configs: configs})
	planned := PlannedTopic{Source: res.Source, Remote: res.Remote, Partitions: res.Partitions}
	if len(configs) > 0 {
		planned.Configs = make(map[string]string, len(configs))
		for k, v := range configs {
			planned.Configs[k] = *v
		}
	}
	p.plan.Create = append(p.plan.Create, planned)
}

// planExisting plans what results[i]'s existing remote topic, with have
// partitions, needs: growing, and configs when the pass syncs them.
func (r *Reconciler) planExisting(obs *observed, p *pass, i int, have int32) {
	res := &p.results[i]
	if have < res.Partitions {
		owned := r.owned[res.Remote] || obs.progress[res.Remote]
		if err := growable(*res, have, owned, obs.progressErr); err != nil {
			res.Action, res.Err = Failed, err
			return
		}
		p.grows = append(p.grows, toGrow{i: i, from: have})
		p.plan.Grow = append(p.plan.Grow, PlannedGrowth{Remote: res.Remote, From: have, To: res.Partitions})
	}
	if obs.syncConfigs {
		r.planConfigs(obs, p, i)
	}
}

// growable says whether a remote topic with fewer partitions than its source
// topic may be grown: only when Strait owns it. A foreign topic is an
// error, since records of the missing partitions have nowhere to go and
// Strait does not alter topics it does not own.
func growable(res Result, have int32, owned bool, ownedErr error) error {
	switch {
	case owned:
		return nil
	case ownedErr != nil:
		return fmt.Errorf("remote topic %q has %d partitions but source topic %q has %d, and checking whether Strait owns it failed: %w", res.Remote, have, res.Source, res.Partitions, ownedErr)
	default:
		return fmt.Errorf("remote topic %q already exists on the target with %d partitions but source topic %q has %d: Strait copies each partition to the same partition number and does not alter topics it did not create; increase its partitions (kafka-topics.sh --alter --topic %s --partitions %d) or delete it",
			res.Remote, have, res.Source, res.Partitions, res.Remote, res.Partitions)
	}
}

// planConfigs plans the config changes of results[i]'s remote topic.
func (r *Reconciler) planConfigs(obs *observed, p *pass, i int) {
	res := &p.results[i]
	src, err := configsOf(obs.srcConfigs, obs.srcConfigErrs, res.Source)
	if err != nil {
		res.Problems = append(res.Problems, Problem{Topic: res.Remote, Err: fmt.Sprintf("configs not synced: describing configs of source topic %q: %v", res.Source, err)})
		return
	}
	dst, err := configsOf(obs.dstConfigs, obs.dstConfigErrs, res.Remote)
	if err != nil {
		res.Problems = append(res.Problems, Problem{Topic: res.Remote, Err: fmt.Sprintf("configs not synced: describing configs of remote topic %q on the target: %v", res.Remote, err)})
		return
	}
	changes, problems := diffConfigs(res.Remote, src, dst, r.cfg.Configs, r.rejected[res.Remote])
	res.Problems = append(res.Problems, problems...)
	if len(changes) > 0 {
		p.alters = append(p.alters, toAlter{i: i, changes: changes})
		p.plan.Configs = append(p.plan.Configs, changes...)
	}
}

// configsOf returns topic's described configs or why there are none.
func configsOf(configs map[string]topicConfigs, errs map[string]error, topic string) (topicConfigs, error) {
	if err := errs[topic]; err != nil {
		return nil, err
	}
	c, ok := configs[topic]
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	return c, nil
}

// planDeleted plans what happens to the remote topics of deleted source
// topics: a result each, and their deletion when the flag asks for it.
// When the source lists none of the flow's topics at all, nothing is
// deleted: that looks more like a listing cut short (the source's ACLs, a
// wrong principal) than like every topic deleted at once.
func (r *Reconciler) planDeleted(obs *observed, p *pass) {
	for _, d := range r.deletedSources(obs) {
		i := len(p.results)
		p.results = append(p.results, Result{Source: d.Source, Remote: d.Remote, Partitions: obs.target[d.Remote].Partitions, Action: SourceDeleted})
		if r.cfg.DeleteRemoteOnSourceDeletion {
			if len(obs.listed) == 0 {
				p.results[i].Problems = []Problem{{Topic: d.Remote, Err: "not deleted: the source lists none of the topics this flow selects, which looks like a listing cut short (ACLs, another principal) rather than every topic deleted; delete the remote topic by hand if its source topic is really gone"}}
			} else {
				d.Delete = true
				p.deletes = append(p.deletes, i)
			}
		}
		p.plan.Deleted = append(p.plan.Deleted, d)
	}
}

// deletedSources returns the source topics the flow selects that are gone
// from the source while their remote topic is on the target: those whose
// remote name this flow's policy made (A.orders, for orders), and those this
// process saw disappear.
func (r *Reconciler) deletedSources(obs *observed) []DeletedTopic {
	remotes := make(map[string]string) // by source topic
	for remote := range obs.target {
		if src, ok := r.upstreamOf(remote); ok && !obs.listed[src] {
			remotes[src] = remote
		}
	}
	for _, seen := range []map[string]bool{r.vanished, r.listed} {
		for src := range seen {
			remote := r.remote(src)
			if _, there := obs.target[remote]; there && !obs.listed[src] {
				remotes[src] = remote
			}
		}
	}
	out := make([]DeletedTopic, 0, len(remotes))
	for _, src := range slices.Sorted(maps.Keys(remotes)) {
		out = append(out, DeletedTopic{Source: src, Remote: remotes[src]})
	}
	return out
}

// upstreamOf returns the source topic whose remote topic is named remote,
// when this flow's policy made that name from a topic the flow selects. A
// policy that keeps names (identity) names no remote topic this way: its
// remote topics cannot be told from the target's own.
func (r *Reconciler) upstreamOf(remote string) (string, bool) {
	alias, ok := r.cfg.Policy.TopicSource(remote)
	if !ok || alias != r.cfg.Source {
		return "", false
	}
	up, ok := r.cfg.Policy.UpstreamTopic(remote)
	if !ok || up == remote || r.remote(up) != remote {
		return "", false
	}
	if !policy.ShouldReplicateTopic(r.cfg.Policy, r.cfg.Topics, r.cfg.HeartbeatsReplication, r.cfg.Target, up) {
		return "", false
	}
	return up, true
}

// problemsOf collects the problems of results: topics that failed and what
// was left out of the others.
func problemsOf(results []Result) []Problem {
	var out []Problem
	for _, res := range results {
		if res.Err != nil {
			out = append(out, Problem{Topic: res.Remote, Err: res.Err.Error()})
		}
		out = append(out, res.Problems...)
	}
	return out
}

// sort orders the plan by remote topic (and key), so that two plans of the
// same state are equal.
func (p *Plan) sort() {
	slices.SortFunc(p.Create, func(a, b PlannedTopic) int { return cmp.Compare(a.Remote, b.Remote) })
	slices.SortFunc(p.Grow, func(a, b PlannedGrowth) int { return cmp.Compare(a.Remote, b.Remote) })
	slices.SortFunc(p.Configs, func(a, b ConfigChange) int {
		return cmp.Or(cmp.Compare(a.Remote, b.Remote), cmp.Compare(a.Key, b.Key))
	})
	slices.SortFunc(p.Deleted, func(a, b DeletedTopic) int { return cmp.Compare(a.Remote, b.Remote) })
	slices.SortFunc(p.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Err, b.Err))
	})
}
