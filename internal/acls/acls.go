// Package acls is the control plane of one flow for ACLs: every
// sync.topic.acls.interval.seconds it reads the source's topic ACLs (and, with
// strait.sync.group.acls.enabled, its group ACLs), applies MM2's rules (spec
// mm2-compat.md §5) and creates on the target the bindings it lacks.
//
// A sync computes a Plan (what the target lacks, changing nothing) and then
// carries out exactly that plan, so Syncer.Plan shows what the next sync would
// do (for `strait check --plan`). Nothing is ever deleted on the target, and one binding the
// target refuses never stops the others: it is a Problem, logged once and kept
// in the Status.
package acls

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/policy"
)

// DefaultInterval is MM2's sync.topic.acls.interval.seconds.
const DefaultInterval = 10 * time.Minute

// syncTimeout bounds one sync's admin calls, the minute Strait gives every round of
// control-plane admin calls (admin.timeout.ms is not honoured yet).
const syncTimeout = time.Minute

// Config is what the syncer needs from the flow's configuration.
type Config struct {
	Flow   string // "A->B", for logs
	Source string // source alias: remote topic names are formatted with it
	Target string // target alias, for cycle detection
	Policy policy.ReplicationPolicy
	// Topics and HeartbeatsReplication select topics as the data plane does
	// (topics/topics.exclude, heartbeats.replication.enabled).
	Topics                *policy.Filter
	HeartbeatsReplication bool
	// Groups is the flow's group filter (groups/groups.exclude) when
	// strait.sync.group.acls.enabled is true, and nil otherwise: nil copies no
	// GROUP ACLs.
	Groups *policy.Filter
	// OwnGroup reports Strait's own groups (progress groups), whose ACLs are
	// never copied; nil means none.
	OwnGroup func(group string) bool
	// Interval is sync.topic.acls.interval.seconds; 0 means DefaultInterval.
	Interval time.Duration
}

// Plan is what a sync adds to the target, or added (Syncer.Sync).
type Plan struct {
	// Add lists the bindings the target lacks, sorted.
	Add []Binding `json:"add,omitempty"`
	// Present counts the bindings the rules ask for that the target has.
	Present int `json:"present"`
	// Skipped lists the source bindings the rules do not copy, with the reason.
	Skipped []Skip `json:"skipped,omitempty"`
	// Problems lists the bindings that could not be read or were refused.
	Problems []Problem `json:"problems,omitempty"`
	// SourceSecurityDisabled is true when the source has no authorizer
	// (SECURITY_DISABLED): it has no ACLs, and nothing is synced.
	SourceSecurityDisabled bool `json:"source_security_disabled,omitempty"`
}

// Empty reports whether the plan changes nothing and reports no problem.
func (p Plan) Empty() bool { return len(p.Add) == 0 && len(p.Problems) == 0 }

// Status is a snapshot of the last sync.
type Status struct {
	// SyncedAt is when the last sync ended (zero before the first).
	SyncedAt time.Time `json:"synced_at,omitzero"`
	// Error says why the last sync could not run at all (a cluster that does
	// not answer, an admin that may not describe ACLs); empty when it ran.
	Error string `json:"error,omitempty"`
	// Created counts the bindings the last sync created; Present those the
	// target had already.
	Created int `json:"created"`
	Present int `json:"present"`
	// Problems are the bindings the last sync could not copy.
	Problems []Problem `json:"problems,omitempty"`
	// SourceSecurityDisabled: the source has no authorizer.
	SourceSecurityDisabled bool `json:"source_security_disabled,omitempty"`
}

// Syncer copies one flow's ACLs from the source to the target.
type Syncer struct {
	cfg   Config
	rules rules
	src   *kadm.Client
	dst   *kadm.Client
	log   *slog.Logger

	// syncing serializes syncs (Run and direct Sync calls); it guards the
	// fields below it.
	syncing sync.Mutex
	// reported holds the error last logged per binding, so that each is
	// logged once and again only when it changes or comes back.
	reported map[Binding]string
	// toldNoAuthorizer is set once the source's missing authorizer was logged.
	toldNoAuthorizer bool

	mu     sync.Mutex
	status Status
}

// New returns a Syncer of the flow cfg describes. src and dst are admin clients of the
// source and the target, left open. dst's principal needs DESCRIBE and ALTER on the
// target's CLUSTER resource, src's DESCRIBE on the source's.
func New(cfg Config, src, dst *kadm.Client, log *slog.Logger) *Syncer {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	return &Syncer{
		cfg: cfg,
		rules: rules{
			source: cfg.Source, target: cfg.Target, policy: cfg.Policy,
			topics: cfg.Topics, heartbeats: cfg.HeartbeatsReplication,
			groups: cfg.Groups, ownGroup: cfg.OwnGroup,
		},
		src: src, dst: dst,
		log:      log.With("component", "acls", "flow", cfg.Flow),
		reported: make(map[Binding]string),
	}
}

// Run syncs at once and then every Interval until ctx is done; it returns nil then. A sync
// that fails is logged (once while it keeps failing the same way) and tried again at the
// next interval.
func (s *Syncer) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	var failing string
	for {
		_, err := s.Sync(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil && err.Error() != failing:
			failing = err.Error()
			s.log.Warn("ACL sync failed; will retry", "err", err, "interval", s.cfg.Interval)
		case err == nil && failing != "":
			failing = ""
			s.log.Info("ACL sync works again")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Plan returns what a sync would add now, changing nothing.
func (s *Syncer) Plan(ctx context.Context) (Plan, error) {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	return s.plan(ctx)
}

// Sync makes one pass: it computes the Plan and creates its bindings. The returned plan
// is what was done: Add holds the bindings created, Problems the ones refused (and the
// plan's own). The error is for a sync that could not run at all.
func (s *Syncer) Sync(parent context.Context) (Plan, error) {
	s.syncing.Lock()
	defer s.syncing.Unlock()
	ctx, cancel := context.WithTimeout(parent, syncTimeout)
	defer cancel()
	p, err := s.plan(ctx)
	if err != nil {
		s.setStatus(Status{SyncedAt: time.Now(), Error: err.Error()})
		return Plan{}, err
	}
	if p.SourceSecurityDisabled && !s.toldNoAuthorizer {
		s.toldNoAuthorizer = true
		s.log.Info("the source has no authorizer (SECURITY_DISABLED), so there are no ACLs to sync; set sync.topic.acls.enabled = false to stop asking",
			"source", s.cfg.Source)
	}
	created, refused := s.create(ctx, p.Add)
	p.Add = created
	p.Problems = append(p.Problems, refused...)
	sortProblems(p.Problems)
	s.logOutcome(p)
	s.setStatus(Status{
		SyncedAt: time.Now(), Created: len(p.Add), Present: p.Present,
		Problems: p.Problems, SourceSecurityDisabled: p.SourceSecurityDisabled,
	})
	return p, nil
}

// Status returns a snapshot of the last sync.
func (s *Syncer) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Problems = append([]Problem(nil), st.Problems...)
	return st
}

func (s *Syncer) setStatus(st Status) {
	s.mu.Lock()
	s.status = st
	s.mu.Unlock()
}

// plan reads the source's bindings, applies the rules, and reads the target's bindings
// (only when the rules want some) to keep those it lacks.
func (s *Syncer) plan(ctx context.Context) (Plan, error) {
	source, err := describe(ctx, s.src, s.cfg.Groups != nil)
	if errors.Is(err, kerr.SecurityDisabled) {
		return Plan{SourceSecurityDisabled: true}, nil
	}
	if err != nil {
		return Plan{}, explainDescribe(err, "source", s.cfg.Source)
	}
	var p Plan
	var known []Binding
	for _, b := range source {
		if f := b.unknownField(); f != "" {
			p.Problems = append(p.Problems, Problem{Binding: b,
				Error: "its " + f + " is unknown to Strait (a newer Kafka?), so it is not copied: create it on the target yourself"})
			continue
		}
		known = append(known, b)
	}
	want, skipped := s.rules.wanted(known)
	p.Skipped = skipped
	if len(want) == 0 {
		return p, nil
	}
	have, err := describe(ctx, s.dst, s.cfg.Groups != nil)
	if err != nil {
		return Plan{}, explainDescribe(err, "target", s.cfg.Target)
	}
	p.Add, p.Present = missing(want, have)
	return p, nil
}

// describe reads every TOPIC binding of the cluster (and every GROUP binding with groups),
// of any name and pattern type.
func describe(ctx context.Context, adm *kadm.Client, groups bool) ([]Binding, error) {
	filter := kadm.NewACLs().Topics().ResourcePatternType(kadm.ACLPatternAny).Operations().
		Allow().AllowHosts().Deny().DenyHosts()
	if groups {
		filter.Groups()
	}
	results, err := adm.DescribeACLs(ctx, filter)
	if err != nil {
		return nil, err
	}
	var out []Binding
	for _, r := range results {
		if r.Err != nil {
			return nil, withMessage(r.Err, r.ErrMessage)
		}
		for _, d := range r.Described {
			out = append(out, bindingOf(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission))
		}
	}
	return out, nil
}

// explainDescribe names the cluster and the fix of a failed DescribeAcls.
func explainDescribe(err error, side, alias string) error {
	switch {
	case side == "target" && errors.Is(err, kerr.SecurityDisabled):
		return fmt.Errorf("reading ACLs on the target %s: it has no authorizer, so ACLs cannot be created there: set authorizer.class.name on its brokers, or sync.topic.acls.enabled = false: %w", alias, err)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("reading ACLs on the %s %s: Strait's admin client may not: grant its principal DESCRIBE on the CLUSTER resource of %s (and ALTER on the target's, to create them), or set sync.topic.acls.enabled = false: %w", side, alias, alias, err)
	}
	return fmt.Errorf("reading ACLs on the %s %s: %w", side, alias, err)
}

// withMessage adds a broker's error message to its error code. Not for authorization
// failures: Kafka's message then dumps the request and its session, which says nothing to an
// operator and differs every time (and a problem is logged again when its text changes).
func withMessage(err error, msg string) error {
	if msg == "" || errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return err
	}
	return fmt.Errorf("%w: %s", err, msg)
}

// entry groups the bindings that one CreateAcls builder can carry exactly: kadm builds the
// product of names, operations, principals and hosts, so only the names may vary.
type entry struct {
	resourceType, pattern, principal, host, operation, permission string
}

// create creates bindings on the target and returns those created and those refused, one
// Problem each. A request that fails as a whole fails each of its bindings.
func (s *Syncer) create(ctx context.Context, bindings []Binding) (created []Binding, refused []Problem) {
	byEntry := map[entry][]string{}
	var order []entry
	for _, b := range bindings {
		e := entry{b.ResourceType, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission}
		if _, ok := byEntry[e]; !ok {
			order = append(order, e)
		}
		byEntry[e] = append(byEntry[e], b.ResourceName)
	}
	for _, e := range order {
		c, r := s.createEntry(ctx, e, byEntry[e])
		created = append(created, c...)
		refused = append(refused, r...)
	}
	return sortedUnique(created), refused
}

func (s *Syncer) createEntry(ctx context.Context, e entry, names []string) (created []Binding, refused []Problem) {
	failAll := func(msg string) []Problem {
		var ps []Problem
		for _, n := range names {
			ps = append(ps, Problem{Binding: e.binding(n), Error: msg})
		}
		return ps
	}
	builder, err := e.builder(names)
	if err != nil {
		return nil, failAll(err.Error())
	}
	results, err := s.dst.CreateACLs(ctx, builder)
	if err != nil {
		return nil, failAll(fmt.Sprintf("creating it on the target %s: %v", s.cfg.Target, err))
	}
	for _, r := range results {
		b := bindingOf(r.Type, r.Name, r.Pattern, r.Principal, r.Host, r.Operation, r.Permission)
		if r.Err != nil {
			refused = append(refused, Problem{Binding: b, Error: s.explainCreate(withMessage(r.Err, r.ErrMessage))})
			continue
		}
		created = append(created, b)
	}
	return created, refused
}

// explainCreate says why the target refused a binding and what to do.
func (s *Syncer) explainCreate(err error) string {
	if errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return fmt.Sprintf("the target %s refused it: %v; Strait's admin principal on %s needs ALTER on the CLUSTER resource to create ACLs", s.cfg.Target, err, s.cfg.Target)
	}
	return fmt.Sprintf("the target %s refused it: %v", s.cfg.Target, err)
}

func (e entry) binding(name string) Binding {
	return Binding{ResourceType: e.resourceType, ResourceName: name, PatternType: e.pattern,
		Principal: e.principal, Host: e.host, Operation: e.operation, Permission: e.permission}
}

// builder returns the kadm builder that creates exactly the bindings of e with names.
func (e entry) builder(names []string) (*kadm.ACLBuilder, error) {
	pattern, err := kmsg.ParseACLResourcePatternType(e.pattern)
	if err != nil {
		return nil, err
	}
	op, err := kmsg.ParseACLOperation(e.operation)
	if err != nil {
		return nil, err
	}
	b := kadm.NewACLs().ResourcePatternType(pattern).Operations(op)
	switch e.resourceType {
	case Topic:
		b.Topics(names...)
	case Group:
		b.Groups(names...)
	default:
		return nil, fmt.Errorf("resource type %s is not one Strait copies", e.resourceType)
	}
	switch e.permission {
	case Allow:
		b.Allow(e.principal).AllowHosts(e.host)
	case Deny:
		b.Deny(e.principal).DenyHosts(e.host)
	default:
		return nil, fmt.Errorf("permission %s is neither ALLOW nor DENY", e.permission)
	}
	return b, nil
}

// logOutcome logs every binding created, and every problem once: again only when its
// error changes, or when it comes back after it was solved.
func (s *Syncer) logOutcome(p Plan) {
	for _, b := range p.Add {
		s.log.Info("ACL created on the target", "target", s.cfg.Target, "acl", b.String())
	}
	now := make(map[Binding]string, len(p.Problems))
	for _, pr := range p.Problems {
		now[pr.Binding] = pr.Error
		if s.reported[pr.Binding] != pr.Error {
			s.log.Warn("ACL not copied to the target", "target", s.cfg.Target, "acl", pr.Binding.String(), "err", pr.Error)
		}
	}
	s.reported = now
}
