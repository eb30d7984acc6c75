// Package heartbeat emits MM2 heartbeat records: the pair S->T writes
// (S, T, now) into the `heartbeats` topic of T every interval, as MM2's
// MirrorHeartbeatConnector does. Replicating those topics onward
// (`S.heartbeats` on the next cluster) is what lets RemoteClusterUtils find
// upstream clusters and count replication hops.
package heartbeat

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/wire"
)

// Config is one emitter's settings.
type Config struct {
	Source, Target string        // aliases
	Topic          string        // the heartbeats topic on the target, "heartbeats"
	Interval       time.Duration // emit.heartbeats.interval.seconds
}

// Emitter writes heartbeats with a producer on the target cluster.
type Emitter struct {
	cfg Config
	cl  *kgo.Client
	log *slog.Logger
	now func() time.Time
}

// New returns an Emitter; it starts nothing.
func New(cfg Config, cl *kgo.Client, log *slog.Logger) *Emitter {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	return &Emitter{cfg: cfg, cl: cl, log: log.With("component", "heartbeat", "flow", cfg.Source+"->"+cfg.Target), now: time.Now}
}

// Run emits a heartbeat at once and then every Interval until ctx is done.
// A failed write is logged and retried at the next tick: heartbeats are
// signals, not data.
func (e *Emitter) Run(ctx context.Context) error {
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	failing := false
	for {
		err := e.emit(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			e.log.Warn("writing heartbeats failed; retrying every interval", "topic", e.cfg.Topic, "err", err)
			failing = true
		case err == nil && failing:
			e.log.Info("writing heartbeats again", "topic", e.cfg.Topic)
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (e *Emitter) emit(ctx context.Context) error {
	now := e.now()
	hb := wire.Heartbeat{SourceAlias: e.cfg.Source, TargetAlias: e.cfg.Target, Timestamp: now.UnixMilli()}
	key, err := hb.AppendKey(nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, max(e.cfg.Interval, 10*time.Second))
	defer cancel()
	r := &kgo.Record{Topic: e.cfg.Topic, Partition: 0, Key: key, Value: hb.AppendValue(nil), Timestamp: now}
	if err := e.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("writing a heartbeat to %s on %s: %w", e.cfg.Topic, e.cfg.Target, err)
	}
	return nil
}
