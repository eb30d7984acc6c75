package mirror

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lanes write the fast path's produce requests to each target broker in
// the order they were made. A partition's pipelined batches must reach the
// broker in sequence order, or every one after a swap fails out of
// sequence and is sent again. franz-go's Broker.Request blocks until the
// response, so each request runs in its own goroutine, and goroutines do
// not start in the order they were created (the newest often runs first).
// A lane, one goroutine per broker, starts a request's goroutine and waits
// until the client has written it (a write hook on a client of the fast
// path's own, which writes nothing else) before it starts the next:
// franz-go writes a broker's requests in the order they are issued.
type lanes struct {
	cl       *kgo.Client
	own      bool // cl was made here: close closes it
	ordered  bool // the write hook is in place, so pipelining is safe
	writes   *produceWrites
	byBroker map[int32]chan laneReq
	wg       sync.WaitGroup
}

type laneReq struct {
	ctx  context.Context
	req  *kmsg.ProduceRequest
	done func(kmsg.Response, error)
}

// newLanes makes the fast path's produce client from the target client's
// options. If that fails, the lanes use the target client without the
// hook, and partitions keep one batch in flight (sendLimit).
func newLanes(target *kgo.Client, log *slog.Logger) *lanes {
	l := &lanes{cl: target, byBroker: map[int32]chan laneReq{}}
	if target == nil {
		return l
	}
	w := &produceWrites{n: map[int32]uint64{}, wake: map[int32]chan struct{}{}}
	cl, err := kgo.NewClient(append(target.Opts(), kgo.WithHooks(w))...)
	if err != nil {
		log.Warn("fast path: cannot make its own produce client; keeping one batch in flight per partition", "err", err)
		return l
	}
	l.cl, l.own, l.ordered, l.writes = cl, true, true, w
	return l
}

// send issues req to broker after every request sent to it before; done
// gets the response in the request's own goroutine. The caller keeps at
// most maxProduceInflight requests per broker outstanding, so send never
// blocks.
func (l *lanes) send(ctx context.Context, broker int32, req *kmsg.ProduceRequest, done func(kmsg.Response, error)) {
	ch := l.byBroker[broker]
	if ch == nil {
		ch = make(chan laneReq, maxProduceInflight)
		l.byBroker[broker] = ch
		var wake chan struct{}
		if l.ordered {
			wake = l.writes.register(broker)
		}
		l.wg.Add(1)
		go l.run(broker, ch, wake)
	}
	ch <- laneReq{ctx, req, done}
}

func (l *lanes) run(broker int32, reqs chan laneReq, wake chan struct{}) {
	defer l.wg.Done()
	for r := range reqs {
		var before uint64
		if l.ordered {
			before = l.writes.count(broker)
		}
		finished := make(chan struct{})
		go func() {
			resp, err := l.cl.Broker(int(broker)).Request(r.ctx, r.req)
			close(finished)
			r.done(resp, err)
		}()
		if l.ordered {
			l.awaitWrite(broker, before, wake, finished)
		}
	}
}

// awaitWrite returns once the broker's write count passes before, or the
// request finished without being written.
func (l *lanes) awaitWrite(broker int32, before uint64, wake, finished chan struct{}) {
	for l.writes.count(broker) == before {
		select {
		case <-wake:
		case <-finished:
			return
		}
	}
}

// close ends the lanes once no request is outstanding.
func (l *lanes) close() {
	for _, ch := range l.byBroker {
		close(ch)
	}
	l.wg.Wait()
	if l.own {
		l.cl.Close()
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
