package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"strait/internal/coord"
	"strait/internal/mirror"
)

// Sharing a flow between nodes (strait.cluster.enabled). Every node that
// runs the flow is a member of its progress group on the target (package
// coord): the group's leader assigns the flow's source partitions, sticky
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
// A node that lost its membership (or its lease: coord.Member.LeaseUntil) writes
// nothing: both paths check the lease before they send, and commits carry
// the generation, so the broker refuses a fenced node's progress.
type share struct {
	d      *Daemon
	f      *flow
	member *coord.Member
	log    *slog.Logger
	reqs   chan shareRequest // to run, in the order the member's callbacks came
	// stopped is closed when run returns: the member's callbacks then
	// send nothing more.
	stopped chan struct{}

	mu      sync.Mutex
	ready   map[string]mirror.Topic // the topics the reconciler last handed over, by source name
	current *runningMirror          // the mirror running now; nil before the first assignment
	rates   rateMeter
}

// shareRequest is a change the loop makes, in order: an assignment (the
// units and the duty the node holds now), a release (units and the duty to
// give up, done closed once they are), or the loss of the membership.
type shareRequest struct {
	kind    requestKind
	units   []coord.Unit // assign: held; release: given up
	control bool         // assign: held; release: given up
	done    chan struct{}
}

type requestKind int

const (
	requestAssign requestKind = iota
	requestRelease
	requestLost
)

// runningMirror is one mirror of the node's share, with the units it may
// copy (read by its Share.Owns, grown by adopt).
type runningMirror struct {
	m      *mirror.Mirror
	cancel context.CancelFunc
	done   chan error

	mu    sync.RWMutex
	units map[coord.Unit]bool
}

func (r *runningMirror) owns(topic string, partition int32) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.units[coord.Unit{Topic: topic, Partition: partition}]
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

// nodeID names this process in the group's status and logs.
func nodeID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "strait"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func newShare(d *Daemon, f *flow, member func(coord.Config) *coord.Member) *share {
	s := &share{d: d, f: f, log: d.log.With("flow", f.cfg.Name(), "component", "share"),
		reqs: make(chan shareRequest, 8), stopped: make(chan struct{}),
		ready: map[string]mirror.Topic{}}
	s.member = member(coord.Config{
		Group:             ProgressGroup(f.cfg.Source),
		NodeID:            nodeID(),
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
	return s.unitsLocked(), nil
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
	s.log.Info("assignment", "generation", a.Generation, "member", a.MemberID, "leader", a.Leader,
		"partitions", len(a.Units), "control", a.Control, "revoked", len(a.Revoke), "revoked_control", a.RevokeControl)
	s.send(shareRequest{kind: requestAssign, units: a.Units, control: a.Control})
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
		return fmt.Errorf("releasing %d partitions: %w", len(units), ctx.Err())
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
	defer s.stopMirror()
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
				s.stopMirror()
			} else if ch := s.reach(ctx, units, &wg); ch != nil {
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

// reach makes the running mirror copy exactly units: adopted when they
// only grow, else a new mirror after the old one stopped. It returns the
// new mirror's failure channel when it started one.
func (s *share) reach(ctx context.Context, units []coord.Unit, wg *sync.WaitGroup) chan error {
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
	if cur != nil && cur.cancel != nil {
		cur.mu.Lock()
		grows := true
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
			s.logOwning(want)
			return nil
		}
		s.stopMirror()
	}
	ch := s.startMirror(ctx, want, wg)
	s.logOwning(want)
	return ch
}

// logOwning records what this node copies from now on: with "released
// partitions" (stopMirror), the ownership record the fault tests check
// for partitions written by two nodes at once.
func (s *share) logOwning(units map[coord.Unit]bool) {
	gen, member, _ := s.member.Generation()
	s.log.Info("owning partitions", "generation", gen, "member", member, "partitions", len(units), "units", unitList(units))
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

// startMirror runs a new mirror for units on the flow's clients, with the
// topics the reconciler handed over so far.
func (s *share) startMirror(ctx context.Context, units map[coord.Unit]bool, wg *sync.WaitGroup) chan error {
	r := &runningMirror{units: units, done: make(chan error, 1)}
	cfg := s.f.mirrorCfg
	cfg.Share = mirror.Share{Owns: r.owns, LeaseUntil: s.member.LeaseUntil, Generation: s.member.Generation}
	r.m = mirror.New(cfg, s.f.mirrorClients, s.d.log)
	s.mu.Lock()
	r.m.Update(slices.Collect(maps.Values(s.ready)), nil)
	s.current = r
	s.mu.Unlock()
	mctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	failed := make(chan error, 1)
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
// committed. A failed final commit is logged: the partitions' next owner
// copies again from the last committed progress.
func (s *share) stopMirror() {
	s.mu.Lock()
	cur := s.current
	s.mu.Unlock()
	if cur == nil || cur.cancel == nil {
		return
	}
	cur.cancel()
	cur.cancel = nil // stopped: the next change starts a new mirror
	err := <-cur.done
	if err != nil {
		s.log.Warn("stopping this node's partitions: their last progress was not committed; their next owner copies them again from the progress committed before", "err", err)
	}
	cur.mu.RLock()
	units := unitList(cur.units)
	cur.mu.RUnlock()
	gen, member, _ := s.member.Generation()
	s.log.Info("released partitions", "generation", gen, "member", member, "units", units, "committed", err == nil)
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
