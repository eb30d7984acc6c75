// Package coord shares the work of one replication flow among the Strait nodes that run
// it. Membership and assignment use Kafka's classic group protocol (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup) on the flow's target cluster, with Strait's own protocol type, as
// Kafka Connect does: the broker decides who is in the group and who leads each
// generation, and the leader assigns the work (Assign). One node alone is a group of one.
//
// The work is the flow's source partitions (Unit) and one control duty (topic, config and
// ACL sync, checkpoints, heartbeats) that one member holds at a time. Assignment is
// sticky, balanced by throughput, and cooperative (KIP-429): a member keeps its work
// through a rebalance, and a unit that moves is released by its old owner (Release)
// before the next generation gives it to the new one. A member that loses its membership
// loses everything at once (OnLost).
//
// Fencing. A member that stalls (a long GC pause, SIGSTOP, a network cut) past its
// session timeout is evicted by the broker and its work given to others, while it may
// still believe it owns it. Two things keep it from doing harm: Lease, which turns false
// two thirds of a session timeout after the last heartbeat the broker accepted was sent
// (the broker cannot evict the member sooner than a session timeout after receiving it,
// nor by the rebalance timeout, which is at least as long), so a resumed node finds its
// lease gone before it writes; and Generation, whose fields the daemon puts in its
// OffsetCommits, which the broker rejects from an evicted member. A member that had no
// answer from the coordinator for a whole session timeout counts its membership as lost
// and rejoins, whatever the coordinator answers next: it may have been evicted, and a
// restarted coordinator once accepted an evicted member's old generation again. The
// lease reads Go's monotonic clock, which counts the time a process is stopped but not
// the time a whole machine is suspended; the commit check holds in both cases.
//
// Goroutines. Run's goroutine runs the protocol loop: it builds the metadata, joins,
// assigns when it leads, syncs, calls the callbacks, and waits for a reason to rejoin.
// Each of its requests has a deadline derived from the session and rebalance timeouts.
// From each successful SyncGroup until the next JoinGroup one heartbeat goroutine, started
// and awaited by the loop, heartbeats with that generation; it renews the lease, tells
// the loop of a rebalance in progress, and ends on the loss of the membership, which it
// reports by ending. Heartbeats go on while Release runs. Status, Lease, Generation and
// Rejoin may be called from any goroutine.
package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxLeaveTimeout bounds a LeaveGroup.
const maxLeaveTimeout = 5 * time.Second

// quickRejoins is how many rejoins in a row the loop makes at once (rebalances in
// progress, a member id to use) before it backs off between them.
const quickRejoins = 3

// Member is one member of a flow's group.
type Member struct {
	cfg Config
	cl  *kgo.Client
	log *slog.Logger
	now func() time.Time // the lease's clock; tests replace it
	// beforeHeartbeat, when not nil, is called by the heartbeat goroutine before each
	// heartbeat: tests stall the goroutine with it.
	beforeHeartbeat func(context.Context)

	rejoinCh chan struct{} // Rejoin's requests, coalesced (capacity 1)
	wg       sync.WaitGroup

	// Owned by Run's goroutine.
	memberID  string
	owned     []Unit // sorted: what the user holds now, as the metadata says
	control   bool
	slot      int              // the slot of the last assignment (Plan.Slot), -1 for none
	hints     map[Unit]float64 // the rates the last assignment gave for owned units
	reported  map[Unit]float64 // the rates of the last metadata
	released  map[Unit]float64 // the rates of units released since the last SyncGroup
	hasGen    bool             // a SyncGroup succeeded since the member joined as new
	rejoins   int64            // Rejoin requests honoured, in the metadata
	reason    string
	hb        *heartbeat
	workRetry *time.Timer // the leader's rejoin after Work failed
	workBo    backoff     // between failed Work calls
	failing   string      // the last join or sync error logged

	mu sync.Mutex // guards s
	s  shared
}

// shared is the member's state that other goroutines read (Status, Lease, Generation)
// or the heartbeat goroutine updates (renew, markLost).
type shared struct {
	state      State
	memberID   string
	generation int32
	leader     bool
	held       bool // the member holds a generation and has not lost it
	units      []Unit
	control    bool
	slot       int
	heartbeat  time.Time // when the last accepted heartbeat of this membership was sent
	// contact is when the coordinator last answered this membership: when the
	// SyncGroup of its generation was answered, or when a heartbeat it accepted or
	// answered REBALANCE_IN_PROGRESS was sent. A session timeout after it the
	// coordinator may have evicted the member (Member.silent).
	contact time.Time
	err     string
}

// New returns a member of cfg.Group on the cluster of cl; it starts nothing. The client
// must not be shared with another Member: franz-go sends join and sync requests on one
// connection, one at a time. It must not be a consumer group client either.
func New(cfg Config, cl *kgo.Client, log *slog.Logger) *Member {
	cfg = cfg.withDefaults()
	return &Member{
		cfg:      cfg,
		cl:       cl,
		log:      log.With("component", "coord", "group", cfg.Group, "node", cfg.NodeID),
		now:      time.Now,
		rejoinCh: make(chan struct{}, 1),
		slot:     -1,
		s:        shared{state: StateStopped, generation: -1, slot: -1},
	}
}

// Rejoin asks for a rebalance, for instance because the leader's work list changed. It
// does not block, and requests made before the member rejoins count as one.
func (m *Member) Rejoin() {
	select {
	case m.rejoinCh <- struct{}{}:
	default:
	}
}

// Generation returns the member's generation and member id, for OffsetCommit requests:
// the broker rejects a commit of an evicted member or of a past generation. ok is false
// while the member holds no generation.
func (m *Member) Generation() (gen int32, memberID string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.generation, m.s.memberID, m.s.held
}

// Lease reports whether the member may act on what it owns: it holds a generation (it is
// stable, revoking, or rejoining with its work, as the cooperative protocol allows) and
// the last heartbeat the broker accepted was sent less than two thirds of the session
// timeout ago, by the monotonic clock. A heartbeat answered REBALANCE_IN_PROGRESS does not
// renew it, so a long rebalance lets it lapse too. The daemon writes no data and runs no
// control duty while it is false.
func (m *Member) Lease() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaseLocked()
}

// LeaseUntil is when the lease ends, by the monotonic clock: two thirds of
// the session timeout after the last heartbeat the broker accepted was
// sent, while the member holds its work; the zero time when it does not. A
// produce request carries it as its deadline, so that a request that
// waited past it (the process frozen with the request queued) is never
// written.
func (m *Member) LeaseUntil() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaseUntilLocked()
}

// Grant is one generation of a membership as the member held it: what the daemon
// binds each of its mirrors to, so that a mirror writes and commits only under the
// membership it was started in (LeaseUntilOf), never under a later one of the same
// process.
type Grant struct {
	Generation int32
	MemberID   string
	// Slot names the member's transactional producer (Plan.Slot); negative for none.
	Slot int
}

// LeaseUntilOf is LeaseUntil for the holder of grant g: the zero time unless the
// member holds g's membership in g's generation now. A mirror started in an earlier
// generation, or before the member lost its membership and joined again, has no lease
// however fresh the member's is.
func (m *Member) LeaseUntilOf(g Grant) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s.memberID != g.MemberID || m.s.generation != g.Generation {
		return time.Time{}
	}
	return m.leaseUntilLocked()
}

func (m *Member) leaseUntilLocked() time.Time {
	if !m.s.held || m.s.heartbeat.IsZero() {
		return time.Time{}
	}
	return m.s.heartbeat.Add(m.leaseTerm())
}

func (m *Member) leaseLocked() bool {
	return m.s.held && !m.s.heartbeat.IsZero() && m.now().Sub(m.s.heartbeat) < m.leaseTerm()
}

func (m *Member) leaseTerm() time.Duration { return m.cfg.SessionTimeout * 2 / 3 }

// Run is the member's protocol loop (see the package comment). It returns an error only
// for an invalid Config, at once; otherwise it runs until ctx is done, then sends a
// LeaveGroup (bounded by a short timeout) and returns nil once every goroutine it started
// has ended. The LeaveGroup hands the member's work to the others at once: the daemon
// stops that work (or stops writing, as the lease is off from then on) before it cancels
// ctx. Run is called once.
func (m *Member) Run(ctx context.Context) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	defer m.wg.Wait()
	bo := backoff{max: min(maxBackoff, m.cfg.SessionTimeout/3)}
	m.workBo = backoff{max: maxBackoff}
	quick := 0
	m.reason = "new member"
	for ctx.Err() == nil {
		g, err := m.joinAndSync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			switch classify(err) {
			case lost:
				m.lose(ctx, err)
				m.reason = "membership lost"
				continue
			case rejoin:
				if quick++; quick <= quickRejoins {
					m.reason = "rejoining at once"
					if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
						m.reason = ke.Message // "REBALANCE_IN_PROGRESS", "MEMBER_ID_REQUIRED"
					}
					continue
				}
			}
			m.fail(err)
			m.reason = "retrying after an error"
			sleep(ctx, bo.next())
			continue
		}
		quick = 0
		bo.reset()
		m.failing = ""
		followUp := m.apply(ctx, g)
		if err := m.hb.lost(); err != nil {
			m.lose(ctx, err)
			m.reason = "membership lost"
			continue
		}
		if followUp {
			m.reason = "released work for another member"
			m.rejoins++ // the metadata changes in any case: the broker rebalances
			continue
		}
		reason, err := m.wait(ctx)
		if err != nil {
			m.lose(ctx, err)
			reason = "membership lost"
		}
		m.reason = reason
	}
	m.stopHeartbeat()
	if m.workRetry != nil {
		m.workRetry.Stop()
	}
	old := m.memberID
	m.memberID, m.owned, m.control, m.slot, m.hasGen = "", nil, false, -1, false
	m.mu.Lock()
	m.s = shared{state: StateStopped, generation: m.s.generation, slot: -1, err: m.s.err}
	m.mu.Unlock()
	if old != "" {
		m.leave(ctx, old, "shutting down")
	}
	return nil
}

// generation is one generation as the member joined it.
type generation struct {
	id       int32
	memberID string
	leader   bool
	plan     Plan
	workErr  error     // the leader's Work failed
	synced   time.Time // when its SyncGroup was answered, by the lease's clock
}

// joinAndSync joins the group (rejoining with its work, if it holds a generation),
// assigns the generation when it leads, and syncs.
func (m *Member) joinAndSync(ctx context.Context) (generation, error) {
	meta := m.metadata() // before stopping the heartbeats: Rates is the user's
	if h := m.hb; h != nil {
		m.stopHeartbeat()
		// The heartbeats may have ended on the loss while the loop chose to rejoin
		// for another reason; and a member back from a silence longer than a
		// session gives up its membership whatever it would be told.
		if h.err != nil {
			return generation{}, h.err
		}
		if gen, _, held := m.Generation(); held && m.hasGen {
			if err := m.silent(gen, m.now()); err != nil {
				return generation{}, err
			}
		}
	}
	m.mu.Lock()
	m.s.state = StateJoining
	m.mu.Unlock()
	m.log.Info("joining group", "member", m.memberID, "reason", m.reason, "units", len(m.owned), "control", m.control)

	join, err := m.join(ctx, meta)
	if err != nil {
		return generation{}, err
	}
	g := generation{id: join.Generation, memberID: join.MemberID, leader: join.LeaderID == join.MemberID}
	if join.Protocol != nil && *join.Protocol != Protocol {
		return generation{}, fmt.Errorf("joining group %q: the broker chose protocol %q, not %q", m.cfg.Group, *join.Protocol, Protocol)
	}
	var assignments []kmsg.SyncGroupRequestGroupAssignment
	if g.leader && !join.SkipAssignment {
		assignments, g.workErr = m.lead(ctx, g.id, g.memberID, join.Members)
	}
	b, err := m.sync(ctx, g, assignments)
	if err != nil {
		return generation{}, err
	}
	// A follower's SyncGroup waits for the leader's; the coordinator starts the
	// member's session again when it answers.
	g.synced = m.now()
	if g.plan, err = decodeAssignment(b); err != nil {
		return generation{}, fmt.Errorf("syncing group %q in generation %d: %w", m.cfg.Group, g.id, err)
	}
	return g, nil
}

// metadata encodes what the member holds now, taking a pending Rejoin request with it.
func (m *Member) metadata() []byte {
	select {
	case <-m.rejoinCh:
		m.rejoins++
	default:
	}
	// The user's rates, else the rates the leader gave: a unit just taken over keeps
	// the weight it had with its previous owner until this one has measured it.
	rates := make(map[Unit]float64, len(m.owned))
	var measured map[Unit]float64
	if m.cfg.Rates != nil {
		measured = m.cfg.Rates()
	}
	for _, u := range m.owned {
		if r, ok := measured[u]; ok {
			rates[u] = r
		} else if r, ok := m.hints[u]; ok {
			rates[u] = r
		}
	}
	m.reported = rates
	return encodeMetadata(Claim{Node: m.cfg.NodeID, Settings: m.cfg.Settings, Units: m.owned, Control: m.control, Slot: m.slot, Rates: rates}, m.rejoins, m.released)
}

func (m *Member) join(ctx context.Context, meta []byte) (*kmsg.JoinGroupResponse, error) {
	for attempt := 0; ; attempt++ {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = m.cfg.Group
		req.SessionTimeoutMillis = int32(m.cfg.SessionTimeout.Milliseconds())
		req.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout.Milliseconds())
		req.ProtocolType = ProtocolType
		req.MemberID = m.memberID
		req.Reason = kmsg.StringPtr(m.reason)
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = Protocol, meta
		req.Protocols = append(req.Protocols, p)

		// The broker holds a JoinGroup until every member rejoined, at most the
		// rebalance timeout.
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout)
		resp, err := req.RequestWith(rctx, m.cl)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("joining group %q: %w", m.cfg.Group, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if errors.Is(err, kerr.MemberIDRequired) && resp.MemberID != "" {
			// KIP-394: join again with the id the broker gave.
			m.memberID = resp.MemberID
			if attempt == 0 {
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("joining group %q as member %q: %w", m.cfg.Group, m.memberID, err)
		}
		m.memberID = resp.MemberID
		return resp, nil
	}
}

// lead assigns the generation: it decodes every member's claim, lists the work, and
// returns every member's assignment. When Work fails it assigns the units the members
// hold (so nothing is dropped and nothing new is started) and schedules a rejoin.
func (m *Member) lead(ctx context.Context, gen int32, memberID string, members []kmsg.JoinGroupResponseMember) ([]kmsg.SyncGroupRequestGroupAssignment, error) {
	claims := make([]Claim, 0, len(members))
	for _, jm := range members {
		c, err := decodeMetadata(jm.ProtocolMetadata)
		if err != nil {
			m.log.Warn("a member's metadata does not decode; it counts as holding nothing", "member", jm.MemberID, "err", err)
		}
		c.MemberID = jm.MemberID
		c.Leader = jm.MemberID == memberID
		claims = append(claims, c)
	}
	m.compareSettings(claims)

	wctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout/2)
	work, werr := m.cfg.Work(wctx)
	cancel()
	if m.workRetry != nil {
		m.workRetry.Stop()
		m.workRetry = nil
	}
	if werr != nil {
		werr = fmt.Errorf("listing the work of group %q: %w", m.cfg.Group, werr)
		m.log.Warn("listing the work failed; keeping what the members hold and retrying", "err", werr)
		work = nil
		for _, c := range claims {
			work = append(work, c.Units...)
		}
		m.workRetry = time.NewTimer(m.workBo.next())
	} else {
		m.workBo.reset()
	}

	plans := Assign(claims, work)
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(claims))
	withheld := 0
	for _, c := range claims {
		p := plans[c.MemberID]
		withheld += len(minus(c.Units, p.Units))
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = c.MemberID, encodeAssignment(p)
		out = append(out, a)
	}
	m.log.Info("assigned the generation", "generation", gen, "members", len(claims), "units", len(sortedUnits(work)), "revoked", withheld)
	return out, werr
}

// compareSettings reports members whose settings differ from the leader's:
// they run another config of the flow, and work the leader assigns them
// may be work they cannot do. A rolling change of the config passes through
// this state; it must not last.
func (m *Member) compareSettings(claims []Claim) {
	var differ []string
	for _, c := range claims {
		if c.Settings != m.cfg.Settings {
			differ = append(differ, fmt.Sprintf("%s (member %s, settings %q)", c.Node, c.MemberID, c.Settings))
		}
	}
	if len(differ) > 0 {
		m.log.Error("members of the group run other settings than the leader: every node of a flow must run the same config file (topics, replication policy, exactly-once); fix the config of the nodes listed, or finish the rolling change",
			"settings", m.cfg.Settings, "nodes", differ)
	}
}

func (m *Member) sync(ctx context.Context, g generation, assignments []kmsg.SyncGroupRequestGroupAssignment) ([]byte, error) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group = m.cfg.Group
	req.Generation = g.id
	req.MemberID = g.memberID
	req.ProtocolType = kmsg.StringPtr(ProtocolType)
	req.Protocol = kmsg.StringPtr(Protocol)
	req.GroupAssignment = assignments
	// A follower's SyncGroup waits for the leader's, which lists the work first.
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, m.cl)
	if err != nil {
		return nil, fmt.Errorf("syncing group %q in generation %d: %w", m.cfg.Group, g.id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("syncing group %q in generation %d: %w", m.cfg.Group, g.id, err)
	}
	return resp.MemberAssignment, nil
}

// apply makes the generation's assignment the member's: it publishes it, starts the
// heartbeats, calls OnAssign and then Release for what the member must give up. It
// returns whether the assignment asks for a follow-up rebalance.
func (m *Member) apply(ctx context.Context, g generation) bool {
	revoke := minus(m.owned, g.plan.Units)
	revokeControl := m.control && !g.plan.Control
	m.owned, m.control, m.slot, m.hasGen = g.plan.Units, g.plan.Control, g.plan.Slot, true
	m.hints, m.released = g.plan.Rates, nil // this generation's leader had the released rates
	for _, u := range revoke {
		if r, ok := m.reported[u]; ok {
			if m.released == nil {
				m.released = map[Unit]float64{}
			}
			m.released[u] = r
		}
	}
	state := StateStable
	if len(revoke) > 0 || revokeControl {
		state = StateRevoking
	}
	errText := ""
	if g.workErr != nil {
		errText = g.workErr.Error()
	}
	m.mu.Lock()
	m.s.state, m.s.memberID, m.s.generation, m.s.leader, m.s.held = state, g.memberID, g.id, g.leader, true
	m.s.units, m.s.control, m.s.slot, m.s.err = slices.Clone(m.owned), m.control, m.slot, errText
	m.s.contact = later(m.s.contact, g.synced)
	m.mu.Unlock()
	m.startHeartbeat(ctx, g)
	m.log.Info("assignment received", "generation", g.id, "member", g.memberID, "leader", g.leader,
		"units", len(m.owned), "control", m.control, "revoke", len(revoke), "revoke_control", revokeControl, "follow_up", g.plan.Rejoin)

	if m.cfg.OnAssign != nil {
		m.cfg.OnAssign(ctx, Assignment{
			Generation: g.id, MemberID: g.memberID, Leader: g.leader,
			Units: slices.Clone(m.owned), Control: m.control, Slot: m.slot,
			Revoke: slices.Clone(revoke), RevokeControl: revokeControl,
		})
	}
	if state == StateRevoking {
		m.release(ctx, revoke, revokeControl)
	}
	return g.plan.Rejoin
}

func (m *Member) release(ctx context.Context, units []Unit, control bool) {
	var err error
	if m.cfg.Release != nil {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RebalanceTimeout)
		err = m.cfg.Release(rctx, slices.Clone(units), control)
		cancel()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("releasing %d units (control %v) of group %q: %w", len(units), control, m.cfg.Group, err)
		m.log.Warn("release failed; the units count as released", "err", err)
		m.s.err = err.Error()
	}
	if m.s.state == StateRevoking {
		m.s.state = StateStable
	}
}

// wait blocks while the member is stable until it must rejoin, and returns why; or the
// heartbeat's error when the membership was lost.
func (m *Member) wait(ctx context.Context) (string, error) {
	var retryC <-chan time.Time
	if m.workRetry != nil {
		retryC = m.workRetry.C
	}
	select {
	case <-ctx.Done():
		return "", nil
	case <-m.hb.rebalance:
		return "rebalance in progress", nil
	case <-m.hb.done:
		if m.hb.err != nil {
			return "", m.hb.err
		}
		return "heartbeats ended", nil
	case <-m.rejoinCh:
		m.rejoins++
		return "asked to rejoin", nil
	case <-retryC:
		m.workRetry = nil
		return "retrying the work list", nil
	}
}

// lose gives up the membership: the heartbeats stop, the user learns everything is gone
// (OnLost), and the member joins next as a new member. A member that may still be in
// the group under its old id (a generation passed it by) leaves it, so that the next
// rebalance need not wait for the old id to time out.
func (m *Member) lose(ctx context.Context, cause error) {
	m.stopHeartbeat()
	old, had := m.memberID, m.hasGen
	m.memberID, m.owned, m.control, m.slot, m.hasGen = "", nil, false, -1, false
	m.hints, m.reported, m.released = nil, nil, nil
	m.mu.Lock()
	m.s.state, m.s.memberID, m.s.held, m.s.leader = StateLost, "", false, false
	m.s.units, m.s.control, m.s.slot, m.s.heartbeat, m.s.err = nil, false, -1, time.Time{}, cause.Error()
	m.s.contact = time.Time{}
	m.mu.Unlock()
	m.log.Warn("membership lost; everything owned is given up", "member", old, "err", cause)
	if old != "" && !errors.Is(cause, kerr.UnknownMemberID) {
		m.leave(ctx, old, "membership lost")
	}
	if had && m.cfg.OnLost != nil {
		m.cfg.OnLost()
	}
}

// leave sends a LeaveGroup for memberID, bounded by a short timeout even once ctx is done.
func (m *Member) leave(ctx context.Context, memberID, reason string) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(maxLeaveTimeout, m.cfg.SessionTimeout))
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.Group
	req.MemberID = memberID // v0-2
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID, lm.Reason = memberID, kmsg.StringPtr(reason)
	req.Members = append(req.Members, lm) // v3+
	resp, err := req.RequestWith(lctx, m.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil && len(resp.Members) > 0 {
			err = kerr.ErrorForCode(resp.Members[0].ErrorCode)
		}
	}
	if err != nil {
		m.log.Info("leaving the group failed; the broker drops the member after its session timeout", "member", memberID, "err", err)
		return
	}
	m.log.Info("left the group", "member", memberID, "reason", reason)
}

// fail records a failed join or sync and logs it: when it is new, as a warning, or at
// info when it is part of the protocol's normal course (the coordinator moving); at debug
// when it repeats.
func (m *Member) fail(err error) {
	m.mu.Lock()
	m.s.err = err.Error()
	m.mu.Unlock()
	switch {
	case err.Error() == m.failing:
		m.log.Debug("joining the group failed again; retrying with backoff", "err", err)
	case expected(err):
		m.log.Info("the group coordinator is moving; retrying with backoff", "err", err)
	default:
		m.log.Warn("joining the group failed; retrying with backoff", "err", err)
	}
	m.failing = err.Error()
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
