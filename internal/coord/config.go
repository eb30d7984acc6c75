package coord

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of Config's timeouts: Kafka Connect's session and rebalance timeouts and
// heartbeat interval.
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultRebalanceTimeout  = 60 * time.Second
	DefaultHeartbeatInterval = 3 * time.Second
)

// Config is one member's settings. Zero timeouts take their defaults.
//
// The callbacks run on the member's goroutine, one at a time, in the order of events
// of the group protocol, and must return promptly (the member sends no JoinGroup or
// SyncGroup while one runs), except Release, which may take up to the rebalance timeout:
// the member keeps heartbeating while it runs.
type Config struct {
	// Group is the group id on the flow's target cluster.
	Group string
	// NodeID names this node for status and logs, such as hostname-pid.
	NodeID string
	// Settings is a digest of the settings every member must share (for a
	// flow: which topics it copies, where and how). The leader reports
	// members whose digest differs from its own.
	Settings string
	// SessionTimeout is how long the broker keeps the member without a heartbeat.
	SessionTimeout time.Duration
	// RebalanceTimeout is how long the broker waits for every member to rejoin in a
	// rebalance; it also bounds Release. It is at least SessionTimeout.
	RebalanceTimeout time.Duration
	// HeartbeatInterval is the time between heartbeats, at most a third of
	// SessionTimeout (the lease needs a heartbeat every two thirds of it).
	HeartbeatInterval time.Duration

	// Work lists every unit of the flow. It is called on the member the broker chose
	// as leader, at each assignment, with a context bounded by half the session timeout.
	// When it fails, the leader assigns only the units the members hold now and asks
	// for another rebalance after a backoff.
	Work func(ctx context.Context) ([]Unit, error)
	// Rates returns the throughput of the units the member owns, in bytes per second,
	// before each JoinGroup (for the leader's balance). Nil, or a unit missing from the
	// map, means unknown.
	Rates func() map[Unit]float64
	// OnAssign is called after every successful SyncGroup with the member's assignment:
	// what it owns in the new generation, and what it held and must give up (Release
	// follows at once with the same lists). Nil means nothing to call.
	OnAssign func(ctx context.Context, a Assignment)
	// Release is called when the member must give up units or the control duty, before
	// it rejoins so that another member can take them: it stops the work on those units,
	// flushes and commits their progress. The member waits for it; ctx ends after the
	// rebalance timeout. When it returns, with or without an error, the member no longer
	// works on those units: an error is logged and kept in the status. Nil means nothing
	// to call.
	Release func(ctx context.Context, units []Unit, control bool) error
	// OnLost is called when the member lost its membership (UNKNOWN_MEMBER_ID,
	// ILLEGAL_GENERATION, FENCED_INSTANCE_ID): everything it owned is lost at once and
	// may already belong to other members; the lease is already off. The member then
	// rejoins as a new member owning nothing. Nil means nothing to call.
	OnLost func()
}

// withDefaults returns c with the zero timeouts set to their defaults: the one place
// defaults are set.
func (c Config) withDefaults() Config {
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.RebalanceTimeout == 0 {
		c.RebalanceTimeout = DefaultRebalanceTimeout
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	return c
}

// Validate returns every problem of c (with its defaults), joined.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Group == "" {
		add("coord: Group is empty")
	}
	if c.Work == nil {
		add("coord: Work is nil: every member may become the leader, which lists the work")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"SessionTimeout", c.SessionTimeout}, {"RebalanceTimeout", c.RebalanceTimeout}, {"HeartbeatInterval", c.HeartbeatInterval}} {
		switch {
		case d.v < time.Millisecond:
			add("coord: %s %v is less than 1ms", d.name, d.v)
		case d.v.Milliseconds() > math.MaxInt32:
			add("coord: %s %v is more than the protocol's %d ms", d.name, d.v, math.MaxInt32)
		}
	}
	if c.RebalanceTimeout < c.SessionTimeout {
		add("coord: RebalanceTimeout %v is shorter than SessionTimeout %v", c.RebalanceTimeout, c.SessionTimeout)
	}
	if c.HeartbeatInterval > c.SessionTimeout/3 {
		add("coord: HeartbeatInterval %v is more than a third of SessionTimeout %v", c.HeartbeatInterval, c.SessionTimeout)
	}
	return errors.Join(errs...)
}
