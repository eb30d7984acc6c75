//go:build integration

package coord

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
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
	var mu sync.Mutex
	dialers := map[string]*cutDialer{}
	h := newHarness(t, realTimeouts, twelve, func(node string) *kgo.Client {
		d := &cutDialer{}
		mu.Lock()
		dialers[node] = d
		mu.Unlock()
		return c.Client(t, kgo.Dialer(d.DialContext))
	})
	var victim *cutDialer
	testStalledMember(t, h, committer(t, c.Client(t), h.group, topic),
		func(node, _ string) {
			mu.Lock()
			victim = dialers[node]
			mu.Unlock()
			victim.setCut(true)
		},
		func() { victim.setCut(false) })
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
