//go:build integration

package coord

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 1, &env)) }

// realTimeouts are the shortest a broker with Kafka's default group.min.session.timeout.ms
// (6 s) accepts.
var realTimeouts = Config{SessionTimeout: 6 * time.Second, RebalanceTimeout: 20 * time.Second, HeartbeatInterval: 500 * time.Millisecond}

// TestRealMembersConvergeAndTakeOver: three members on Apache Kafka settle into a balanced
// group with one control holder, and when the control holder leaves the two others take
// over its units and control.
func TestRealMembersConvergeAndTakeOver(t *testing.T) {
	c := env.Clusters[0]
	h := newHarness(t, realTimeouts, twelve, func(string) *kgo.Client { return c.Client(t) })
	testConvergeAndTakeOver(t, h)
}

// TestRealStalledMemberIsEvictedAndFenced cuts the control holder off the broker: its
// lease lapses before Apache Kafka evicts it after its session timeout and the others get
// its work, and Kafka refuses an OffsetCommit with its old generation.
func TestRealStalledMemberIsEvictedAndFenced(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "commits")
	c.CreateTopic(t, topic, 1, nil)
	var net cutNetwork
	h := newHarness(t, realTimeouts, twelve, net.clients(func(opts ...kgo.Opt) *kgo.Client { return c.Client(t, opts...) }))
	testStalledMember(t, h, committer(t, c.Client(t), h.group, topic), net.cut, net.heal)
}

// TestRealStalledHeartbeatsAreEvictedAndFenced stalls the control holder's heartbeat
// goroutine, as a stopped process: the same as a cut network.
func TestRealStalledHeartbeatsAreEvictedAndFenced(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "commits")
	c.CreateTopic(t, topic, 1, nil)
	h := newHarness(t, realTimeouts, twelve, func(string) *kgo.Client { return c.Client(t) })
	var resume func()
	testStalledMember(t, h, committer(t, c.Client(t), h.group, topic),
		func(node, _ string) { resume = h.stallHeartbeats(node) },
		func() { resume() })
}

// TestRealEvictedMemberStaysFencedAcrossACoordinatorRestart is the soak's seed
// 1796491074656121718 on Apache Kafka: a member stalled past its session timeout is
// evicted and the others share its units in a new generation; then the coordinator (the
// only broker) is killed and, while it is down for longer than a session, the member
// resumes. It must never hold a lease in its old generation again (the soak saw Kafka
// accept its old generation's heartbeat after the restart). The others, silent as long,
// count their memberships as lost too, and all three share the work again.
func TestRealEvictedMemberStaysFencedAcrossACoordinatorRestart(t *testing.T) {
	c := env.Clusters[0]
	h := newHarness(t, realTimeouts, twelve, func(string) *kgo.Client { return c.Client(t) })
	for _, n := range []string{"a", "b", "c"} {
		h.start(n)
	}
	kafkatest.Eventually(t, convergeTimeout, func() error { return h.converged("a", "b", "c") })
	victim, rest := "a", []string{"b", "c"}
	if h.controlHolder() == victim {
		victim, rest = "b", []string{"a", "c"}
	}
	v := h.node(victim)
	gen, memberID, _ := v.m.Generation()
	old := Grant{Generation: gen, MemberID: memberID}
	resume := h.stallHeartbeats(victim)
	// Killed the moment the others hold the generation without it, as in the soak
	// (within half a second).
	kafkatest.Eventually(t, convergeTimeout, func() error {
		for _, n := range rest {
			if g, _, _ := h.node(n).m.Generation(); g <= gen {
				return fmt.Errorf("%s is in generation %d", n, g)
			}
		}
		return nil
	})
	c.StopBroker(t, true)
	resume()
	// The coordinator stays down for longer than a session, a fault's duration.
	down := time.NewTimer(realTimeouts.SessionTimeout + 2*time.Second)
	<-down.C
	c.StartBroker(t)

	kafkatest.Eventually(t, convergeTimeout, func() error {
		if until := v.m.LeaseUntilOf(old); until.After(time.Now()) {
			t.Fatalf("%s holds a lease in its old generation %d until %v, after the others took its units", victim, gen, until)
		}
		return h.converged("a", "b", "c")
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost[victim] != 1 {
		t.Errorf("memberships lost: %v, want %s once", h.lost, victim)
	}
	t.Logf("memberships lost: %v", h.lost)
}
