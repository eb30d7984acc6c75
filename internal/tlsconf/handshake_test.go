package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"strait/internal/kafkatest/certs"
)

// broker is a crypto/tls server on 127.0.0.1 that requires and verifies a
// client certificate from clientCA, for one connection.
type broker struct {
	ln   net.Listener
	wg   sync.WaitGroup
	err  error             // the server's handshake error
	peer *x509.Certificate // the client certificate it verified
}

func startBroker(t *testing.T, leaf *certs.Leaf, clientCA *certs.Authority) *broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(clientCA.Cert)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw, leaf.Chain[1].Raw}, PrivateKey: leaf.Key, Leaf: leaf.Cert}},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clientCAs,
		MinVersion:   tls.VersionTLS12,
	}
	br := &broker{ln: ln}
	br.wg.Add(1)
	go func() {
		defer br.wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			br.err = err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		tc := tls.Server(conn, cfg)
		if br.err = tc.Handshake(); br.err != nil {
			return
		}
		br.peer = tc.ConnectionState().PeerCertificates[0]
		// Answer, so that the client's read sees the end of a TLS 1.3
		// handshake whose client certificate the server accepted.
		_, br.err = tc.Write([]byte("ok"))
	}()
	t.Cleanup(func() { ln.Close(); br.wg.Wait() })
	return br
}

// dial connects cfg to the broker as franz-go does: ServerName is the host
// of the broker's address. It returns the client's error and the
// negotiated version, after the server has finished.
func (br *broker) dial(t *testing.T, cfg *tls.Config) (uint16, error) {
	t.Helper()
	conn, err := net.Dial("tcp", br.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	c := cfg.Clone()
	c.ServerName = "127.0.0.1"
	tc := tls.Client(conn, c)
	err = tc.HandshakeContext(t.Context())
	if err == nil {
		buf := make([]byte, 2)
		_, err = io.ReadFull(tc, buf)
	}
	version := tc.ConnectionState().Version
	tc.Close()
	br.ln.Close()
	br.wg.Wait()
	return version, err
}

// The built config completes mutual TLS with a Go server, and verifies the
// broker as Java would: untrusted, expired and (with https) misnamed
// broker certificates fail; an empty identification algorithm skips only
// the host name.
func TestHandshake(t *testing.T) {
	b := newBed(t)
	ip := []net.IP{net.IPv4(127, 0, 0, 1)}
	good := must(b.ca.Issue(certs.LeafOptions{CommonName: "broker", IPs: ip}))(t)
	misnamed := must(b.ca.Issue(certs.LeafOptions{CommonName: "broker", DNSNames: []string{"broker-7.other.example"}}))(t)
	expired := must(b.ca.Issue(certs.LeafOptions{CommonName: "broker", IPs: ip, NotBefore: time.Now().AddDate(0, 0, -30), NotAfter: time.Now().AddDate(0, 0, -1)}))(t)
	untrusted := must(b.other.Issue(certs.LeafOptions{CommonName: "broker", IPs: ip}))(t)
	keystore := b.file("client.p12", must(b.client.PKCS12Keystore("store-pw"))(t))
	truststore := b.file("trust.jks", must(certs.JKSTruststore("trust-pw", b.ca))(t))
	base := []string{
		"ssl.keystore.type", "PKCS12", "ssl.keystore.location", keystore, "ssl.keystore.password", "store-pw",
		"ssl.truststore.location", truststore, "ssl.truststore.password", "trust-pw",
	}
	noHostname := append([]string{"ssl.endpoint.identification.algorithm", ""}, base...)
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var invalidErr x509.CertificateInvalidError

	tests := []struct {
		name    string
		server  *certs.Leaf
		kv      []string
		wantErr any // nil, or a pointer to the x509 error type the client must fail with
		version uint16
	}{
		{"trusted", good, base, nil, tls.VersionTLS13},
		{"trusted, TLS 1.2 by ssl.protocol", good, append([]string{"ssl.protocol", "TLSv1.2"}, base...), nil, tls.VersionTLS12},
		{"untrusted CA", untrusted, base, &authErr, 0},
		{"host name mismatch, https", misnamed, base, &hostErr, 0},
		{"host name mismatch, no identification", misnamed, noHostname, nil, tls.VersionTLS13},
		{"expired broker certificate, https", expired, base, &invalidErr, 0},
		{"expired broker certificate, no identification", expired, noHostname, &invalidErr, 0},
		{"untrusted CA, no identification", untrusted, noHostname, &authErr, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Build(client(tt.kv...), Options{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			br := startBroker(t, tt.server, b.ca)
			version, err := br.dial(t, cfg)
			if tt.wantErr == nil {
				if err != nil || br.err != nil {
					t.Fatalf("client: %v; server: %v", err, br.err)
				}
				if br.peer == nil || !br.peer.Equal(b.client.Cert) {
					t.Fatal("the server did not verify the client's certificate")
				}
				if version != tt.version {
					t.Errorf("version %s, want %s", versionName(version), versionName(tt.version))
				}
				return
			}
			if err == nil {
				t.Fatal("the handshake succeeded")
			}
			if !errors.As(err, tt.wantErr) {
				t.Fatalf("client error %v (%T), want %T", err, err, tt.wantErr)
			}
		})
	}
}

// Without a keystore the client sends no certificate, and a broker that
// requires one refuses it.
func TestHandshakeWithoutKeystore(t *testing.T) {
	b := newBed(t)
	broker := must(b.ca.Issue(certs.LeafOptions{CommonName: "broker", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}))(t)
	cfg, _, err := Build(client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(b.ca.PEM())), Options{})
	if err != nil {
		t.Fatal(err)
	}
	br := startBroker(t, broker, b.ca)
	if _, err := br.dial(t, cfg); err == nil || br.err == nil {
		t.Fatalf("client: %v; server: %v; want the server to refuse", err, br.err)
	}
}
