package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"strait/internal/coord"
	"strait/internal/mirror"
)

// Sharing a flow between nodes. Every node that runs a replicating flow is
// a member of its progress group on the target (package coord), a node
// alone a group of one: the group's leader assigns the flow's source partitions, sticky
// and balanced by throughput, and the control duty (remote topics and
// their configs, ACLs, checkpoints, heartbeats) to exactly one member.
//
// The share's loop (run) owns what the node runs for the flow and changes
// it only in the order the group protocol asks:
//   - a gained partition is adopted by the running mirror (Mirror.Adopt),
//     which starts it from the progress its previous owner committed;
//   - a partition given up (coord's Release, before the node rejoins)
//     stops the running mirror, which flushes and commits everything, and
//     a new mirror runs the partitions left: only then may another node
//     take it;
//   - the control duty runs the ACL syncer, the checkpointer and the
//     heartbeat emitter under their own context and lets the topic
//     reconciler change the target; without it the reconciler only follows
//     the target, so that the data plane learns the topics the holder
//     created.
//
// Each mirror is bound to the membership it was granted (coord.Grant: member
// id, generation, slot), which only the loop changes: it grants a running
// mirror each new generation of the same membership, and revokes the grant
// when the membership is lost or a release runs out of time. A mirror
// without its grant's lease (coord.Member.LeaseUntilOf) writes nothing, and
// its commits carry the grant's generation, so the broker refuses them once
// another node owns its partitions; a later membership of the same process
// never revives an earlier mirror.
type share struct {
	d      *Daemon
	f      *flow
	member *coord.Member
	log    *slog.Logger
	reqs   chan shareRequest // to run, in the order the member's callbacks came
	// stopped is closed when run returns: the member's callbacks then
	// send nothing more.
	stopped chan struct{}

	mu       sync.Mutex
	ready    map[string]mirror.Topic // the topics the reconciler last handed over, by source name
	foreign  map[string]bool         // assigned topics this node's config does not select, reported once
	listed   []coord.Unit            // what work last gave the leader
	current  *runningMirror          // the mirror running now; nil before the first assignment
	stopping *runningMirror          // the mirror being stopped now (fenceStopping)
	rates    rateMeter
}

// shareRequest is a change the loop makes, in order: an assignment (the
// units and the duty the node holds now), a release (units and the duty to
// give up, done closed once they are), or the loss of the membership.
type shareRequest struct {
	kind    requestKind
	units   []coord.Unit // assign: held; release: given up
	control bool         // assign: held; release: given up
	grant   coord.Grant  // assign: the generation of the membership it belongs to
	// stopBy is when a mirror stopped for this assignment must have
	// stopped: the release that follows it is cut off at the rebalance
	// timeout, and the next owner may write from then on.
	stopBy time.Time
	done   chan struct{}
}

type requestKind int

const (
	requestAssign requestKind = iota
	requestRelease
	requestLost
)

// runningMirror is one mirror of the node's share, with the units it may
// copy (read by its Share.Owns, grown by adopt) and the membership it may
// write under (its grant).
type runningMirror struct {
	m      *mirror.Mirror
	member *coord.Member
	cancel context.CancelFunc
	done   chan error

	mu      sync.RWMutex
	units   map[coord.Unit]bool
	grant   coord.Grant
	revoked bool // the grant was taken back: the mirror writes and commits nothing more
}

func (r *runningMirror) owns(topic string, partition int32) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.units[coord.Unit{Topic: topic, Partition: partition}]
}

// current returns the mirror's grant, and false once it was revoked.
func (r *runningMirror) current() (coord.Grant, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.grant, !r.revoked
}

// leaseUntil is the mirror's lease: the member's, only while the member holds
// the very membership and generation the mirror was granted.
func (r *runningMirror) leaseUntil() time.Time {
	g, ok := r.current()
	if !ok {
		return time.Time{}
	}
	return r.member.LeaseUntilOf(g)
}

// generation is what the mirror's progress commits carry: its grant, never
// the member's generation of the moment.
func (r *runningMirror) generation() (int32, string, bool) {
	g, ok := r.current()
	return g.Generation, g.MemberID, ok
}

// regrant moves the mirror to a new generation of the membership it holds
// (the cooperative protocol keeps a member's units through a rebalance);
// it reports false when g is another membership or slot, which needs a new
// mirror.
func (r *runningMirror) regrant(g coord.Grant) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.revoked || r.grant.MemberID != g.MemberID || r.grant.Slot != g.Slot {
		return false
	}
	r.grant = g
	return true
}

// revoke takes the grant back and abandons what the mirror has not written:
// from now on it writes and commits nothing.
func (r *runningMirror) revoke() {
	r.mu.Lock()
	r.revoked = true
	r.mu.Unlock()
	r.m.Abandon()
}

// rateMeter measures how fast the source of each owned partition grows,
// in bytes per second, for the leader's balance: its end offsets' growth
// times the mean size of the records copied. The copy's own rate would
// weigh a partition catching up after a takeover or a pause at many times
// its real load, and it starts from zero with every mirror; the source's
// end offsets go on across mirrors.
type rateMeter struct {
	samples map[coord.Unit]rateSample
}

// rateSample is a partition's source end offset when it was last read,
// the rate measured then (-1: not yet) and the mean record size known
// (bytes copied over records copied; 0: none copied yet).
type rateSample struct {
	end         int64
	at          time.Time
	rate        float64
	recordBytes float64
}

// rateWindow is the least time between two samples of a rate.
const rateWindow = time.Second

// measure takes the owned partitions' status at now and returns the rates
// known: a partition's rate needs two samples of its end offset at least
// rateWindow apart and a record copied; an end that moved back (the topic
// recreated) starts over.
func (r *rateMeter) measure(parts []mirror.PartitionStatus, now time.Time) map[coord.Unit]float64 {
	if r.samples == nil {
		r.samples = map[coord.Unit]rateSample{}
	}
	out := map[coord.Unit]float64{}
	for _, p := range parts {
		if p.End < 0 {
			continue // not fetched yet
		}
		u := coord.Unit{Topic: p.Topic, Partition: p.Partition}
		prev, ok := r.samples[u]
		size := prev.recordBytes
		if p.Records > 0 {
			size = float64(p.Bytes) / float64(p.Records)
		}
		switch {
		case !ok || p.End < prev.end:
			r.samples[u] = rateSample{end: p.End, at: now, rate: -1, recordBytes: size}
		case now.Sub(prev.at) >= rateWindow:
			rate := -1.0
			if size > 0 {
				rate = float64(p.End-prev.end) * size / now.Sub(prev.at).Seconds()
			}
			r.samples[u] = rateSample{end: p.End, at: now, rate: rate, recordBytes: size}
		default:
			prev.recordBytes = size
			r.samples[u] = prev
		}
		if rate := r.samples[u].rate; rate >= 0 {
			out[u] = rate
		}
	}
	return out
}

// nodeID names this process in the group's status and logs. It need not be
// unique: what must be, the transactional id, comes from the member's slot.
func nodeID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "strait"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// transactionalID is the transactional id of a mirror's producer in
// exactly-once mode: the progress group and the member's slot, so that every
// member has its own, a node alone has "<group>-0" as before sharing was the
// default, and a node that takes the slot of one that died fences that
// node's producer (and aborts its open transaction) at once. A member of a
// group whose leader assigns no slots (an older Strait) uses its node name
// and a random suffix, unique but not stable.
func transactionalID(group string, slot int) string {
	if slot >= 0 {
		return fmt.Sprintf("%s-%d", group, slot)
	}
	return fmt.Sprintf("%s-%s-%08x", group, nodeID(), rand.Uint32())
}

// fillerTimeout is the transaction timeout of the fillers of a flow that
// keeps the source's offsets: a fill left open by a node that died holds
// its partition (read_committed consumers) that long unless another node
// takes the partition, which fences it at once.
const fillerTimeout = 30 * time.Second

func newShare(d *Daemon, f *flow, member func(coord.Config) *coord.Member) *share {
	s := &share{d: d, f: f, log: d.log.With("flow", f.cfg.Name(), "component", "share"),
		reqs: make(chan shareRequest, 8), stopped: make(chan struct{}),
		ready: map[string]mirror.Topic{}, foreign: map[string]bool{}}
	s.member = member(coord.Config{
		Group:             ProgressGroup(f.cfg.Source),
		NodeID:            nodeID(),
		Settings:          f.cfg.SharedSettings(),
		SessionTimeout:    f.cfg.SessionTimeout,
		HeartbeatInterval: f.cfg.HeartbeatInterval,
		RebalanceTimeout:  f.cfg.RebalanceTimeout,
		Work:              s.work,
		Rates:             s.measureRates,
		OnAssign:          s.assigned,
		Release:           s.release,
		OnLost:            s.lost,
	})
	return s
}

// topicsReady is the reconciler's hand-over: the running mirror learns the
// topics, and the leader asks for a new assignment when the partitions to
// share changed.
func (s *share) topicsReady(ready []mirror.Topic, gone []string) {
	s.mu.Lock()
	before := s.unitsLocked()
	for _, t := range ready {
		s.ready[t.Source] = t
	}
	for _, name := range gone {
		delete(s.ready, name)
	}
	changed := !slices.Equal(before, s.unitsLocked())
	cur := s.current
	s.mu.Unlock()
	if cur != nil {
		cur.m.Update(ready, gone)
	}
	if changed && s.member.Status().Leader {
		s.member.Rejoin()
	}
}

// unitsLocked lists the partitions of the ready topics, sorted. The caller
// holds s.mu.
func (s *share) unitsLocked() []coord.Unit {
	var out []coord.Unit
	for _, t := range s.ready {
		for p := range t.Partitions {
			out = append(out, coord.Unit{Topic: t.Source, Partition: p})
		}
	}
	slices.SortFunc(out, coord.CompareUnits)
	return out
}

// work is the leader's list of the flow's units (coord.Config.Work).
func (s *share) work(context.Context) ([]coord.Unit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed = s.unitsLocked()
	return s.listed, nil
}

// measureRates gives how fast the source of each owned partition grows,
// in bytes per second (coord.Config.Rates).
func (s *share) measureRates() map[coord.Unit]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil
	}
	return s.rates.measure(s.current.m.Status().Partitions, time.Now())
}

// assigned takes the member's new assignment (coord.Config.OnAssign): what
// it gained starts at once; what it gives up stops in release, which
// follows.
func (s *share) assigned(_ context.Context, a coord.Assignment) {
	s.log.Info("assignment", "generation", a.Generation, "member", a.MemberID, "leader", a.Leader, "slot", a.Slot,
		"partitions", len(a.Units), "control", a.Control, "revoked", len(a.Revoke), "revoked_control", a.RevokeControl)
	s.send(shareRequest{kind: requestAssign, units: a.Units, control: a.Control,
		grant:  coord.Grant{Generation: a.Generation, MemberID: a.MemberID, Slot: a.Slot},
		stopBy: time.Now().Add(s.f.cfg.RebalanceTimeout)})
	s.learn(a.Units)
	if a.Leader {
		// The reconciler may have handed over topics after work listed
		// the units and before the member knew it leads (topicsReady
		// asks only a leader to rejoin): those would wait for the next
		// change of topics, possibly forever.
		s.mu.Lock()
		stale := !slices.Equal(s.listed, s.unitsLocked())
		s.mu.Unlock()
		if stale {
			s.member.Rejoin()
		}
	}
}

// learn makes sure this node finds the topics of the units it was assigned:
// the duty holder shares a topic's partitions as soon as it created the
// remote topic, and a node without the duty would otherwise find it only at
// its next pass, up to refresh.topics.interval.seconds later, its part of
// the topic stalled meanwhile. A topic this node's config does not select
// is never found: the nodes run different configs, which is reported.
func (s *share) learn(units []coord.Unit) {
	if s.f.topics == nil {
		return
	}
	unknown := false
	var foreign []string
	s.mu.Lock()
	for _, u := range units {
		if _, ok := s.ready[u.Topic]; ok || s.foreign[u.Topic] {
			continue
		}
		if s.f.topics.Selects(u.Topic) {
			unknown = true
		} else {
			s.foreign[u.Topic] = true
			foreign = append(foreign, u.Topic)
		}
	}
	s.mu.Unlock()
	if unknown {
		s.f.topics.Wake()
	}
	if len(foreign) > 0 {
		s.log.Error("assigned partitions of topics this node's config does not select, which it cannot copy: every node of a flow must run the same config (topics, topics.exclude, replication.policy.class); fix the config of the node whose topics differ",
			"topics", foreign)
	}
}

// send hands r to the loop, unless it stopped.
func (s *share) send(r shareRequest) bool {
	select {
	case s.reqs <- r:
		return true
	case <-s.stopped:
		return false
	}
}

// release gives up units and the duty before the member rejoins
// (coord.Config.Release): it returns once the running mirror flushed and
// committed them and the duty's components stopped.
func (s *share) release(ctx context.Context, units []coord.Unit, control bool) error {
	done := make(chan struct{})
	if !s.send(shareRequest{kind: requestRelease, units: units, control: control, done: done}) {
		return nil // stopped: everything is given up
	}
	select {
	case <-done:
		return nil
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		// The member rejoins now and the next generation gives the units to
		// another node: the mirror still stopping must write nothing more.
		s.fenceStopping()
		return fmt.Errorf("releasing %d partitions: %w; the mirror still stopping was fenced (it writes and commits nothing more) and its partitions are copied again from the last progress committed", len(units), ctx.Err())
	}
}

// fenceStopping revokes the grant of the mirror being stopped, if any.
func (s *share) fenceStopping() {
	s.mu.Lock()
	r := s.stopping
	s.mu.Unlock()
	if r != nil {
		r.revoke()
	}
}

// lost stops everything at once (coord.Config.OnLost): the lease is off,
// so nothing is written meanwhile.
func (s *share) lost() {
	s.log.Warn("lost the flow's group membership: stopping this node's partitions and duties until it rejoins")
	s.send(shareRequest{kind: requestLost})
}

// run is the share's loop: it makes every requested change in order, and
// stops everything when ctx ends. A mirror or a duty that fails on its own
// fails the flow (fail).
func (s *share) run(ctx context.Context, fail func(error)) error {
	var wg sync.WaitGroup
	defer close(s.stopped)
	defer wg.Wait()
	defer s.stopMirror(time.Time{})
	defer s.f.setControl(ctx, false, fail)
	var mirrorFailed chan error
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-mirrorFailed:
			fail(err)
			return nil
		case r := <-s.reqs:
			units, control := r.units, r.control
			switch r.kind {
			case requestRelease:
				units, control = s.keeping(r.units), s.f.controlRunning() && !r.control
			case requestLost:
				units, control = nil, false
			}
			s.f.setControl(ctx, control, fail)
			if r.kind == requestLost {
				s.revokeMirror()
			} else if ch := s.reach(ctx, r, units, &wg); ch != nil {
				mirrorFailed = ch
			}
			if r.done != nil {
				close(r.done)
			}
		}
	}
}

// keeping returns the running mirror's units without those given up.
func (s *share) keeping(given []coord.Unit) []coord.Unit {
	s.mu.Lock()
	cur := s.current
	s.mu.Unlock()
	if cur == nil {
		return nil
	}
	cur.mu.RLock()
	defer cur.mu.RUnlock()
	var keep []coord.Unit
	for u := range cur.units {
		if !slices.Contains(given, u) {
			keep = append(keep, u)
		}
	}
	return keep
}

// reach makes the running mirror copy exactly units under the grant of
// request r (an assignment, or for a release the running mirror's own):
// granted the new generation and adopting when its units only grow, else a
// new mirror after the old one stopped. It returns the new mirror's failure
// channel when it started one.
func (s *share) reach(ctx context.Context, r shareRequest, units []coord.Unit, wg *sync.WaitGroup) chan error {
	if !s.f.replicates {
		return nil
	}
	want := map[coord.Unit]bool{}
	for _, u := range units {
		want[u] = true
	}
	s.mu.Lock()
	cur := s.current
	s.mu.Unlock()
	grant := r.grant
	if cur != nil && cur.cancel != nil {
		if r.kind == requestAssign && !cur.regrant(grant) {
			// Another membership or slot: the mirror's writes belong to the
			// old one. (A lost membership revoked it already.)
			cur.revoke()
		}
		if r.kind == requestRelease {
			grant, _ = cur.current()
		}
		cur.mu.Lock()
		grows := !cur.revoked
		for u := range cur.units {
			if !want[u] {
				grows = false
			}
		}
		if grows {
			cur.units = want
		}
		cur.mu.Unlock()
		if grows {
			cur.m.Adopt()
			s.logOwning(grant, want)
			return nil
		}
		s.stopMirror(r.stopBy)
	}
	ch := s.startMirror(ctx, grant, want, wg)
	s.logOwning(grant, want)
	return ch
}

// logOwning records what this node copies from now on, under grant: with
// "released partitions" (stopMirror), the ownership record the fault tests
// check for partitions written by two nodes at once.
func (s *share) logOwning(grant coord.Grant, units map[coord.Unit]bool) {
	s.log.Info("owning partitions", "generation", grant.Generation, "member", grant.MemberID, "slot", grant.Slot, "partitions", len(units), "units", unitList(units))
}

// unitList is units as "topic/partition,...", sorted.
func unitList(units map[coord.Unit]bool) string {
	out := make([]string, 0, len(units))
	for u := range units {
		out = append(out, u.String())
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// startMirror runs a new mirror for units under grant on the flow's
// clients, with the topics the reconciler handed over so far.
func (s *share) startMirror(ctx context.Context, grant coord.Grant, units map[coord.Unit]bool, wg *sync.WaitGroup) chan error {
	r := &runningMirror{member: s.member, units: units, grant: grant, done: make(chan error, 1)}
	cfg, deps := s.f.mirrorCfg, s.f.mirrorDeps
	deps.Share = mirror.Share{Owns: r.owns, LeaseUntil: r.leaseUntil, Generation: r.generation}
	if cfg.Transactions != nil {
		txn := *cfg.Transactions
		txn.ID = transactionalID(cfg.Group, grant.Slot)
		cfg.Transactions = &txn
	}

	failed := make(chan error, 1)
	m, err := mirror.New(cfg, deps)
	if err != nil {
		// build validated the same config: a bug, stopped loudly.
		failed <- fmt.Errorf("flow %s: %w", s.f.cfg.Name(), err)
		return failed
	}
	r.m = m
	s.mu.Lock()
	r.m.Update(slices.Collect(maps.Values(s.ready)), nil)
	s.current = r
	s.mu.Unlock()
	mctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	wg.Go(func() {
		err := r.m.Run(mctx)
		r.done <- err
		if mctx.Err() == nil {
			// It ended on its own: the flow cannot run.
			failed <- fmt.Errorf("flow %s: %w", s.f.cfg.Name(), errors.Join(err, errors.New("the data plane stopped")))
		}
	})
	return failed
}

// stopMirror stops the running mirror and waits until it flushed and
// committed. With stopBy set (a release, which the member cuts off at the
// rebalance timeout), whatever the mirror has not written by abandonAt is
// abandoned so that its final commit still fits; should it still run at
// stopBy, release fences it (fenceStopping). A failed final commit is
// logged: the partitions' next owner copies again from the last committed
// progress.
func (s *share) stopMirror(stopBy time.Time) {
	s.mu.Lock()
	cur := s.current
	if cur != nil && cur.cancel != nil {
		s.stopping = cur
	}
	s.mu.Unlock()
	if cur == nil || cur.cancel == nil {
		return
	}
	defer func() {
		s.mu.Lock()
		s.stopping = nil
		s.mu.Unlock()
	}()
	cur.cancel()
	cur.cancel = nil // stopped: the next change starts a new mirror
	if !stopBy.IsZero() {
		abandon := time.AfterFunc(time.Until(abandonAt(stopBy, s.f.cfg.RebalanceTimeout)), cur.m.Abandon)
		defer abandon.Stop()
	}
	err := <-cur.done
	if err != nil {
		s.log.Warn("stopping this node's partitions: their last progress was not committed; their next owner copies them again from the progress committed before", "err", err)
	}
	cur.mu.RLock()
	units := unitList(cur.units)
	grant, granted := cur.grant, !cur.revoked
	cur.mu.RUnlock()
	s.log.Info("released partitions", "generation", grant.Generation, "member", grant.MemberID, "units", units, "committed", err == nil && granted)
}

// abandonAt is when a mirror stopping for a release that must end by stopBy
// abandons what it has not written: a quarter of the rebalance timeout
// (at most 15 s) before, which leaves its final commit that long.
func abandonAt(stopBy time.Time, rebalance time.Duration) time.Time {
	return stopBy.Add(-min(rebalance/4, 15*time.Second))
}

// revokeMirror stops the running mirror after its node lost the membership
// it was granted: nothing it has not written is written, and it commits
// nothing, since its partitions may be another node's already.
func (s *share) revokeMirror() {
	s.mu.Lock()
	cur := s.current
	s.mu.Unlock()
	if cur != nil && cur.cancel != nil {
		cur.revoke()
	}
	s.stopMirror(time.Time{})
}

// dataPlane returns the mirror running now, nil before the first
// assignment.
func (s *share) dataPlane() *mirror.Mirror {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil
	}
	return s.current.m
}
