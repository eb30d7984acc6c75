package kafkatest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// Direction says which way a proxy fault applies.
type Direction int

const (
	// Both directions.
	Both Direction = iota
	// Upstream is client to broker: requests, such as produce requests with their records.
	Upstream
	// Downstream is broker to client: responses, such as fetch responses with records.
	Downstream
)

func (d Direction) streams() []string {
	switch d {
	case Upstream:
		return []string{"upstream"}
	case Downstream:
		return []string{"downstream"}
	default:
		return []string{"upstream", "downstream"}
	}
}

// Proxy is a TCP proxy (toxiproxy, in the test process) in front of one broker's EXTERNAL
// listener. The broker advertises the proxy's address on that listener, so a client that
// bootstraps from Cluster.ProxyBootstrap reaches this broker only through the proxy, while
// the broker's own replication and controller traffic, and every client of Broker.Addr, are
// unaffected. A fault lasts until Heal, or the end of the test that set it.
//
// Faults set on one proxy apply to its existing connections and to new ones, except Reset,
// which acts once on the connections open at the call.
type Proxy struct {
	name string

	mu      sync.Mutex
	p       *toxiproxy.Proxy
	toxics  map[string]bool // names of the toxics Heal removes
	refused bool
	closed  bool
}

// lingerToxic is a reset_peer toxic that never fires (toxicity 0). Toxiproxy sets SO_LINGER
// to 0 on both sockets of every connection opened while a reset_peer toxic is present, so
// closing them (Reset, Refuse) sends an RST rather than a FIN: a real connection reset.
const lingerToxic = `{"name":"linger0","type":"reset_peer","stream":"upstream","toxicity":0,"attributes":{"timeout":0}}`

// blackholeToxic drops every chunk and keeps the connection open. Toxiproxy's own timeout
// toxic does the same, but removing it from a live connection closes its stub without
// relinking the one before, which then blocks forever on its next chunk: a goroutine leak.
// Removing this one takes toxiproxy's ordinary path, which relinks.
type blackholeToxic struct{}

func (blackholeToxic) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
		}
	}
}

var setUpToxiproxy sync.Once

// newProxy starts a proxy on a free loopback port, forwarding nowhere until setUpstream.
func newProxy(server *toxiproxy.ApiServer, name string) (*Proxy, error) {
	setUpToxiproxy.Do(func() {
		// Some toxics log through zerolog's global logger: keep the test output clean.
		zerolog.SetGlobalLevel(zerolog.Disabled)
		toxics.Register("strait_blackhole", new(blackholeToxic))
	})
	tp := toxiproxy.NewProxy(server, name, "127.0.0.1:0", "127.0.0.1:1")
	if err := tp.Start(); err != nil {
		return nil, fmt.Errorf("starting the proxy for broker %s: %w", name, err)
	}
	if _, err := tp.Toxics.AddToxicJson(strings.NewReader(lingerToxic)); err != nil {
		tp.Stop()
		return nil, fmt.Errorf("proxy for broker %s: %w", name, err)
	}
	return &Proxy{name: name, p: tp, toxics: map[string]bool{}}, nil
}

// setUpstream points the proxy at the broker's external listener. The listener is closed
// and reopened on the same port, which is free for that instant only.
func (p *Proxy) setUpstream(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.p.Update(&toxiproxy.Proxy{Listen: p.p.Listen, Upstream: addr, Enabled: true}); err != nil {
		return fmt.Errorf("proxy for broker %s: forwarding to %s: %w", p.name, addr, err)
	}
	return nil
}

// Addr is the proxy's address, which the broker advertises on its EXTERNAL listener.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p.Listen
}

// Upstream is the broker listener the proxy forwards to.
func (p *Proxy) Upstream() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p.Upstream
}

// Latency delays every chunk of data by latency ± jitter (uniform), in dir.
func (p *Proxy) Latency(t testing.TB, dir Direction, latency, jitter time.Duration) {
	t.Helper()
	p.toxic(t, "latency", dir, fmt.Sprintf(`{"latency":%d,"jitter":%d}`, latency.Milliseconds(), jitter.Milliseconds()))
}

// Bandwidth caps the data rate in dir to kibPerSecond KiB/s.
func (p *Proxy) Bandwidth(t testing.TB, dir Direction, kibPerSecond int64) {
	t.Helper()
	p.toxic(t, "bandwidth", dir, fmt.Sprintf(`{"rate":%d}`, kibPerSecond))
}

// Blackhole drops every byte in both directions and keeps the connections open, without
// closing or resetting any: requests simply never get an answer. New connections are
// accepted and black-holed too. Heal resets the connections that lost bytes.
func (p *Proxy) Blackhole(t testing.TB) {
	t.Helper()
	p.toxic(t, "strait_blackhole", Both, `{}`)
}

// Refuse closes the proxy's listener and resets every open connection: the broker is
// unreachable, and connecting is refused, until Heal.
func (p *Proxy) Refuse(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.healAtEnd(t)
	if !p.refused {
		p.p.Stop()
		p.refused = true
	}
}

// Reset resets (RST) every connection open through the proxy now, in the middle of whatever
// it carries; new connections work at once.
func (p *Proxy) Reset(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused || p.closed {
		return
	}
	p.p.Stop()
	if err := p.p.Start(); err != nil {
		t.Fatalf("proxy for broker %s: listening again on %s after a reset: %v", p.name, p.p.Listen, err)
	}
}

// Heal removes every fault: toxics are taken off and a refused proxy listens again.
func (p *Proxy) Heal(t testing.TB) {
	t.Helper()
	if err := p.heal(); err != nil {
		t.Fatal(err)
	}
}

func (p *Proxy) heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	var errs []string
	// A connection that lost bytes to a black hole cannot go on: reset them all first.
	reset := false
	for name := range p.toxics {
		reset = reset || strings.HasPrefix(name, "strait_blackhole_")
	}
	if reset && !p.refused {
		p.p.Stop()
		p.refused = true // listen again below
	}
	for name := range p.toxics {
		if err := p.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
			errs = append(errs, fmt.Sprintf("removing %s: %v", name, err))
		}
		delete(p.toxics, name)
	}
	if p.refused {
		if err := p.p.Start(); err != nil {
			errs = append(errs, fmt.Sprintf("listening again on %s: %v", p.p.Listen, err))
		} else {
			p.refused = false
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("healing the proxy for broker %s: %s", p.name, strings.Join(errs, "; "))
	}
	return nil
}

// close stops the proxy for good, closing every connection.
func (p *Proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.p.Stop()
		p.closed = true
	}
}

// toxic adds (or replaces) the toxic of type typ in each stream of dir.
func (p *Proxy) toxic(t testing.TB, typ string, dir Direction, attributes string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.healAtEnd(t)
	for _, stream := range dir.streams() {
		name := typ + "_" + stream
		if p.toxics[name] {
			if err := p.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				t.Fatalf("proxy for broker %s: replacing %s: %v", p.name, name, err)
				return
			}
			delete(p.toxics, name)
		}
		js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, typ, stream, attributes)
		if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatalf("proxy for broker %s: adding %s: %v", p.name, js, err)
			return
		}
		p.toxics[name] = true
	}
}

// healAtEnd makes the test heal the proxy when it ends, so the next test of the package
// finds the link clean. Call with p.mu held.
func (p *Proxy) healAtEnd(t testing.TB) {
	t.Cleanup(func() {
		if err := p.heal(); err != nil {
			t.Error(err)
		}
	})
}
