package kafkaclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/kafkatest/certs"
)

// tlsServer accepts TLS connections on loopback with the given certificate
// until the test ends; with clientCA set it requires client certificates
// signed by it.
func tlsServer(t *testing.T, leaf *certs.Leaf, clientCA *certs.Authority) string {
	t.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key, Leaf: leaf.Cert}}}
	if clientCA != nil {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AddCert(clientCA.Cert)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// plainServer writes non-TLS bytes to every connection, as a PLAINTEXT
// Kafka listener answers garbage it cannot parse.
func plainServer(t *testing.T, reply []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write(reply)
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// dial connects like a client would and reads once, so that alerts the
// server sends after the handshake (TLS 1.3 client-certificate checks)
// arrive.
func dial(addr string, cfg *tls.Config) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err
}

// Each failure to connect names the cluster and the fix, and keeps its
// cause.
func TestExplainConnectionFailures(t *testing.T) {
	ca, err := certs.NewAuthority("test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewAuthority("other CA")
	if err != nil {
		t.Fatal(err)
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	good, _ := ca.Issue(certs.LeafOptions{CommonName: "broker", IPs: loopback})
	wrongHost, _ := ca.Issue(certs.LeafOptions{CommonName: "broker", DNSNames: []string{"kafka.example.com"}})
	expired, _ := ca.Issue(certs.LeafOptions{CommonName: "broker", IPs: loopback, NotBefore: time.Now().AddDate(-2, 0, 0), NotAfter: time.Now().AddDate(-1, 0, 0)})
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Cert)

	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"untrusted CA", func() error { return dial(tlsServer(t, good, nil), &tls.Config{RootCAs: otherRoots}) }, "ssl.truststore.location"},
		{"hostname mismatch", func() error { return dial(tlsServer(t, wrongHost, nil), &tls.Config{RootCAs: roots}) }, "kafka.example.com"},
		{"expired broker certificate", func() error { return dial(tlsServer(t, expired, nil), &tls.Config{RootCAs: roots}) }, "has expired"},
		{"client certificate missing", func() error { return dial(tlsServer(t, good, ca), &tls.Config{RootCAs: roots}) }, "refused Strait's client certificate"},
		{"listener without TLS", func() error {
			return dial(plainServer(t, []byte("\x00\x00\x00\x10not a tls record")), &tls.Config{RootCAs: roots})
		}, "does not speak TLS"},
		{"SASL credentials", func() error { return fmt.Errorf("authenticating: %w", kerr.SaslAuthenticationFailed) }, "sasl.jaas.config"},
		{"SASL mechanism", func() error { return fmt.Errorf("handshake: %w", kerr.UnsupportedSaslMechanism) }, "sasl.enabled.mechanisms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cause := tt.err()
			if cause == nil {
				t.Fatal("the connection did not fail")
			}
			got := Explain("B", cause)
			msg := got.Error()
			if !strings.Contains(msg, `cluster "B"`) || !strings.Contains(msg, tt.want) {
				t.Errorf("Explain = %q, want the alias and %q", msg, tt.want)
			}
			if !errors.Is(got, cause) {
				t.Errorf("the cause is not wrapped")
			}
		})
	}
	if err := errors.New("something else"); Explain("B", err) != err {
		t.Error("an unknown error was changed")
	}
}
