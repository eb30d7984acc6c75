package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// linkSpec is the network between the tools and cluster A in a distance cell: a round
// trip, half of it added on each direction, and optionally a bandwidth cap.
type linkSpec struct {
	RTT duration `json:"rtt"`
	// MBps caps each direction at this many MB/s (10^6 bytes) over every connection
	// to A together, as one shared link would; 0 is uncapped.
	MBps float64 `json:"cap_mb_per_s,omitempty"`
}

// oneWay is the latency added on each direction.
func (l linkSpec) oneWay() time.Duration { return l.RTT.Duration / 2 }

// text is the link in a cell's name: "RTT 150 ms, uncapped" or "RTT 150 ms, 100 MB/s cap".
func (l linkSpec) text() string {
	rtt := fmt.Sprintf("RTT %d ms", l.RTT.Milliseconds())
	if l.MBps > 0 {
		return fmt.Sprintf("%s, %g MB/s cap", rtt, l.MBps)
	}
	return rtt + ", uncapped"
}

// linkToxicType is the toxic that meters every byte across the link and, with a rate,
// caps the link: toxiproxy's own bandwidth toxic caps each connection on its own, so
// MM2's eight task consumers would get eight times the cap of one Strait connection.
const linkToxicType = "bench_link"

// linkToxic is a toxiproxy toxic shared by every connection of the proxy in one
// direction (toxiproxy makes one instance per toxic and runs its Pipe once per
// connection): it counts the bytes that pass and, with Rate above 0, lets them pass at
// Rate bytes per second over all connections together. A chunk leaves when the link has
// carried the chunks booked before it; its timestamp becomes that moment, so the latency
// toxic after it adds the propagation delay on top of the queueing, as on a real link.
type linkToxic struct {
	Rate int64 `json:"rate"` // bytes per second; 0: uncapped

	bytes atomic.Int64
	mu    sync.Mutex
	next  time.Time // when the link has carried every chunk booked so far
}

// linkSlack is how far the link's booking may fall behind the clock: a connection that
// wakes late from its wait does not lose the link's capacity for that time, and an idle
// link lets a burst this long through at once.
const linkSlack = 2 * time.Millisecond

// book reserves n bytes of the link at now and returns when they have crossed it.
func (t *linkToxic) book(n int, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if floor := now.Add(-linkSlack); t.next.Before(floor) {
		t.next = floor
	}
	t.next = t.next.Add(time.Duration(float64(n) / float64(t.Rate) * float64(time.Second)))
	return t.next
}

// Pipe forwards every chunk, counting it, after its turn on the link when capped.
func (t *linkToxic) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			t.bytes.Add(int64(len(c.Data)))
			if t.Rate > 0 {
				done := t.book(len(c.Data), time.Now())
				if wait := time.Until(done); wait > 0 {
					select {
					case <-time.After(wait):
					case <-stub.Interrupt:
						stub.Output <- c // drop nothing
						return
					}
				}
				if done.After(c.Timestamp) {
					c.Timestamp = done
				}
			}
			stub.Output <- c
		}
	}
}

var registerLinkToxic sync.Once

// linkProxy is an in-process toxiproxy in front of broker A's EXTERNAL listener, which
// the broker advertises at the proxy's address: a client that bootstraps from addr()
// reaches A only through the proxy, while the brokers' own traffic and the harness's
// clients of A's PLAINTEXT listener do not pass it (internal/kafkatest does the same for
// the fault tests).
type linkProxy struct {
	p    *toxiproxy.Proxy
	link *linkSpec // the toxics set now; nil: none
}

// newLinkProxy listens on a free loopback port, forwarding nowhere until connect.
func newLinkProxy() (*linkProxy, error) {
	registerLinkToxic.Do(func() {
		zerolog.SetGlobalLevel(zerolog.Disabled) // toxics log through zerolog's global logger
		toxics.Register(linkToxicType, new(linkToxic))
	})
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "a", "127.0.0.1:0", "127.0.0.1:1")
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("starting the link proxy for cluster a: %w", err)
	}
	return &linkProxy{p: p}, nil
}

// addr is the proxy's address: the bootstrap of cluster A across the link.
func (l *linkProxy) addr() string { return l.p.Listen }

// port is the proxy's port, which `kafka.sh start --external a=PORT` makes broker A
// advertise on its EXTERNAL listener.
func (l *linkProxy) port() string { return l.p.Listen[strings.LastIndexByte(l.p.Listen, ':')+1:] }

// connect points the proxy at broker A's external listener (the listener is closed and
// reopened on the same port) and checks that a client bootstrapping from the proxy is
// told to reach the broker at the proxy's address.
func (l *linkProxy) connect(ctx context.Context, upstream string) error {
	if upstream == "" {
		return fmt.Errorf("kafka.sh start printed no external listener for broker a:1")
	}
	if err := l.p.Update(&toxiproxy.Proxy{Listen: l.p.Listen, Upstream: upstream, Enabled: true}); err != nil {
		return fmt.Errorf("link proxy: forwarding to %s: %w", upstream, err)
	}
	cl, err := newClient(l.addr())
	if err != nil {
		return err
	}
	defer cl.Close()
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(mctx)
	if err != nil {
		return fmt.Errorf("link proxy: reading cluster a's metadata through %s: %w", l.addr(), err)
	}
	for _, b := range md.Brokers {
		if got := net.JoinHostPort(b.Host, fmt.Sprint(b.Port)); got != l.addr() {
			return fmt.Errorf("link proxy: broker %d of cluster a advertises %s to clients of %s, not the proxy: they would bypass the link", b.NodeID, got, l.addr())
		}
	}
	return nil
}

// Names of the toxics per direction: upstream is requests to A (produce requests of
// MM2's offset syncs, fetch requests), downstream is A's responses (the records).
var linkStreams = []string{"upstream", "downstream"}

// set replaces the link's toxics: in each direction the meter (and cap), then half the
// round trip of latency.
func (l *linkProxy) set(link linkSpec) error {
	if err := l.clear(); err != nil {
		return err
	}
	rate := int64(link.MBps * 1e6)
	for _, stream := range linkStreams {
		for _, js := range []string{
			fmt.Sprintf(`{"name":"link_%s","type":%q,"stream":%q,"toxicity":1,"attributes":{"rate":%d}}`, stream, linkToxicType, stream, rate),
			fmt.Sprintf(`{"name":"latency_%s","type":"latency","stream":%q,"toxicity":1,"attributes":{"latency":%d,"jitter":0}}`, stream, stream, link.oneWay().Milliseconds()),
		} {
			if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
				return fmt.Errorf("link proxy: adding %s: %w", js, err)
			}
		}
	}
	l.link = &link
	return nil
}

// clear removes every toxic: the proxy forwards at once again.
func (l *linkProxy) clear() error {
	if l.link == nil {
		return nil
	}
	l.link = nil
	var errs []string
	for _, stream := range linkStreams {
		for _, name := range []string{"link_" + stream, "latency_" + stream} {
			if err := l.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				errs = append(errs, fmt.Sprintf("removing %s: %v", name, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("link proxy: %s", strings.Join(errs, "; "))
	}
	return nil
}

// bytesDown is what crossed the link from A so far under the current toxics (0 without).
func (l *linkProxy) bytesDown() int64 {
	w := l.p.Toxics.GetToxic("link_downstream")
	if w == nil {
		return 0
	}
	if t, ok := w.Toxic.(*linkToxic); ok {
		return t.bytes.Load()
	}
	return 0
}

// close stops the proxy, closing every connection through it.
func (l *linkProxy) close() {
	if l != nil {
		l.p.Stop()
	}
}

// Fetch sizes of the link-limit probe: what one franz-go consumer has in flight.
const (
	probePartitionFetch = 4 << 20
	probeFetchMax       = 64 << 20
)

// linkLimit is the link's own limit for a distance cell: one franz-go consumer alone
// reading the cell's backlog from the start across the proxy, 4 MiB per partition and
// 64 MiB per fetch, with the cell's toxics set.
func (r *runner) linkLimit(ctx context.Context, ts topicSet, ends []int64, link linkSpec) ([]limitResult, error) {
	load := loadAvg()
	r.log.Info("link limit: consume-only across the proxy", "cluster", "a", "topic", ts.names[0], "link", link.text())
	down0 := r.link.bytesDown()
	cr, err := consumeAll(ctx, r.link.addr(), ts.names[0], ends, kgo.FetchMaxPartitionBytes(probePartitionFetch), kgo.FetchMaxBytes(probeFetchMax))
	if err != nil {
		return nil, fmt.Errorf("consuming %q across the link: %w", ts.names[0], err)
	}
	if down := r.link.bytesDown() - down0; down < cr.PayloadBytes {
		return nil, fmt.Errorf("the link-limit probe read %d bytes of payload but only %d bytes crossed the proxy: it bypassed the link", cr.PayloadBytes, down)
	}
	l := newLimit(limitLink, "a via proxy", ts.names[0], cr, load)
	r.log.Info("link limit", "steady_mb_per_s", l.SteadyMBPerSec, "first_record_s", l.FirstRecordSeconds, "seconds", l.Seconds)
	return []limitResult{l}, nil
}

// limitLink names the link-limit probe among a cell's limits.
const limitLink = "consume-only across the link"
