package kafkaclient

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
)

// Plan is the mapped client settings of every flow a node runs, built once
// from a Config. `strait run` builds its clients from it, and `strait check`
// and `strait offsets translate` build the same plan, so all three accept
// and refuse exactly the same settings.
type Plan struct {
	Flows []*FlowPlan // in the order of Config.Flows
	// Warnings lists each client-setting warning once, saying which
	// clients it applies to.
	Warnings []config.Warning
}

// FlowPlan is what Strait builds for one flow: whether it replicates and
// emits heartbeats, and the clients that needs. A client the flow does not
// use is nil.
type FlowPlan struct {
	Flow *config.Flow
	// Replicates is true for an enabled flow (config.Flow.Enabled): it
	// copies data, topics and checkpoints.
	Replicates bool
	// Heartbeats is true when the flow writes heartbeats into its target:
	// emit.heartbeats.enabled, and the target has bootstrap servers (the
	// config warns about a heartbeat target without them, and its
	// heartbeats are skipped).
	Heartbeats bool

	SourceConsumer *Client // data consumer
	SourceAdmin    *Client
	SourceProducer *Client // offset syncs, when they live on the source
	TargetProducer *Client // data; also the offset index, checkpoints and heartbeats
	TargetAdmin    *Client
	TargetConsumer *Client // reads Strait's and MM2's internal topics on the target
}

// Client is one client configuration of a flow with its mapped settings.
// Several franz-go clients may be built from one Client.
type Client struct {
	Use    string // e.g. "target consumer of A->B", for messages
	Role   Role
	Config config.Client
	Mapped Mapped
}

// New builds a franz-go client from the planned settings.
func (c *Client) New(id Identity, logger *slog.Logger, extra ...kgo.Opt) (*kgo.Client, error) {
	return Build(c.Mapped, c.Config, id, logger, extra...)
}

// Flow returns the plan of the flow source->target, or nil.
func (p *Plan) Flow(source, target string) *FlowPlan {
	for _, fp := range p.Flows {
		if fp.Flow.Source == source && fp.Flow.Target == target {
			return fp
		}
	}
	return nil
}

// NewPlan maps the client settings of every role of every flow of cfg that
// the daemon builds a client from; a plan in which no flow replicates is an
// error, as the daemon refuses to run it. The plan is returned even on error, so
// that its warnings can be shown. The error is a *config.Errors: each
// setting that cannot be honoured once, with its key and line and the
// clients it was meant for.
func NewPlan(cfg *config.Config) (*Plan, error) {
	var problems, warnings findings
	p := &Plan{}
	for _, f := range cfg.Flows {
		fp := &FlowPlan{Flow: f, Replicates: f.Enabled}
		fp.Heartbeats = f.EmitHeartbeatsEnabled && len(seeds(f.TargetProducer)) > 0
		client := func(use string, role Role, c config.Client, transactional bool) *Client {
			use += " of " + f.Name()
			m, probs := mapClient(role, c, transactional)
			for _, pr := range probs {
				problems.add(pr.Origin, pr.Message, use)
			}
			for _, w := range m.Warnings {
				warnings.add(w.Origin, w.Message, use)
			}
			return &Client{Use: use, Role: role, Config: c, Mapped: m}
		}
		if fp.Replicates {
			fp.SourceConsumer = client("source consumer", Consumer, f.SourceConsumer, false)
			fp.SourceAdmin = client("source admin", Admin, f.SourceAdmin, false)
			if f.EmitOffsetSyncsEnabled && f.OffsetSyncsTopicLocation != "target" {
				fp.SourceProducer = client("source producer", Producer, f.SourceProducer, false)
			}
		}
		if fp.Replicates || fp.Heartbeats {
			// Only the data producer of an exactly-once flow writes
			// transactions.
			fp.TargetProducer = client("target producer", Producer, f.TargetProducer, fp.Replicates && f.ExactlyOnce)
		}
		if fp.Replicates {
			fp.TargetAdmin = client("target admin", Admin, f.TargetAdmin, false)
			fp.TargetConsumer = client("target consumer", Consumer, f.TargetConsumer, false)
		}
		p.Flows = append(p.Flows, fp)
	}
	for _, w := range warnings.sorted() {
		p.Warnings = append(p.Warnings, config.Warning{Origin: w.origin, Message: w.text()})
	}
	var errs config.Errors
	if !slices.ContainsFunc(p.Flows, func(fp *FlowPlan) bool { return fp.Replicates }) {
		msg := "no flow this node runs replicates data, and Strait does not run heartbeats alone: " +
			"set <source>-><target>.enabled = true for a pair, or give --clusters the target of an enabled flow"
		// A misspelt A->B.enabled is the likely cause: say it first.
		for _, w := range cfg.Warnings {
			if _, guess, ok := strings.Cut(w.Message, "did you mean "); ok && strings.HasSuffix(strings.TrimSuffix(guess, "?"), ".enabled") {
				msg = fmt.Sprintf("no flow is enabled: did you mean %s? (%s is not a key); %s", strings.TrimSuffix(guess, "?"), w.Origin, msg)
				break
			}
		}
		errs = append(errs, config.Error{File: cfg.Path, Message: msg})
	}
	if len(problems) == 0 && len(errs) == 0 {
		return p, nil
	}
	for _, pr := range problems.sorted() {
		errs = append(errs, config.Error{File: cfg.Path, Origin: pr.origin, Message: pr.text()})
	}
	return p, &errs
}

// finding is one problem or warning with the clients it applies to.
type finding struct {
	origin config.Origin
	msg    string
	uses   []string
}

func (f *finding) text() string { return f.msg + " (" + strings.Join(f.uses, ", ") + ")" }

// findings collects each (key, message) once, in the order first seen.
type findings []*finding

func (fs *findings) add(o config.Origin, msg, use string) {
	for _, f := range *fs {
		if f.origin == o && f.msg == msg {
			if !slices.Contains(f.uses, use) {
				f.uses = append(f.uses, use)
			}
			return
		}
	}
	*fs = append(*fs, &finding{origin: o, msg: msg, uses: []string{use}})
}

// sorted returns the findings in line order, as config reports its own.
func (fs findings) sorted() findings {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b *finding) int { return cmp.Compare(a.origin.Line, b.origin.Line) })
	return out
}
