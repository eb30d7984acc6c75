package fastpath

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// lanes write the fast path's produce requests to each target broker in
// the order they were made, over produceConns connections per broker: a
// broker serves one connection's requests one at a time, so a single
// connection would put every append of a target broker on one of its
// request threads (MM2, with one producer per task, has as many
// connections as tasks). A partition keeps one connection while it has
// batches in flight (laneOf): its pipelined batches must reach the
// broker in sequence order, or every one after a swap fails out of
// sequence and is sent again. franz-go's Broker.Request blocks until the
// response, so each request runs in its own goroutine, and goroutines do
// not start in the order they were created (the newest often runs first).
// A lane, one goroutine per broker, starts a request's goroutine and waits
// until the client has written it (a write hook on a client of the fast
// path's own, which writes nothing else) before it starts the next:
// franz-go writes a broker's requests in the order they are issued.
type lanes struct {
	clients []*kgo.Client // one per connection index
	writes  []*produceWrites
	own     bool // the clients were made here: close closes them
	ordered bool // the write hooks are in place, so pipelining is safe
	byLane  map[laneKey]chan laneReq
	wg      sync.WaitGroup
}

// laneKey is one produce connection: a target broker and a client.
type laneKey struct {
	broker int32
	conn   int
}

// produceConns is the number of produce connections per target broker.
const produceConns = 4

type laneReq struct {
	ctx  context.Context
	req  *kmsg.ProduceRequest
	done func(resp kmsg.Response, err error, written bool)
}

// NewClient makes a client with the flow's target producer settings plus
// opts, with a SASL login of its own: a mechanism is closed with its
// client, and the Kerberos one destroys its credentials then, so a client
// closed before the others must not share theirs.
type NewClient func(opts ...kgo.Opt) (*kgo.Client, error)

// newLanes makes the fast path's produce clients with newClient. If that
// fails, or there is no newClient and the target logs in with SASL (its
// options would share the target client's mechanism), the lanes use the
// target client without the hook, and partitions keep one batch in flight
// (sendLimit).
func newLanes(target *kgo.Client, newClient NewClient, log *slog.Logger) *lanes {
	l := &lanes{clients: []*kgo.Client{target}, byLane: map[laneKey]chan laneReq{}}
	writes := make([]*produceWrites, produceConns)
	clients := ownClients(target, newClient, produceConns, func(i int) kgo.Opt {
		writes[i] = &produceWrites{n: map[int32]uint64{}, wake: map[int32]chan struct{}{}}
		return kgo.WithHooks(writes[i])
	}, "produce clients", "keeping one batch in flight per partition", log)
	if clients != nil {
		l.clients, l.writes, l.own, l.ordered = clients, writes, true, true
	}
	return l
}

// ownClients makes n clients with newClient, each with opt(i), for the
// fast path's own connections; nil when base is nil, when making one
// fails, or when there is no newClient and base logs in with SASL: a
// client made from base's options would share its mechanism, which closing
// one client ends (the Kerberos one destroys its credentials). Without
// newClient the clients get base's options. what and fallback name the
// clients and what the caller does without them, for the warning.
func ownClients(base *kgo.Client, newClient NewClient, n int, opt func(i int) kgo.Opt, what, fallback string, log *slog.Logger) []*kgo.Client {
	if base == nil {
		return nil
	}
	if newClient == nil {
		if mechs, _ := base.OptValue(kgo.SASL).([]sasl.Mechanism); len(mechs) > 0 {
			log.Warn("fast path: no factory for " + what + " with a SASL login of their own; " + fallback)
			return nil
		}
		newClient = func(opts ...kgo.Opt) (*kgo.Client, error) { return kgo.NewClient(append(base.Opts(), opts...)...) }
	}
	var clients []*kgo.Client
	for i := range n {
		var opts []kgo.Opt
		if opt != nil {
			opts = append(opts, opt(i))
		}
		cl, err := newClient(opts...)
		if err != nil {
			log.Warn("fast path: cannot make its own "+what+"; "+fallback, "err", err)
			for _, c := range clients {
				c.Close()
			}
			return nil
		}
		clients = append(clients, cl)
	}
	return clients
}

// conns is how many connections per broker the lanes use.
func (l *lanes) conns() int { return len(l.clients) }

// send issues req on lane after every request sent on it before; done
// gets the response in the request's own goroutine, and whether the
// request was written to the broker (when it failed without being
// written, its fate is known: nothing of it is on the target). The caller
// keeps at most maxProduceInflight requests per lane outstanding, so send
// never blocks.
func (l *lanes) send(ctx context.Context, lane laneKey, req *kmsg.ProduceRequest, done func(resp kmsg.Response, err error, written bool)) {
	ch := l.byLane[lane]
	if ch == nil {
		ch = make(chan laneReq, maxProduceInflight)
		l.byLane[lane] = ch
		var wake chan struct{}
		if l.ordered {
			wake = l.writes[lane.conn].register(lane.broker)
		}
		l.wg.Add(1)
		go l.run(lane, ch, wake)
	}
	ch <- laneReq{ctx, req, done}
}

func (l *lanes) run(lane laneKey, reqs chan laneReq, wake chan struct{}) {
	defer l.wg.Done()
	cl := l.clients[lane.conn]
	for r := range reqs {
		if deadline, ok := r.ctx.Deadline(); ok && !time.Now().Before(deadline) {
			// The node's lease ended while the request waited here (a
			// frozen process resumed): another node may own the partitions
			// now. franz-go checks the context once more before it writes.
			r.done(nil, errLeaseLapsed, false)
			continue
		}
		var before uint64
		if l.ordered {
			before = l.writes[lane.conn].count(lane.broker)
		}
		finished := make(chan struct{})
		go func() {
			resp, err := cl.Broker(int(lane.broker)).Request(r.ctx, r.req)
			// The lane starts the next request only once this one was
			// written or finished, so a write counted since is this one.
			written := !l.ordered || l.writes[lane.conn].count(lane.broker) > before
			close(finished)
			r.done(resp, err, written)
		}()
		if l.ordered {
			l.writes[lane.conn].awaitWrite(lane.broker, before, wake, finished)
		}
	}
}

// awaitWrite returns once the broker's write count passes before, or the
// request finished without being written.
func (w *produceWrites) awaitWrite(broker int32, before uint64, wake, finished chan struct{}) {
	for w.count(broker) == before {
		select {
		case <-wake:
		case <-finished:
			return
		}
	}
}

// close ends the lanes once no request is outstanding.
func (l *lanes) close() {
	for _, ch := range l.byLane {
		close(ch)
	}
	l.wg.Wait()
	if l.own {
		for _, cl := range l.clients {
			cl.Close()
		}
	}
}

// produceWrites counts the produce requests written to each broker.
type produceWrites struct {
	mu   sync.Mutex
	n    map[int32]uint64
	wake map[int32]chan struct{}
}

var _ kgo.HookBrokerWrite = (*produceWrites)(nil)

func (w *produceWrites) register(broker int32) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{}, 1)
	w.wake[broker] = ch
	return ch
}

func (w *produceWrites) count(broker int32) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[broker]
}

// OnBrokerWrite runs on the client's goroutines: it must never block.
func (w *produceWrites) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key != 0 { // Produce
		return
	}
	w.mu.Lock()
	w.n[meta.NodeID]++
	ch := w.wake[meta.NodeID]
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// errLeaseLapsed fails a produce request that waited in its lane until the
// node's lease lapsed: it is never written (see lanes.run).
var errLeaseLapsed = errors.New("the node's lease in the flow's group lapsed before the request was written")
