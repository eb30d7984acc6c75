package coord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// fakeTimeouts are short timeouts for members on kfake, which allows sessions down to
// 100 ms (newFakeGroup).
var fakeTimeouts = Config{SessionTimeout: 2 * time.Second, RebalanceTimeout: 10 * time.Second, HeartbeatInterval: 200 * time.Millisecond}

func newFakeGroup(t *testing.T, cfg Config, work []Unit) (*harness, *kfake.Cluster) {
	t.Helper()
	c := kafkatest.NewFake(t, kfake.GroupMinSessionTimeout(100*time.Millisecond))
	h := newHarness(t, cfg, work, func(string) *kgo.Client { return kafkatest.FakeClient(t, c) })
	return h, c
}

// twelve is two topics of six partitions.
var twelve = cat(us("orders", 0, 1, 2, 3, 4, 5), us("audit", 0, 1, 2, 3, 4, 5))

func TestMembersConvergeAndTakeOver(t *testing.T) {
	h, c := newFakeGroup(t, fakeTimeouts, twelve)
	// Every member's first JoinGroup has no member id and is answered MEMBER_ID_REQUIRED
	// (KIP-394); the member joins again with the id it was given.
	var mu sync.Mutex
	firstJoins := map[string]int{}
	c.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if j := req.(*kmsg.JoinGroupRequest); j.MemberID == "" {
			mu.Lock()
			firstJoins[j.Group]++
			mu.Unlock()
		}
		return nil, nil, false
	})
	testConvergeAndTakeOver(t, h)
	mu.Lock()
	defer mu.Unlock()
	if firstJoins[h.group] != 3 {
		t.Errorf("%d JoinGroups without a member id, want 3 (one per member)", firstJoins[h.group])
	}
}

func TestRejoinPicksUpWorkChanges(t *testing.T) {
	h, _ := newFakeGroup(t, fakeTimeouts, twelve)
	for _, n := range []string{"a", "b", "c"} {
		h.start(n)
	}
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })

	// A follower's Rejoin: its metadata changes, so the broker rebalances, and the
	// leader lists the new work.
	follower := ""
	for _, n := range []string{"a", "b", "c"} {
		if !h.node(n).m.Status().Leader {
			follower = n
			break
		}
	}
	added := Unit{Topic: "new", Partition: 0}
	h.setWork(append(slices.Clone(twelve), added))
	h.node(follower).m.Rejoin()
	h.node(follower).m.Rejoin() // coalesced
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })

	// Units gone from the work are released by their owners.
	var owner string
	h.mu.Lock()
	dropped := twelve[0]
	owner = h.owner[dropped]
	h.mu.Unlock()
	h.setWork(append(slices.Clone(twelve[1:]), added))
	h.node(owner).m.Rejoin()
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })
	for _, n := range []string{"a", "b", "c"} {
		if slices.Contains(h.node(n).m.Status().Units, dropped) {
			t.Errorf("%s still holds %v", n, dropped)
		}
	}
	h.noFencedTakeovers()
}

// TestStalledMemberLosesItsLeaseFirst cuts a member off the broker: its lease lapses
// before the broker evicts it and the others get its work.
func TestStalledMemberLosesItsLeaseFirst(t *testing.T) {
	cfg := Config{SessionTimeout: time.Second, RebalanceTimeout: 10 * time.Second, HeartbeatInterval: 200 * time.Millisecond}
	c := kafkatest.NewFake(t, kfake.GroupMinSessionTimeout(100*time.Millisecond))
	var net cutNetwork
	h := newHarness(t, cfg, twelve, net.clients(func(opts ...kgo.Opt) *kgo.Client { return kafkatest.FakeClient(t, c, opts...) }))
	adm := kadm.NewClient(kafkatest.FakeClient(t, c))
	if _, err := adm.CreateTopic(t.Context(), 1, 1, nil, "commits"); err != nil {
		t.Fatal(err)
	}
	testStalledMember(t, h, committer(t, kafkatest.FakeClient(t, c), h.group, "commits"), net.cut, net.heal)
}

// TestStalledHeartbeatGoroutineLosesItsLeaseFirst stalls a member's heartbeat goroutine
// instead, as a stopped process.
func TestStalledHeartbeatGoroutineLosesItsLeaseFirst(t *testing.T) {
	cfg := Config{SessionTimeout: time.Second, RebalanceTimeout: 10 * time.Second, HeartbeatInterval: 200 * time.Millisecond}
	h, c := newFakeGroup(t, cfg, twelve)
	adm := kadm.NewClient(kafkatest.FakeClient(t, c))
	if _, err := adm.CreateTopic(t.Context(), 1, 1, nil, "commits"); err != nil {
		t.Fatal(err)
	}
	var resume func()
	testStalledMember(t, h, committer(t, kafkatest.FakeClient(t, c), h.group, "commits"),
		func(node, _ string) { resume = h.stallHeartbeats(node) },
		func() { resume() })
}

// TestLostMembershipRejoinsAsNew answers one heartbeat ILLEGAL_GENERATION: the member
// gives up everything at once (OnLost, with its lease already off: the harness checks),
// leaves under its old id, and joins as a new member, which gets the work back.
func TestLostMembershipRejoinsAsNew(t *testing.T) {
	h, c := newFakeGroup(t, fakeTimeouts, twelve)
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	_, oldID, _ := n.m.Generation()

	var fenced atomic.Bool
	c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.IllegalGeneration.Code
		fenced.Store(true)
		return resp, nil, true // handled: the control function is dropped
	})
	kafkatest.Eventually(t, convergeTimeout, func() error {
		h.mu.Lock()
		lost := h.lost["a"]
		h.mu.Unlock()
		if lost != 1 {
			return errors.New("membership not lost yet")
		}
		return h.converged("a")
	})
	if _, newID, _ := n.m.Generation(); newID == oldID {
		t.Errorf("rejoined with the old member id %s", oldID)
	}
	described, err := kadm.NewClient(kafkatest.FakeClient(t, c)).DescribeGroups(t.Context(), h.group)
	if err != nil {
		t.Fatal(err)
	}
	if ms := described[h.group].Members; len(ms) != 1 {
		t.Errorf("the group has %d members, want 1: the old id left", len(ms))
	}
}

// TestJoinErrorsAreRetried answers the first JoinGroups with errors: coordinator errors
// (which franz-go retries itself) and an authorization error, which the member retries
// with backoff, logging it once as a warning; it joins once the broker lets it.
func TestJoinErrorsAreRetried(t *testing.T) {
	h, c := newFakeGroup(t, fakeTimeouts, twelve)
	codes := []int16{kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code, kerr.GroupAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code}
	var mu sync.Mutex
	c.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if len(codes) == 0 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, codes = codes[0], codes[1:]
		return resp, nil, true
	})
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	mu.Lock()
	defer mu.Unlock()
	if len(codes) != 0 {
		t.Errorf("%d injected errors left", len(codes))
	}
	if st := n.m.Status(); st.Error != "" {
		t.Errorf("stable with error %q", st.Error)
	}
	logs := h.logs.String()
	if got := strings.Count(logs, `level=WARN msg="joining the group failed; retrying with backoff"`); got != 1 || !strings.Contains(logs, "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("%d warnings for the repeated authorization error, want 1:\n%s", got, logs)
	}
}

// TestWorkFailureKeepsHeldUnits makes the leader's Work fail once: it assigns what the
// members hold, shows the error, and lists the work again after a backoff.
func TestWorkFailureKeepsHeldUnits(t *testing.T) {
	h, _ := newFakeGroup(t, fakeTimeouts, twelve)
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	h.mu.Lock()
	h.workErr = errors.New("metadata of the source refused")
	h.mu.Unlock()
	h.setWork(append(slices.Clone(twelve), Unit{Topic: "new", Partition: 0}))
	n.m.Rejoin()
	kafkatest.Eventually(t, convergeTimeout, func() error {
		st := n.m.Status()
		if st.Error == `listing the work of group "`+h.group+`": metadata of the source refused` && len(st.Units) == len(twelve) {
			return nil
		}
		return errors.New("no Work failure seen yet")
	})
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	if st := n.m.Status(); st.Error != "" {
		t.Errorf("error %q after the retry", st.Error)
	}
}

// TestReleaseBeforeTheTakerGetsIt has a member whose Release is slow: the new member gets
// the moving units only after Release returned, and the giver keeps heartbeating
// meanwhile.
func TestReleaseBeforeTheTakerGetsIt(t *testing.T) {
	block := make(chan struct{})
	var releasing atomic.Bool
	cfg := Config{SessionTimeout: time.Second, RebalanceTimeout: 10 * time.Second, HeartbeatInterval: 200 * time.Millisecond}
	cfg.Release = func(ctx context.Context, units []Unit, control bool) error {
		releasing.Store(true)
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	h, _ := newFakeGroup(t, cfg, twelve)
	h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	b := h.start("b")
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if !releasing.Load() {
			return errors.New("a is not releasing yet")
		}
		return nil
	})
	// Release blocks for three session timeouts: a keeps its membership and lease, b
	// gets nothing it would take from a.
	deadline := time.Now().Add(3 * cfg.SessionTimeout)
	kafkatest.Eventually(t, 4*cfg.SessionTimeout, func() error {
		if st := h.node("a").m.Status(); st.State != StateRevoking || !st.Lease {
			t.Fatalf("a while releasing: %+v", st)
		}
		if st := b.m.Status(); len(st.Units) > 0 {
			t.Fatalf("b holds %v while a releases", st.Units)
		}
		if time.Now().Before(deadline) {
			return errors.New("still watching")
		}
		return nil
	})
	close(block)
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b") })
	h.noFencedTakeovers()
}

// TestLeaseCountsFromTheHeartbeatSent holds the first heartbeat 15 s of the lease's
// clock: the lease counts from when the heartbeat was sent, not answered.
func TestLeaseCountsFromTheHeartbeatSent(t *testing.T) {
	clock := newFakeClock()
	cfg := Config{SessionTimeout: 30 * time.Second, RebalanceTimeout: 30 * time.Second, HeartbeatInterval: 10 * time.Second}
	h, c := newFakeGroup(t, cfg, twelve)
	h.clock = clock.Now
	start := clock.Now()
	var once sync.Once
	c.ControlKey(int16(kmsg.Heartbeat), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		once.Do(func() { clock.Advance(15 * time.Second) })
		return nil, nil, false
	})
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if n.m.Status().Heartbeat.IsZero() {
			return errors.New("no heartbeat accepted yet")
		}
		return nil
	})
	if st := n.m.Status(); !st.Heartbeat.Equal(start) || !st.Lease {
		t.Fatalf("after the first heartbeat: %+v, want the heartbeat at %v and the lease", st, start)
	}
	clock.Advance(5*time.Second + time.Millisecond) // 20 s and 1 ms since it was sent
	if n.m.Lease() {
		t.Errorf("lease held %v after the last heartbeat was sent (term %v)", clock.Now().Sub(start), n.m.leaseTerm())
	}
	if st := n.m.Status(); st.State != StateStable || st.Lease {
		t.Errorf("status: %+v", st)
	}
}

func TestLease(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name      string
		held      bool
		heartbeat time.Time
		elapsed   time.Duration
		want      bool
	}{
		{"fresh heartbeat", true, t0, 6 * time.Second, true},
		{"just within two thirds of the session", true, t0, 20*time.Second - time.Nanosecond, true},
		{"two thirds of the session", true, t0, 20 * time.Second, false},
		{"no heartbeat accepted yet", true, time.Time{}, 0, false},
		{"no generation held", false, t0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Config{Group: "g", SessionTimeout: 30 * time.Second}, nil, discard())
			c := &fakeClock{t: t0}
			c.Advance(tt.elapsed)
			m.now = c.Now
			m.s.held, m.s.heartbeat = tt.held, tt.heartbeat
			if got := m.Lease(); got != tt.want {
				t.Errorf("Lease = %v, want %v", got, tt.want)
			}
			// LeaseUntil, which produce requests carry as their deadline,
			// says the same by the same clock.
			if until := m.LeaseUntil(); c.Now().Before(until) != tt.want {
				t.Errorf("LeaseUntil = %v at %v, want the lease %v", until, c.Now(), tt.want)
			}
		})
	}
}

// TestRunLeavesWhenCancelled: Run sends a LeaveGroup with its member id and returns nil,
// and the member owns nothing afterwards.
func TestRunLeavesWhenCancelled(t *testing.T) {
	h, c := newFakeGroup(t, fakeTimeouts, twelve)
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	_, id, _ := n.m.Generation()
	left := make(chan string, 1)
	c.ControlKey(int16(kmsg.LeaveGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		l := req.(*kmsg.LeaveGroupRequest)
		for _, m := range l.Members {
			left <- m.MemberID
		}
		if len(l.Members) == 0 {
			left <- l.MemberID
		}
		return nil, nil, false
	})
	h.stop("a")
	select {
	case got := <-left:
		if got != id {
			t.Errorf("LeaveGroup for %q, want %q", got, id)
		}
	default:
		t.Error("no LeaveGroup before Run returned")
	}
	if _, _, ok := n.m.Generation(); ok || n.m.Lease() {
		t.Error("a generation or the lease after Run returned")
	}
}

// fakeClock is a lease clock the test moves; it keeps Go's monotonic reading, so
// differences between its times are monotonic too.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestGrantOfAnEarlierMembershipHasNoLease: the lease of a grant (a mirror's
// fencing token) holds only while the member holds that very membership and
// generation. After the member lost its membership and joined again as a
// new member, which has a lease of its own, a grant of the old membership
// has none: a mirror started under it, still stopping, must not write
// again (the path 2: it resent and committed its open transaction's
// batches under the new generation). A later generation of the same
// membership needs a new grant too, which the daemon gives the mirrors it
// keeps.
func TestGrantOfAnEarlierMembershipHasNoLease(t *testing.T) {
	h, c := newFakeGroup(t, fakeTimeouts, twelve)
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	grantOf := func() Grant {
		st := n.m.Status()
		return Grant{Generation: st.Generation, MemberID: st.MemberID, Slot: st.Slot}
	}
	old := grantOf()
	if old.Slot != 0 {
		t.Errorf("a member alone has slot %d, want 0", old.Slot)
	}
	if n.m.LeaseUntilOf(old).IsZero() {
		t.Fatal("the member's own grant has no lease")
	}

	n.m.Rejoin()
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if g := grantOf(); g.Generation == old.Generation || n.m.Status().State != StateStable {
			return fmt.Errorf("still in generation %d", g.Generation)
		}
		return nil
	})
	if !n.m.LeaseUntilOf(old).IsZero() {
		t.Error("a grant of the previous generation still has a lease")
	}
	if next := grantOf(); next.MemberID != old.MemberID || n.m.LeaseUntilOf(next).IsZero() {
		t.Errorf("the new generation's grant %+v (old %+v) has no lease", next, old)
	}

	c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.IllegalGeneration.Code
		return resp, nil, true
	})
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if g := grantOf(); g.MemberID == old.MemberID || n.m.Status().State != StateStable || n.m.LeaseUntil().IsZero() {
			return fmt.Errorf("not rejoined as a new member with a lease yet (%+v)", g)
		}
		return nil
	})
	if !n.m.LeaseUntilOf(old).IsZero() {
		t.Error("a grant of the lost membership has a lease again once the member rejoined")
	}
}

// TestLeaderReportsMembersOfOtherSettings: members that run another config
// of the flow (another topic list, policy or mode) are named in an error
// by the leader, which cannot otherwise tell that the work it assigns them
// is work they cannot do.
func TestLeaderReportsMembersOfOtherSettings(t *testing.T) {
	var logs bytes.Buffer
	m := New(Config{Group: "g", NodeID: "n1", Settings: "aaaa"}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	m.compareSettings([]Claim{{MemberID: "m1", Node: "n1", Settings: "aaaa"}, {MemberID: "m2", Node: "n2", Settings: "aaaa"}})
	if logs.Len() != 0 {
		t.Fatalf("members of the same settings reported: %s", logs.String())
	}
	m.compareSettings([]Claim{{MemberID: "m1", Node: "n1", Settings: "aaaa"}, {MemberID: "m3", Node: "n3", Settings: "bbbb"}})
	if got := logs.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, `n3 (member m3, settings \"bbbb\")`) {
		t.Errorf("the member of other settings is not named in an error: %s", got)
	}
}

// silenceTimeouts give the silence tests a session far longer than they run: kfake
// evicts nobody, while the lease's clock, which the tests move, passes a session.
var silenceTimeouts = Config{SessionTimeout: 30 * time.Second, RebalanceTimeout: 30 * time.Second, HeartbeatInterval: 100 * time.Millisecond}

// silentMember starts member "a" alone on kfake with the lease's clock of the returned
// fake clock, and waits until it holds the work.
func silentMember(t *testing.T) (*harness, *node, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	h, _ := newFakeGroup(t, silenceTimeouts, twelve)
	h.clock = clock.Now
	n := h.start("a")
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a") })
	return h, n, clock
}

// TestSilenceLongerThanASessionLosesTheMembership: a member that had no heartbeat
// accepted for a whole session timeout (its process stopped, its coordinator
// unreachable) counts its membership as lost, whatever the coordinator answers its next
// heartbeat: the coordinator may have evicted it and given its work away. The soak
// (seed 1796491074656121718) saw Kafka accept a heartbeat of an evicted member's old
// generation right after the coordinator restarted; the member's lease came back for
// 0.7 s and it wrote a partition another node owned. Here kfake, whose sessions run on
// the real clock, still holds the member while the lease's clock moves past a session.
func TestSilenceLongerThanASessionLosesTheMembership(t *testing.T) {
	h, n, clock := silentMember(t)
	gen, memberID, _ := n.m.Generation()
	old := Grant{Generation: gen, MemberID: memberID}

	resume := h.stallHeartbeats("a")
	clock.Advance(silenceTimeouts.SessionTimeout + time.Second)
	resume()
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if until := n.m.LeaseUntilOf(old); until.After(clock.Now()) {
			t.Fatalf("the lease of generation %d came back until %v, %v after a silence of more than a session", gen, until, until.Sub(clock.Now()))
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.lost["a"] != 1 {
			return fmt.Errorf("memberships lost: %v, want a once", h.lost)
		}
		return nil
	})
	if logs := h.logs.String(); !strings.Contains(logs, "no answer from the coordinator for") {
		t.Errorf("the members' logs do not say why the membership was given up:\n%s", logs)
	}
}

// TestSilenceSeenAtARejoinLosesTheMembership: the member that comes back from a silence
// of more than a session may rejoin before its heartbeats report the loss (a Rejoin
// request, a work retry): it must give its membership up all the same, not join again
// under its old member id with its old units.
func TestSilenceSeenAtARejoinLosesTheMembership(t *testing.T) {
	h, n, clock := silentMember(t)
	_, memberID, _ := n.m.Generation()

	h.stallHeartbeats("a") // never resumed: the rejoin stops the heartbeats
	kafkatest.Eventually(t, convergeTimeout, func() error {
		if !h.parked("a") {
			return errors.New("the heartbeat goroutine is not stalled yet")
		}
		return nil
	})
	clock.Advance(silenceTimeouts.SessionTimeout + time.Second)
	n.m.Rejoin()
	kafkatest.Eventually(t, convergeTimeout, func() error {
		h.mu.Lock()
		lost := h.lost["a"]
		h.mu.Unlock()
		if lost != 1 {
			return fmt.Errorf("memberships lost: %d, want 1", lost)
		}
		if _, id, ok := n.m.Generation(); !ok || id == memberID {
			return fmt.Errorf("a holds member id %q (ok %v), want a new one", id, ok)
		}
		return nil
	})
}
