package mirror

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
// connection per client and broker), which of them has a fetch in flight
// to each source broker, and the fetch session of each (session.go).
type fetchConns struct {
	clients  []*kgo.Client
	own      bool // the clients were made here: close closes them
	busy     map[int32][]bool
	sessions map[int32][]*fetchSession
}

// newFetchConns makes the fetch clients with newClient (ownClients); without
// them it uses the source client alone: one fetch per broker.
func newFetchConns(source *kgo.Client, newClient NewClient, log *slog.Logger) *fetchConns {
	c := &fetchConns{clients: []*kgo.Client{source}, busy: map[int32][]bool{}, sessions: map[int32][]*fetchSession{}}
	if clients := ownClients(source, newClient, fetchConnsPerBroker, nil, "fetch clients", "keeping one fetch in flight per source broker", log); clients != nil {
		c.clients, c.own = clients, true
	}
	return c
}

// take returns a connection to broker with no fetch in flight and marks it
// busy, or -1 when every one is busy.
func (c *fetchConns) take(broker int32) int {
	busy := c.busy[broker]
	if busy == nil {
		busy = make([]bool, len(c.clients))
		c.busy[broker] = busy
	}
	for i, b := range busy {
		if !b {
			busy[i] = true
			return i
		}
	}
	return -1
}

// idle reports whether broker has a connection with no fetch in flight.
func (c *fetchConns) idle(broker int32) bool {
	busy := c.busy[broker]
	for _, b := range busy {
		if !b {
			return true
		}
	}
	return busy == nil
}

// inFlight reports whether broker has a fetch in flight.
func (c *fetchConns) inFlight(broker int32) bool { return slices.Contains(c.busy[broker], true) }

// release marks a connection's fetch answered.
func (c *fetchConns) release(broker int32, conn int) {
	if busy := c.busy[broker]; conn < len(busy) {
		busy[conn] = false
	}
}

func (c *fetchConns) client(conn int) *kgo.Client { return c.clients[conn] }

// session is the fetch session of a connection to broker.
func (c *fetchConns) session(broker int32, conn int) *fetchSession {
	ss := c.sessions[broker]
	if ss == nil {
		ss = make([]*fetchSession, len(c.clients))
		c.sessions[broker] = ss
	}
	if ss[conn] == nil {
		ss[conn] = &fetchSession{}
	}
	return ss[conn]
}

func (c *fetchConns) close() {
	if c.own {
		for _, cl := range c.clients {
			cl.Close()
		}
	}
}
