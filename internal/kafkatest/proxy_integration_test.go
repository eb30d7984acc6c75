//go:build integration

package kafkatest_test

import (
	"context"
	"crypto/rand"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// disconnects counts a client's broker disconnections.
type disconnects struct{ n atomic.Int64 }

func (d *disconnects) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) { d.n.Add(1) }

// pingWithin pings through cl with a deadline.
func pingWithin(t *testing.T, cl *kgo.Client, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	return cl.Ping(ctx)
}

// TestProxyFaults checks each fault of the proxy in front of the broker: a client of the
// proxies sees it, a client of the broker's own listener does not, and Heal ends it.
func TestProxyFaults(t *testing.T) {
	a := env.Clusters[0]
	if env.External() {
		t.Skip("external clusters have no proxies")
	}
	p := a.Brokers[0].Proxy
	if a.ProxyBootstrap() != p.Addr() || !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Fatalf("ProxyBootstrap() = %q, proxy at %q", a.ProxyBootstrap(), p.Addr())
	}
	direct := a.Client(t)
	var dis disconnects
	proxied := a.Client(t, kgo.SeedBrokers(a.ProxyBootstrap()), kgo.WithHooks(&dis), kgo.RetryTimeout(2*time.Second))
	if err := pingWithin(t, proxied, 10*time.Second); err != nil {
		t.Fatalf("no answer through the proxy: %v", err)
	}

	t.Run("latency", func(t *testing.T) {
		p.Latency(t, kafkatest.Both, 150*time.Millisecond, 20*time.Millisecond)
		began := time.Now()
		if err := pingWithin(t, proxied, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		// A round trip crosses the proxy twice: at least 2 x (150 - 20) ms.
		if d := time.Since(began); d < 260*time.Millisecond {
			t.Errorf("a ping took %v through a proxy adding 150±20 ms each way", d)
		}
		p.Heal(t)
	})
	t.Run("blackhole", func(t *testing.T) {
		p.Blackhole(t)
		if err := pingWithin(t, proxied, time.Second); err == nil {
			t.Fatal("a ping through a black-holed proxy was answered")
		}
		if err := pingWithin(t, direct, 10*time.Second); err != nil {
			t.Fatalf("the broker's own listener is affected: %v", err)
		}
		p.Heal(t)
		kafkatest.Eventually(t, 30*time.Second, func() error { return pingWithin(t, proxied, 2*time.Second) })
	})
	t.Run("refuse", func(t *testing.T) {
		p.Refuse(t)
		fresh := a.Client(t, kgo.SeedBrokers(a.ProxyBootstrap()), kgo.RetryTimeout(time.Second))
		if err := pingWithin(t, fresh, 2*time.Second); err == nil {
			t.Fatal("a new client reached the broker through a refusing proxy")
		}
		if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
			t.Fatal("the refusing proxy accepted a connection")
		}
		p.Heal(t)
		kafkatest.Eventually(t, 30*time.Second, func() error { return pingWithin(t, fresh, 2*time.Second) })
	})
	t.Run("reset", func(t *testing.T) {
		if err := pingWithin(t, proxied, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		before := dis.n.Load()
		p.Reset(t)
		// The client finds its connection reset on its next request, and reconnects.
		if err := pingWithin(t, proxied, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if dis.n.Load() == before {
			t.Fatal("the client's connection was not reset")
		}
	})
	t.Run("bandwidth", func(t *testing.T) {
		p.Bandwidth(t, kafkatest.Upstream, 64)
		topic := kafkatest.Name(t, "crawl-")
		a.CreateTopic(t, topic, 1, nil)
		began := time.Now()
		value := make([]byte, 256<<10)
		rand.Read(value) // incompressible
		r := &kgo.Record{Topic: topic, Value: value}
		if err := proxied.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		// 256 KiB at 64 KiB/s.
		if d := time.Since(began); d < 3*time.Second {
			t.Errorf("256 KiB went through a 64 KiB/s link in %v", d)
		}
		p.Heal(t)
	})
}
