package topics

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// grow adds the planned partitions to remote topics.
func (r *Reconciler) grow(ctx context.Context, p *pass) {
	for _, g := range p.grows {
		res := &p.results[g.i]
		res.Action, res.Err = r.growTopic(ctx, *res, g.from)
	}
}

// growTopic grows res's remote topic from have to res.Partitions
// partitions. A count the target refuses is that topic's error, unless the
// topic already has the partitions (another node grew it first).
func (r *Reconciler) growTopic(ctx context.Context, res Result, have int32) (Action, error) {
	want := res.Partitions
	resp, err := r.dst.UpdatePartitions(ctx, int(want), res.Remote)
	if err == nil {
		var one kadm.CreatePartitionsResponse
		if one, err = resp.On(res.Remote, nil); err == nil && one.Err != nil {
			err = one.Err
			if one.ErrMessage != "" {
				err = fmt.Errorf("%w: %s", one.Err, one.ErrMessage)
			}
		}
	}
	if errors.Is(err, kerr.InvalidPartitions) {
		if now, derr := listTopics(ctx, r.dstCl, []string{res.Remote}); derr == nil && now[res.Remote].Err == nil && now[res.Remote].Partitions >= want {
			return Unchanged, nil
		}
	}
	if err != nil {
		return Failed, fmt.Errorf("growing remote topic %q from %d to %d partitions: %w; the partitions already there keep replicating", res.Remote, have, want, err)
	}
	r.log.Info("grew remote topic", "topic", res.Source, "remote", res.Remote, "from", have, "to", want)
	return Grown, nil
}

// alterChunk is the most topics one IncrementalAlterConfigs request carries.
const alterChunk = 100

// alter sets the planned config changes with IncrementalAlterConfigs, only
// SET operations (see diffConfigs), in requests of at most alterChunk
// topics. A topic the target refuses as a whole for a config (one key it
// rejects fails every key of the topic) is tried again key by key, so that
// the rest still applies; the keys it rejects are remembered and reported,
// and not sent again until the source value changes.
func (r *Reconciler) alter(ctx context.Context, p *pass) {
	var refused []toAlter
	for chunk := range slices.Chunk(p.alters, alterChunk) {
		answers, rerr := r.incrementalAlter(ctx, chunk)
		for _, a := range chunk {
			res := &p.results[a.i]
			err := rerr
			if err == nil {
				err = answers[res.Remote]
			}
			switch {
			case err == nil:
				r.applied(res, a.changes)
			case rejectsConfig(err) && len(a.changes) > 1:
				refused = append(refused, a)
			case rejectsConfig(err):
				res.Problems = append(res.Problems, r.reject(res.Remote, a.changes[0].Key, a.changes[0].New, err))
			default:
				res.Problems = append(res.Problems, Problem{Topic: res.Remote, Err: fmt.Sprintf("configs not synced: setting %d configs: %v; retried at the next config sync", len(a.changes), err)})
			}
		}
	}
	for _, a := range refused {
		r.alterKeyByKey(ctx, a, &p.results[a.i])
	}
}

// alterKeyByKey sets a's changes one request per key.
func (r *Reconciler) alterKeyByKey(ctx context.Context, a toAlter, res *Result) {
	for _, c := range a.changes {
		answers, err := r.incrementalAlter(ctx, []toAlter{{i: a.i, changes: []ConfigChange{c}}})
		if err == nil {
			err = answers[res.Remote]
		}
		switch {
		case err == nil:
			r.applied(res, []ConfigChange{c})
		case rejectsConfig(err):
			res.Problems = append(res.Problems, r.reject(res.Remote, c.Key, c.New, err))
		default:
			res.Problems = append(res.Problems, Problem{Topic: res.Remote, Key: c.Key, Err: fmt.Sprintf("source value %q not synced: %v; retried at the next config sync", c.New, err)})
		}
	}
}

// incrementalAlter sends one IncrementalAlterConfigs request that SETs the
// changes of alters and returns each topic's answer, with the broker's
// message.
func (r *Reconciler) incrementalAlter(ctx context.Context, alters []toAlter) (map[string]error, error) {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, a := range alters {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, a.changes[0].Remote
		for _, c := range a.changes {
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name, rc.Op, rc.Value = c.Key, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(c.New)
			rr.Configs = append(rr.Configs, rc)
		}
		req.Resources = append(req.Resources, rr)
	}
	resp, err := req.RequestWith(ctx, r.dstCl)
	if err != nil {
		return nil, err
	}
	answers := make(map[string]error, len(resp.Resources))
	for _, rr := range resp.Resources {
		answers[rr.ResourceName] = withMessage(rr.ErrorCode, rr.ErrorMessage)
	}
	for _, a := range alters {
		if _, ok := answers[a.changes[0].Remote]; !ok {
			answers[a.changes[0].Remote] = errors.New("the target's answer left the topic out")
		}
	}
	return answers, nil
}

// applied records config changes the target accepted.
func (r *Reconciler) applied(res *Result, changes []ConfigChange) {
	res.Configs = append(res.Configs, changes...)
	if res.Action == Unchanged {
		res.Action = ConfigsSynced
	}
	keys := make([]string, len(changes))
	for i, c := range changes {
		keys[i] = c.Key
		delete(r.rejected[res.Remote], c.Key)
	}
	r.log.Info("synced remote topic configs", "topic", res.Source, "remote", res.Remote, "keys", keys)
}

// reject remembers that the target refused key=value for remote and returns
// the problem that says so, the same words a later pass's diff uses.
func (r *Reconciler) reject(remote, key, value string, err error) Problem {
	if r.rejected[remote] == nil {
		r.rejected[remote] = make(map[string]rejection)
	}
	rj := rejection{value: value, err: err.Error()}
	r.rejected[remote][key] = rj
	p, _ := skipped(remote, key, value, nil, map[string]rejection{key: rj}, "")
	return p
}

// delete deletes the remote topics of deleted source topics, as planned.
func (r *Reconciler) delete(ctx context.Context, p *pass) {
	for _, i := range p.deletes {
		res := &p.results[i]
		resp, err := r.dst.DeleteTopic(ctx, res.Remote)
		if err == nil && resp.Err != nil {
			err = resp.Err
			if resp.ErrMessage != "" {
				err = fmt.Errorf("%w: %s", resp.Err, resp.ErrMessage)
			}
		}
		if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			res.Err = fmt.Errorf("deleting remote topic %q, whose source topic %q was deleted: %w; retried at the next pass", res.Remote, res.Source, err)
			continue
		}
		res.Action = RemoteDeleted
		delete(r.owned, res.Remote)
		delete(r.rejected, res.Remote)
	}
}
