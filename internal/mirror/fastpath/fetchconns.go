package fastpath

import (
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchConnsPerBroker is how many fetches the fast path keeps in flight to
// one source broker, each on a connection of its own and for partitions no
// other of them holds. One fetch at a time moves at most one response per
// round trip: over a 150 ms link that capped a copy near 20 MB/s, where the
// link carried 145. Pipelining them on one connection would not do: a
// broker serves a connection's requests one at a time, so a fetch that
// long-polls partitions without data would hold back the fetches behind it.
const fetchConnsPerBroker = 4

// fetchConns are the fast path's fetch clients (kgo opens one fetch
// connection per client and broker) and, per source broker, the state of
// each connection to it.
type fetchConns struct {
	clients []*kgo.Client
	own     bool // the clients were made here: close closes them
	brokers map[int32][]fetchConn
}

// fetchConn is one fetch connection to one source broker: whether a fetch
// is in flight on it, and its fetch session (session.go).
type fetchConn struct {
	busy    bool
	session fetchSession
}

// newFetchConns makes the fetch clients with newClient (ownClients); without
// them it uses the source client alone: one fetch per broker.
func newFetchConns(source *kgo.Client, newClient NewClient, log *slog.Logger) *fetchConns {
	c := &fetchConns{clients: []*kgo.Client{source}, brokers: map[int32][]fetchConn{}}
	if clients := ownClients(source, newClient, fetchConnsPerBroker, nil, "fetch clients", "keeping one fetch in flight per source broker", log); clients != nil {
		c.clients, c.own = clients, true
	}
	return c
}

// of returns the connections to broker, made on first use (never resized,
// so a pointer into it stays valid).
func (c *fetchConns) of(broker int32) []fetchConn {
	conns := c.brokers[broker]
	if conns == nil {
		conns = make([]fetchConn, len(c.clients))
		c.brokers[broker] = conns
	}
	return conns
}

// take returns a connection to broker with no fetch in flight and marks it
// busy, or -1 when every one is busy.
func (c *fetchConns) take(broker int32) int {
	conns := c.of(broker)
	for i := range conns {
		if !conns[i].busy {
			conns[i].busy = true
			return i
		}
	}
	return -1
}

// idle reports whether broker has a connection with no fetch in flight.
func (c *fetchConns) idle(broker int32) bool { return c.idleCount(broker) > 0 }

// idleCount is how many connections to broker have no fetch in flight
// (every connection of a broker never fetched from is idle).
func (c *fetchConns) idleCount(broker int32) int {
	conns, ok := c.brokers[broker]
	if !ok {
		return len(c.clients)
	}
	n := 0
	for _, fc := range conns {
		if !fc.busy {
			n++
		}
	}
	return n
}

// inFlight reports whether broker has a fetch in flight.
func (c *fetchConns) inFlight(broker int32) bool {
	return slices.ContainsFunc(c.brokers[broker], func(fc fetchConn) bool { return fc.busy })
}

// release marks a connection's fetch answered.
func (c *fetchConns) release(broker int32, conn int) {
	if conns := c.brokers[broker]; conn < len(conns) {
		conns[conn].busy = false
	}
}

func (c *fetchConns) client(conn int) *kgo.Client { return c.clients[conn] }

// session is the fetch session of a connection to broker.
func (c *fetchConns) session(broker int32, conn int) *fetchSession {
	return &c.of(broker)[conn].session
}

func (c *fetchConns) close() {
	if c.own {
		for _, cl := range c.clients {
			cl.Close()
		}
	}
}
