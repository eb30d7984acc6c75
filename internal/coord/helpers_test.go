package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// convergeTimeout bounds the wait for a group to settle.
const convergeTimeout = 60 * time.Second

// harness runs members of one group in this process, each with its own client, and
// plays the daemon's part in their callbacks: it records who holds what, and flags a
// unit or the control duty given to a member while another member holds it with its
// lease on. Such a hand-over from a member whose lease is off is a fenced takeover:
// legitimate (the old holder was evicted) only when a test stalls a member.
type harness struct {
	t      *testing.T
	group  string
	cfg    Config // timeouts and callbacks every member starts with
	client func(node string) *kgo.Client
	clock  func() time.Time // the members' lease clock; nil: time.Now
	logs   *kafkatest.SyncBuffer

	mu       sync.Mutex
	work     []Unit
	workErr  error // Work's next answer is this error, once
	owner    map[Unit]string
	control  string
	problems []string
	fenced   []string
	lost     map[string]int
	nodes    map[string]*node
	stalls   map[string]chan struct{} // a node's heartbeat goroutine waits while its channel is open
	waiting  map[string]bool          // a node's heartbeat goroutine waits on its stall now
}

type node struct {
	name     string
	m        *Member
	cancel   context.CancelFunc
	done     chan error
	stopping bool // guarded by harness.mu
	stopped  bool
}

func newHarness(t *testing.T, cfg Config, work []Unit, client func(node string) *kgo.Client) *harness {
	t.Helper()
	h := &harness{
		t: t, group: kafkatest.Name(t, "coord"), cfg: cfg, client: client, logs: &kafkatest.SyncBuffer{},
		work: slices.Clone(work), owner: map[Unit]string{}, lost: map[string]int{}, nodes: map[string]*node{},
		stalls: map[string]chan struct{}{}, waiting: map[string]bool{},
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("COORD_TEST_LOGS") != "" {
			t.Logf("members' logs:\n%s", h.logs.String())
		}
	})
	return h
}

// start runs a member named name until the test ends or stop.
func (h *harness) start(name string) *node {
	h.t.Helper()
	cfg := h.cfg
	cfg.Group, cfg.NodeID = h.group, name
	cfg.Work = h.listWork
	cfg.OnAssign = func(_ context.Context, a Assignment) { h.assigned(name, a) }
	userRelease := h.cfg.Release
	cfg.Release = func(ctx context.Context, units []Unit, control bool) error {
		if userRelease != nil {
			if err := userRelease(ctx, units, control); err != nil {
				return err
			}
		}
		h.released(name, units, control)
		return nil
	}
	cfg.OnLost = func() { h.lostAll(name) }
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_node", name)
	m := New(cfg, h.client(name), log)
	if h.clock != nil {
		m.now = h.clock
	}
	m.beforeHeartbeat = func(ctx context.Context) {
		h.mu.Lock()
		ch := h.stalls[name]
		h.mu.Unlock()
		if ch != nil {
			h.setWaiting(name, true)
			select {
			case <-ch:
			case <-ctx.Done():
			}
			h.setWaiting(name, false)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{name: name, m: m, cancel: cancel, done: make(chan error, 1)}
	h.mu.Lock()
	h.nodes[name] = n
	h.mu.Unlock()
	go func() { n.done <- m.Run(ctx) }()
	h.t.Cleanup(func() { h.stop(name) })
	return n
}

// stop stops a member as the daemon does: it stops the member's work first (the member
// counts as holding nothing from then on), then cancels its Run and waits for it.
func (h *harness) stop(name string) {
	h.t.Helper()
	h.mu.Lock()
	n := h.nodes[name]
	if n.stopped {
		h.mu.Unlock()
		return
	}
	n.stopping, n.stopped = true, true
	h.dropLocked(name)
	h.mu.Unlock()
	n.cancel()
	select {
	case err := <-n.done:
		if err != nil {
			h.t.Errorf("member %s: Run: %v", name, err)
		}
	case <-time.After(30 * time.Second):
		h.t.Errorf("member %s: Run did not return within 30s of its cancel", name)
	}
	if st := n.m.Status(); st.State != StateStopped || st.Lease || len(st.Units) > 0 {
		h.t.Errorf("member %s after Run: %+v", name, st)
	}
}

// stallHeartbeats blocks the heartbeat goroutine of node before its next heartbeat,
// until the returned function is called: as if the process stopped, but for the rest of
// the member, whose Lease and Status the test reads meanwhile.
func (h *harness) stallHeartbeats(node string) (resume func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.stalls[node] = ch
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.stalls, node)
		h.mu.Unlock()
		close(ch)
	}
}

func (h *harness) setWaiting(node string, w bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting[node] = w
}

// parked reports whether node's heartbeat goroutine waits on its stall.
func (h *harness) parked(node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting[node]
}

func (h *harness) listWork(context.Context) ([]Unit, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.workErr; err != nil {
		h.workErr = nil
		return nil, err
	}
	return slices.Clone(h.work), nil
}

func (h *harness) setWork(units []Unit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.work = slices.Clone(units)
}

func (h *harness) assigned(name string, a Assignment) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.nodes[name].stopping {
		return
	}
	takeOver := func(what, from string) {
		switch {
		case from == "" || from == name:
		case h.nodes[from].m.Lease():
			h.problems = append(h.problems, fmt.Sprintf("generation %d: %s given to %s while %s holds it with its lease", a.Generation, what, name, from))
		default:
			h.fenced = append(h.fenced, fmt.Sprintf("%s from %s to %s", what, from, name))
		}
	}
	for _, u := range a.Units {
		takeOver(u.String(), h.owner[u])
		h.owner[u] = name
	}
	if a.Control {
		takeOver("control", h.control)
		h.control = name
	}
	for _, u := range a.Revoke {
		if h.owner[u] != name {
			h.problems = append(h.problems, fmt.Sprintf("generation %d: %s told to revoke %v, which it does not hold", a.Generation, name, u))
		}
	}
}

func (h *harness) released(name string, units []Unit, control bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range units {
		if h.owner[u] == name {
			delete(h.owner, u)
		}
	}
	if control && h.control == name {
		h.control = ""
	}
}

func (h *harness) lostAll(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.nodes[name].m.Lease() {
		h.problems = append(h.problems, name+" lost its membership with its lease on")
	}
	h.lost[name]++
	h.dropLocked(name)
}

func (h *harness) dropLocked(name string) {
	maps.DeleteFunc(h.owner, func(_ Unit, o string) bool { return o == name })
	if h.control == name {
		h.control = ""
	}
}

// check fails the test at once on a problem the callbacks recorded.
func (h *harness) check() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.problems) > 0 {
		h.t.Fatalf("problems:\n%s", strings.Join(h.problems, "\n"))
	}
}

// converged returns nil once the named members are stable in one generation with their
// lease, hold every unit of the work once between them, in counts that differ by at
// most one, exactly one of them holds control, and the callbacks agree.
func (h *harness) converged(names ...string) error {
	h.t.Helper()
	h.check()
	var gen int32 = -1
	holder := map[Unit]string{}
	var counts []int
	control := ""
	for _, name := range names {
		st := h.node(name).m.Status()
		switch {
		case st.State != StateStable:
			return fmt.Errorf("%s is %s (error %q)", name, st.State, st.Error)
		case !st.Lease:
			return fmt.Errorf("%s is stable without its lease", name)
		case gen >= 0 && st.Generation != gen:
			return fmt.Errorf("%s is in generation %d, another in %d", name, st.Generation, gen)
		}
		gen = st.Generation
		for _, u := range st.Units {
			if o, ok := holder[u]; ok {
				return fmt.Errorf("%v held by %s and %s", u, o, name)
			}
			holder[u] = name
		}
		counts = append(counts, len(st.Units))
		if st.Control {
			if control != "" {
				return fmt.Errorf("control held by %s and %s", control, name)
			}
			control = name
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	work := sortedUnits(h.work)
	if len(holder) != len(work) {
		return fmt.Errorf("%d units held, %d in the work", len(holder), len(work))
	}
	for _, u := range work {
		o, ok := holder[u]
		if !ok {
			return fmt.Errorf("%v held by nobody", u)
		}
		if h.owner[u] != o {
			return fmt.Errorf("%v: the status says %s holds it, the callbacks %q", u, o, h.owner[u])
		}
	}
	if len(h.owner) != len(work) {
		return fmt.Errorf("the callbacks gave %d units, the work has %d", len(h.owner), len(work))
	}
	if slices.Max(counts)-slices.Min(counts) > 1 {
		return fmt.Errorf("unbalanced: counts %v", counts)
	}
	if control == "" || h.control != control {
		return fmt.Errorf("control: the status says %q, the callbacks %q", control, h.control)
	}
	return nil
}

func (h *harness) node(name string) *node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[name]
}

func (h *harness) controlHolder() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.control
}

func (h *harness) noFencedTakeovers() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.fenced) > 0 {
		h.t.Errorf("fenced takeovers without a stalled member: %v", h.fenced)
	}
}

// testConvergeAndTakeOver starts three members, which settle into a balanced group with
// one control holder; then the control holder stops, and the two others take over its
// units and the control duty.
func testConvergeAndTakeOver(t *testing.T, h *harness) {
	for _, n := range []string{"a", "b", "c"} {
		h.start(n)
	}
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })
	leaving := h.controlHolder()
	var rest []string
	for _, n := range []string{"a", "b", "c"} {
		if n != leaving {
			rest = append(rest, n)
		}
	}
	h.stop(leaving)
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged(rest...) })
	h.noFencedTakeovers()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lost) > 0 {
		t.Errorf("memberships lost: %v", h.lost)
	}
}

// testStalledMember settles three members, then cuts the control holder off the broker
// (cut): it loses its lease before the others are given its units and control, which
// they are once the broker evicted it; an OffsetCommit with its old generation is
// refused while a live member's is accepted. Once heal lets it reach the broker again it
// learns it lost its membership, gives up everything and rejoins as a new member.
func testStalledMember(t *testing.T, h *harness, commit func(gen int32, memberID string) error, cut func(node, memberID string), heal func()) {
	for _, n := range []string{"a", "b", "c"} {
		h.start(n)
	}
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })
	victim := h.controlHolder()
	v := h.node(victim)
	gen, memberID, ok := v.m.Generation()
	if !ok {
		t.Fatalf("%s holds no generation", victim)
	}
	held := v.m.Status().Units
	var rest []string
	for _, n := range []string{"a", "b", "c"} {
		if n != victim {
			rest = append(rest, n)
		}
	}
	if err := commit(gen, memberID); err != nil {
		t.Fatalf("committing with %s's generation %d before the cut: %v", victim, gen, err)
	}

	cut(victim, memberID)
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged(rest...) })
	// The others hold its units: each hand-over happened with its lease off (else
	// converged failed on a problem).
	// Either it still believed it held them (fenced takeovers), or a session timeout
	// without an answer from the coordinator made it give them up first.
	h.mu.Lock()
	fenced, gaveUp := slices.Clone(h.fenced), h.lost[victim]
	h.mu.Unlock()
	if want := len(held) + 1; len(fenced) != want && (len(fenced) != 0 || gaveUp != 1) {
		t.Errorf("%d fenced takeovers, want %d (its %d units and control), or none after it gave its membership up (%d times): %v",
			len(fenced), want, len(held), gaveUp, fenced)
	}
	t.Logf("%d fenced takeovers; %s gave its membership up %d times before the others held its units", len(fenced), victim, gaveUp)
	if v.m.Lease() {
		t.Errorf("%s holds its lease after its eviction", victim)
	}
	if st := v.m.Status(); st.State != StateStable || len(st.Units) != len(held) {
		t.Logf("%s after its eviction (it cannot know yet): %+v", victim, st)
	}
	err := commit(gen, memberID)
	if !errors.Is(err, kerr.UnknownMemberID) && !errors.Is(err, kerr.IllegalGeneration) {
		t.Errorf("committing with the evicted %s's generation %d: %v, want UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION", victim, gen, err)
	}
	lgen, lid, _ := h.node(rest[0]).m.Generation()
	if err := commit(lgen, lid); err != nil {
		t.Errorf("committing with %s's generation %d: %v", rest[0], lgen, err)
	}

	heal()
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost[victim] != 1 || len(h.lost) != 1 {
		t.Errorf("memberships lost: %v, want %s once", h.lost, victim)
	}
	if _, newID, _ := v.m.Generation(); newID == memberID {
		t.Errorf("%s rejoined with its old member id %s", victim, memberID)
	}
}

// committer returns a commit function for testStalledMember: an OffsetCommit of offset
// 1 on partition 0 of topic, in group, through cl.
func committer(t *testing.T, cl *kgo.Client, group, topic string) func(int32, string) error {
	t.Helper()
	md, err := kadm.NewClient(cl).Metadata(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	id := md.Topics[topic].ID
	return func(gen int32, memberID string) error {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.MemberID = group, gen, memberID
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("an OffsetCommit response with %d topics", len(resp.Topics))
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
}

// cutDialer dials brokers until it is cut: then it closes its connections and refuses
// new ones, so that its client reaches no broker, as a stopped process does not.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
	d     net.Dialer
}

func (c *cutDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, errors.New("network cut by the test")
	}
	conn, err := c.d.DialContext(ctx, network, addr)
	if err == nil {
		c.conns = append(c.conns, conn)
	}
	return conn, err
}

func (c *cutDialer) setCut(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for _, conn := range c.conns {
			conn.Close()
		}
		c.conns = nil
	}
}

// cutNetwork gives each node of a harness a cutDialer of its own, and is
// testStalledMember's cut and heal for a cut network.
type cutNetwork struct {
	mu      sync.Mutex
	dialers map[string]*cutDialer
	victim  *cutDialer
}

// clients returns the harness's client function: newClient with the node's dialer.
func (n *cutNetwork) clients(newClient func(...kgo.Opt) *kgo.Client) func(node string) *kgo.Client {
	return func(node string) *kgo.Client {
		d := &cutDialer{}
		n.mu.Lock()
		if n.dialers == nil {
			n.dialers = map[string]*cutDialer{}
		}
		n.dialers[node] = d
		n.mu.Unlock()
		return newClient(kgo.Dialer(d.DialContext))
	}
}

func (n *cutNetwork) cut(node, _ string) {
	n.mu.Lock()
	n.victim = n.dialers[node]
	n.mu.Unlock()
	n.victim.setCut(true)
}

func (n *cutNetwork) heal() { n.victim.setCut(false) }
