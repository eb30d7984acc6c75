// Package dr keeps the disaster-recovery state of flows: a flow that
// strait failover moved its consumers away from copies nothing until
// strait failback returns them. The state lives on the flow's target, the
// cluster that survives when the source is lost, in the compacted topic
// strait-dr.internal, one record per flow keyed by its name ("A->B"); a
// tombstone clears it. Every node running the flow reads it at start and
// follows it, so a failover stops the flow on every node.
package dr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/tail"
)

// Topic is the state topic on a flow's target. The ".internal" suffix
// keeps every MM2-style replicator from copying it.
const Topic = "strait-dr.internal"

// Phases of a flow's state.
const (
	// FailingOver: strait failover --execute began. The flow's nodes stop
	// copying; the failover waits for them before it moves any group.
	FailingOver = "failing-over"
	// FailedOver: the groups were moved to the target. The flow copies
	// nothing until strait failback clears the state.
	FailedOver = "failed-over"
)

// State is one flow's disaster-recovery state.
type State struct {
	Flow  string    `json:"flow"`
	Phase string    `json:"phase"`
	At    time.Time `json:"at"`
	// SourceClusterID and TargetClusterID identify the clusters the flow
	// was failed over between (empty when unknown: the source was gone).
	SourceClusterID string `json:"source_cluster_id,omitempty"`
	TargetClusterID string `json:"target_cluster_id"`
	// Copied is, per source partition, how far the copy reached: the
	// failback's orphans are the source's records from there on.
	Copied []Copied `json:"copied"`
	// Groups are the groups the failover moved.
	Groups []string `json:"groups,omitempty"`
	// Fenced are the source topics the failover fenced with DENY WRITE
	// ACLs; the failback removes them.
	Fenced []string `json:"fenced,omitempty"`
}

// Copied is how far a source partition was copied when the flow stopped.
type Copied struct {
	Topic     string `json:"topic"`
	Remote    string `json:"remote"`
	Partition int32  `json:"partition"`
	// SourceOffset: every source record before it is on the target.
	SourceOffset int64 `json:"source_offset"`
	// TargetOffset is the remote partition's end then.
	TargetOffset int64 `json:"target_offset"`
}

// Stopped reports whether the state keeps the flow from copying.
func (s State) Stopped() bool { return s.Phase == FailingOver || s.Phase == FailedOver }

// Read reads every flow's state from the state topic with cl (a client made
// with tail.ClientOpts, used by nothing else), and the offsets to follow it
// from. A missing topic holds no state.
func Read(ctx context.Context, cl *kgo.Client) (map[string]State, map[int32]int64, error) {
	states := map[string]State{}
	ends, err := tail.ReadToEnd(ctx, cl, Topic, func(r *kgo.Record) { apply(states, r) })
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return states, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the failover state in %s: %w", Topic, err)
	}
	return states, ends, nil
}

// apply applies one state record; records that are not states are
// ignored (no one but Strait writes the topic).
func apply(states map[string]State, r *kgo.Record) {
	if r.Value == nil {
		delete(states, string(r.Key))
		return
	}
	var s State
	if json.Unmarshal(r.Value, &s) == nil && s.Flow == string(r.Key) {
		states[s.Flow] = s
	}
}

// Follow calls fn with each state record of flow written from the offsets
// Read returned on (a cleared state is a State with no Phase), until ctx
// is done.
func Follow(ctx context.Context, cl *kgo.Client, from map[int32]int64, flow string, fn func(State), onErr func(error)) {
	tail.Follow(ctx, cl, Topic, from, func(r *kgo.Record) {
		if string(r.Key) != flow {
			return
		}
		states := map[string]State{}
		apply(states, r)
		fn(states[flow])
	}, onErr)
}

// Write stores a flow's state with cl, a producer that writes partition
// 0 (kgo.ManualPartitioner), and waits for the acknowledgement.
func Write(ctx context.Context, cl *kgo.Client, s State) error {
	v, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: Topic, Partition: 0, Key: []byte(s.Flow), Value: v}).FirstErr(); err != nil {
		return fmt.Errorf("writing the failover state of %s to %s: %w", s.Flow, Topic, err)
	}
	return nil
}

// Clear removes a flow's state, so that it copies again.
func Clear(ctx context.Context, cl *kgo.Client, flow string) error {
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: Topic, Partition: 0, Key: []byte(flow)}).FirstErr(); err != nil {
		return fmt.Errorf("clearing the failover state of %s in %s: %w", flow, Topic, err)
	}
	return nil
}
