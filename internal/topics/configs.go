package topics

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/policy"
)

// minISR is the one config Strait never lowers on the target: a lower
// min.insync.replicas weakens the target's durability for every producer
// that writes there after a failover.
const minISR = "min.insync.replicas"

// configEntry is one config of a topic as DescribeConfigs gives it.
type configEntry struct {
	Value     *string
	Source    kmsg.ConfigSource
	Sensitive bool
	ReadOnly  bool
}

// topicConfigs are a topic's configs by name.
type topicConfigs map[string]configEntry

// rejection is a config value the target refused for one topic. It is not
// sent again until the source's value changes.
type rejection struct {
	value string
	err   string
}

// replicable filters source topic configs the way MM2 does (spec §4.4,
// §4.6): it drops sensitive, read-only and static-broker values and the
// names config.properties.exclude matches, and keeps source defaults only
// with use.defaults.from=source, where they are set on the target
// explicitly. Values the source inherits from a dynamic broker or cluster
// default are kept, as MM2 keeps them.
func replicable(src topicConfigs, f *policy.ConfigFilter) map[string]string {
	out := make(map[string]string)
	for key, c := range src {
		if c.Sensitive || c.ReadOnly || c.Value == nil || c.Source == kmsg.ConfigSourceStaticBrokerConfig {
			continue
		}
		if c.Source == kmsg.ConfigSourceDefaultConfig && !f.ShouldReplicateSourceDefault() {
			continue
		}
		if !f.ShouldReplicateConfig(key) {
			continue
		}
		out[key] = *c.Value
	}
	return out
}

// createConfigs returns the configs a new remote topic gets: the source's
// replicable configs, less min.insync.replicas when it is below the
// target's default (targetMinISR, or when that could not be read,
// minISRErr) and less values the target rejected before. What it leaves out
// is returned as problems.
func createConfigs(remote string, src topicConfigs, f *policy.ConfigFilter, targetMinISR *string, minISRErr error, rejected map[string]rejection) (map[string]*string, []Problem) {
	want := replicable(src, f)
	out := make(map[string]*string, len(want))
	var problems []Problem
	for _, key := range slices.Sorted(maps.Keys(want)) {
		value := want[key]
		if key == minISR && targetMinISR == nil {
			problems = append(problems, Problem{Topic: remote, Key: key, Err: fmt.Sprintf(
				"source value %s not set at creation: the target's default could not be read (%v), and Strait never risks lowering min.insync.replicas; config sync compares it with the topic's own value later",
				value, minISRErr)})
			continue
		}
		if p, skip := skipped(remote, key, value, targetMinISR, rejected, "default"); skip {
			problems = append(problems, p)
			continue
		}
		out[key] = &value
	}
	return out, problems
}

// diffConfigs returns the changes that bring an existing remote topic's
// configs (dst) in line with its source topic's (src), and the keys it
// leaves alone for a reason, as problems. It only ever SETs a replicable
// source value that differs from the target's current one:
//
//   - Keys the source does not replicate (excluded, sensitive, read-only,
//     static-broker, or a source default with use.defaults.from=target) are
//     never sent. MM2 sends DELETE for a source default, which resets the
//     target to its own default; Strait does not, because the target cannot
//     tell an override MM2 once copied from one an operator set on the target
//     alone, and resetting the latter is the clobbering KIP-894 fixed for
//     legacy AlterConfigs. The cost: a source override removed later stays
//     on the target at its last synced value.
//   - Keys that exist only on the target are never touched.
//   - min.insync.replicas is never lowered below the target's current value.
//   - A value the target rejected before is not sent again until the source
//     value changes.
func diffConfigs(remote string, src, dst topicConfigs, f *policy.ConfigFilter, rejected map[string]rejection) ([]ConfigChange, []Problem) {
	want := replicable(src, f)
	var (
		changes  []ConfigChange
		problems []Problem
	)
	for _, key := range slices.Sorted(maps.Keys(want)) {
		value := want[key]
		have, known := dst[key]
		if known && have.Value != nil && *have.Value == value {
			continue
		}
		if known && have.ReadOnly {
			problems = append(problems, Problem{Topic: remote, Key: key, Err: fmt.Sprintf("source value %q not synced: %s is read-only on the target", value, key)})
			continue
		}
		if p, skip := skipped(remote, key, value, have.Value, rejected, "current value"); skip {
			problems = append(problems, p)
			continue
		}
		changes = append(changes, ConfigChange{Remote: remote, Key: key, Old: have.Value, New: value})
	}
	return changes, problems
}

// skipped says whether key=value is left out of a remote topic, and why: a
// min.insync.replicas below the target's (what names the target value
// compared) or a value the target rejected before.
func skipped(remote, key, value string, targetMinISR *string, rejected map[string]rejection, what string) (Problem, bool) {
	if key == minISR && lowers(value, targetMinISR) {
		return Problem{Topic: remote, Key: key, Err: fmt.Sprintf(
			"source value %s not synced: it is lower than the target's %s %s, and Strait never lowers min.insync.replicas; lower it on the target yourself if you mean to",
			value, what, *targetMinISR)}, true
	}
	if rj, ok := rejected[key]; ok && rj.value == value {
		return Problem{Topic: remote, Key: key, Err: fmt.Sprintf(
			"source value %q not synced: the target rejected it (%s); it is tried again when the source value changes", value, rj.err)}, true
	}
	return Problem{}, false
}

// lowers reports whether min.insync.replicas value is below the target's
// current one. A value that does not parse is left for the target to judge.
func lowers(value string, current *string) bool {
	if current == nil {
		return false
	}
	v, err1 := strconv.Atoi(value)
	c, err2 := strconv.Atoi(*current)
	return err1 == nil && err2 == nil && v < c
}

// describeChunk is the most topics one DescribeConfigs request asks about:
// a topic's configs without synonyms are a few kilobytes, so a request
// answers in a few megabytes at most.
const describeChunk = 1000

// describeConfigs describes the configs of topics (without synonyms, which
// nothing here reads) in requests of at most describeChunk topics. A topic
// the answer fails or leaves out has its own error.
func describeConfigs(ctx context.Context, cl *kgo.Client, topics []string) (map[string]topicConfigs, map[string]error) {
	configs := make(map[string]topicConfigs, len(topics))
	errs := make(map[string]error)
	for chunk := range slices.Chunk(topics, describeChunk) {
		req := kmsg.NewPtrDescribeConfigsRequest()
		for _, t := range chunk {
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, t
			req.Resources = append(req.Resources, rr)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			for _, t := range chunk {
				errs[t] = err
			}
			continue
		}
		for _, rr := range resp.Resources {
			if err := withMessage(rr.ErrorCode, rr.ErrorMessage); err != nil {
				errs[rr.ResourceName] = err
				continue
			}
			tc := make(topicConfigs, len(rr.Configs))
			for _, c := range rr.Configs {
				tc[c.Name] = configEntry{Value: c.Value, Source: c.Source, Sensitive: c.IsSensitive, ReadOnly: c.ReadOnly}
			}
			configs[rr.ResourceName] = tc
		}
		for _, t := range chunk {
			if _, ok := configs[t]; !ok && errs[t] == nil {
				errs[t] = kerr.UnknownTopicOrPartition // as kadm's ResourceConfigs.On
			}
		}
	}
	return configs, errs
}

// withMessage is the error of a response code with the broker's message,
// which often names the exact problem ("Unknown topic config name: x").
func withMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil || msg == nil || *msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, *msg)
}

// targetDefaultMinISR returns the highest min.insync.replicas of the target's
// brokers: the value a new topic gets there. A topic created on any broker's
// default must not get a lower one.
func targetDefaultMinISR(ctx context.Context, cl *kgo.Client) (*string, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Topics = []kmsg.MetadataRequestTopic{} // brokers only; nil would list every topic
	meta, err := mreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, b := range meta.Brokers {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(b.NodeID))
		rr.ConfigNames = []string{minISR}
		req.Resources = append(req.Resources, rr)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var highest *string
	for _, rr := range resp.Resources {
		if err := withMessage(rr.ErrorCode, rr.ErrorMessage); err != nil {
			return nil, fmt.Errorf("broker %s: %w", rr.ResourceName, err)
		}
		for _, c := range rr.Configs {
			if c.Name == minISR && c.Value != nil && (highest == nil || lowers(*highest, c.Value)) {
				highest = c.Value
			}
		}
	}
	if highest == nil {
		return nil, fmt.Errorf("no broker described %s", minISR)
	}
	return highest, nil
}
