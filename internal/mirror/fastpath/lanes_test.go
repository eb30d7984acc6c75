package fastpath

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"strait/internal/kafkatest"
)

// closingMechanism is a SASL mechanism that, like the Kerberos one,
// cannot log in once closed (Kerberos destroys its credentials).
type closingMechanism struct {
	sasl.Mechanism
	closed atomic.Bool
}

func (m *closingMechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	if m.closed.Load() {
		return nil, nil, context.Canceled
	}
	return m.Mechanism.Authenticate(ctx, host)
}

func (m *closingMechanism) Close() { m.closed.Store(true) }

// TestLanesLogInWithTheirOwnMechanism: the fast path's produce lanes are
// clients of their own, closed at the end of every forwarder run (an
// exactly-once abort, a rebalance). They were built from the target
// client's options, so they shared its SASL mechanism, and closing them
// closed it: with Kerberos no new connection of the flow could log in
// after the first abort or rebalance (the path 1). Each lane client
// now gets a mechanism of its own from the flow's client factory, and the
// target client can still log in after the lanes closed.
func TestLanesLogInWithTheirOwnMechanism(t *testing.T) {
	c := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "u", "p"))
	mech := func() *closingMechanism {
		return &closingMechanism{Mechanism: plain.Auth{User: "u", Pass: "p"}.AsMechanism()}
	}
	targetMech := mech()
	target := newClient(t, c, kgo.SASL(targetMech))
	var made []*closingMechanism
	factory := func(opts ...kgo.Opt) (*kgo.Client, error) {
		m := mech()
		made = append(made, m)
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(m)}, opts...)...)
	}
	l := newLanes(target, factory, slog.New(slog.DiscardHandler))
	if !l.ordered || len(made) != produceConns {
		t.Fatalf("lanes: ordered %v, %d clients made by the factory; want ordered and %d", l.ordered, len(made), produceConns)
	}
	l.close()
	if targetMech.closed.Load() {
		t.Fatal("closing the lanes closed the target client's SASL mechanism")
	}
	for i, m := range made {
		if !m.closed.Load() {
			t.Errorf("lane client %d's mechanism is still open after the lanes closed", i)
		}
	}
	target.ForceMetadataRefresh()
	if err := target.Ping(t.Context()); err != nil {
		t.Fatalf("the target client cannot log in after the lanes closed: %v", err)
	}
}
