package topics

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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

// toCreate is a missing remote topic, results[i], to create with configs.
type toCreate struct {
	i       int
	configs map[string]*string
}

// create creates the pass's missing remote topics with the source's
// partition count, the configured replication factor and the source's
// configs as MM2 copies them (spec §4.4), in chunks of one CreateTopics
// request each. Topics the target says exist are matched like any existing
// topic; topics it refuses for a config are created without the keys it
// rejects (createKeyByKey).
func (r *Reconciler) create(ctx context.Context, p *pass) {
	var exist []int
	var refused []toCreate
	todo := p.creates
	for len(todo) > 0 {
		n := chunkLen(todo, p.results)
		e, rf := r.createChunk(ctx, todo[:n], p.results)
		exist, refused = append(exist, e...), append(refused, rf...)
		todo = todo[n:]
	}
	if len(refused) > 0 {
		exist = append(exist, r.createKeyByKey(ctx, refused, p.results)...)
	}
	if len(exist) > 0 {
		// Our listing was stale, or another node created them: match them
		// like any existing topic.
		r.matchExisting(ctx, exist, p.results)
	}
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

// createChunk sends one CreateTopics request for chunk, each topic with its
// own partitions and configs, and sets each topic's result from its own
// answer. It returns the indexes of the topics that already existed, for
// matchExisting, and the topics refused in a way a config can cause, for
// createKeyByKey.
//
// A raw request rather than kadm's CreateTopics, which gives all its topics
// one partition count and one config map: grouping by those would batch only
// topics that are alike, leaving the request count to the data.
func (r *Reconciler) createChunk(ctx context.Context, chunk []toCreate, results []Result) (exist []int, refused []toCreate) {
	answers, rerr := r.createTopics(ctx, chunk, results, false)
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
			r.created(res, t.configs)
		case errors.Is(err, kerr.TopicAlreadyExists):
			exist = append(exist, t.i)
		case rejectsConfig(err) && len(t.configs) > 0:
			res.Action, res.Err = Failed, fmt.Errorf("creating remote topic %q on the target: %w", res.Remote, err)
			refused = append(refused, t)
		default:
			res.Action, res.Err = Failed, createFailed(res.Remote, err)
		}
	}
	return exist, refused
}

// createTopics sends one CreateTopics request (validateOnly: only checked)
// and returns each topic's answer, with the broker's message.
func (r *Reconciler) createTopics(ctx context.Context, todo []toCreate, results []Result, validateOnly bool) (map[string]error, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(createTimeout / time.Millisecond)
	req.ValidateOnly = validateOnly
	for _, t := range todo {
		res := &results[t.i]
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = res.Remote
		rt.NumPartitions = res.Partitions
		rt.ReplicationFactor = int16(r.cfg.ReplicationFactor)
		for _, k := range slices.Sorted(maps.Keys(t.configs)) {
			rc := kmsg.NewCreateTopicsRequestTopicConfig()
			rc.Name, rc.Value = k, t.configs[k]
			rt.Configs = append(rt.Configs, rc)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, r.dstCl)
	if err != nil {
		return nil, err
	}
	answers := make(map[string]error, len(resp.Topics))
	for _, t := range resp.Topics {
		answers[t.Topic] = withMessage(t.ErrorCode, t.ErrorMessage)
	}
	return answers, nil
}

// created records a remote topic created with configs.
func (r *Reconciler) created(res *Result, configs map[string]*string) {
	res.Action, res.Err = Created, nil
	r.log.Info("created remote topic", "topic", res.Source, "remote", res.Remote, "partitions", res.Partitions, "replication_factor", r.cfg.ReplicationFactor, "configs", len(configs))
}

// createFailed is the error of a topic the target did not create.
func createFailed(remote string, err error) error {
	if errors.Is(err, kerr.InvalidReplicationFactor) {
		return fmt.Errorf("creating remote topic %q on the target: %w; set replication.factor to at most the number of target brokers (or -1 for the broker default)", remote, err)
	}
	return fmt.Errorf("creating remote topic %q on the target: %w", remote, err)
}

// rejectsConfig reports whether err is how a broker refuses a config it
// does not accept (an unknown or vendor-only key, a value out of range, a
// policy): for IncrementalAlterConfigs and CreateTopics one such key fails
// the whole topic, so the keys are then tried one by one.
func rejectsConfig(err error) bool {
	return errors.Is(err, kerr.InvalidConfig) || errors.Is(err, kerr.InvalidRequest) ||
		errors.Is(err, kerr.PolicyViolation) || errors.Is(err, kerr.UnknownServerError)
}

// createKeyByKey creates topics the target refused for a config without
// the keys it rejects. It checks each topic without configs (if the target
// refuses that too, a config was not the cause and the topic keeps its
// error), then each key alone, with validate-only CreateTopics requests
// (one per key position, every topic in it), remembers the keys the target
// rejects and creates the topics with the rest. It returns the topics that
// turned out to exist.
func (r *Reconciler) createKeyByKey(ctx context.Context, refused []toCreate, results []Result) (exist []int) {
	bare := make([]toCreate, len(refused))
	for j, t := range refused {
		bare[j] = toCreate{i: t.i}
	}
	answers, err := r.createTopics(ctx, bare, results, true)
	if err != nil {
		return nil // the topics keep the error of their creation
	}
	var todo []toCreate
	for _, t := range refused {
		if answers[results[t.i].Remote] == nil {
			todo = append(todo, toCreate{i: t.i, configs: r.acceptedAtCreation(ctx, t, results)})
		}
	}
	if ctx.Err() != nil || len(todo) == 0 {
		return nil
	}
	for len(todo) > 0 {
		n := chunkLen(todo, results)
		e, still := r.createChunk(ctx, todo[:n], results)
		exist = append(exist, e...)
		for _, t := range still { // refused again: the keys together, not alone
			res := &results[t.i]
			res.Err = fmt.Errorf("%w (each of its configs alone is accepted; check the combination)", res.Err)
		}
		todo = todo[n:]
	}
	return exist
}

// acceptedAtCreation returns t's configs less those the target rejects alone,
// which it remembers and reports as t's problems.
func (r *Reconciler) acceptedAtCreation(ctx context.Context, t toCreate, results []Result) map[string]*string {
	res := &results[t.i]
	accepted := make(map[string]*string, len(t.configs))
	for _, key := range slices.Sorted(maps.Keys(t.configs)) {
		one := []toCreate{{i: t.i, configs: map[string]*string{key: t.configs[key]}}}
		answers, err := r.createTopics(ctx, one, results, true)
		if err == nil {
			err = answers[res.Remote]
		}
		switch {
		case err == nil:
			accepted[key] = t.configs[key]
		case rejectsConfig(err):
			res.Problems = append(res.Problems, r.reject(res.Remote, key, *t.configs[key], err))
		default: // not the key's fault: keep it, the creation will say
			accepted[key] = t.configs[key]
		}
	}
	return accepted
}

// matchExisting matches the partitions of remote topics that turned out to
// exist when created (results at idx). It describes them all in one metadata
// request of its own, since the pass's listing did not have them.
func (r *Reconciler) matchExisting(ctx context.Context, idx []int, results []Result) {
	names := make([]string, len(idx))
	for j, i := range idx {
		names[j] = results[i].Remote
	}
	described, err := listTopics(ctx, r.dstCl, names)
	var progress map[string]bool
	var progressErr error
	progressRead := false
	for _, i := range idx {
		res := &results[i]
		if err != nil {
			res.Action, res.Err = Failed, fmt.Errorf("describing remote topic %q on the target: %w", res.Remote, err)
			continue
		}
		d, ok := described[res.Remote]
		switch {
		case (!ok || d.Err != nil) && r.owned[res.Remote]:
			// This node created it (or handed it on before) and the
			// target's brokers have not applied its records yet: a
			// broker does that after CreateTopics answers, and over
			// thousands of new partitions it took seconds. It stays
			// ready as it was; failing it would stop its partitions
			// until the pass after.
			res.Action, res.Err = Unchanged, nil
			continue
		case !ok || d.Err != nil:
			res.Action, res.Err = Failed, fmt.Errorf("remote topic %q exists on the target but cannot be described yet (%v); retrying", res.Remote, d.Err)
			continue
		}
		res.Action, res.Err = Unchanged, nil
		if d.Partitions >= res.Partitions {
			continue
		}
		if !r.owned[res.Remote] && !progressRead {
			progress, progressErr = r.progressTopics(ctx)
			progressRead = true
		}
		if err := growable(*res, d.Partitions, r.owned[res.Remote] || progress[res.Remote], progressErr); err != nil {
			res.Action, res.Err = Failed, err
			continue
		}
		res.Action, res.Err = r.growTopic(ctx, *res, d.Partitions)
	}
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
