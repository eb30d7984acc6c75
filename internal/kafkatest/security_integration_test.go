//go:build integration

package kafkatest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"strait/internal/kafkatest"
)

// refusedWithin bounds how long a client takes to give up on a listener that refuses it.
const refusedWithin = 15 * time.Second

// secureClient returns a client of listener, closed when the test ends. It retries for
// a short while only, so a refused client fails fast.
func secureClient(t *testing.T, listener string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	a := env.Clusters[0]
	return a.Client(t, append([]kgo.Opt{
		kgo.SeedBrokers(a.ListenerSeeds(t, listener)...),
		kgo.RetryTimeout(5 * time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
}

// roundTrip produces one record through cl to a new topic and reads it back on the same
// listener with opts, the client settings of cl.
func roundTrip(t *testing.T, cl *kgo.Client, listener string, opts ...kgo.Opt) {
	t.Helper()
	a := env.Clusters[0]
	topic := kafkatest.Name(t, "secure-")
	a.CreateTopic(t, topic, 1, nil) // over PLAINTEXT: the users have no special rights
	value := "over " + listener
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("producing to %q over %s: %v", topic, listener, err)
	}
	got := a.ReadAll(t, topic, kgo.ReadCommitted())
	if len(got) != 1 || len(got[0]) != 1 || string(got[0][0].Value) != value {
		t.Fatalf("read back %v over PLAINTEXT, want one record %q", got, value)
	}
	got = kafkatest.ReadAll(t, a.ListenerSeeds(t, listener), topic, kgo.ReadCommitted(), opts...)
	if len(got) != 1 || len(got[0]) != 1 || string(got[0][0].Value) != value {
		t.Fatalf("read back %v over %s, want one record %q", got, listener, value)
	}
}

// pingErr pings through cl and returns the error, failing the test if there is none.
func pingErr(t *testing.T, cl *kgo.Client, what string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), refusedWithin)
	defer cancel()
	err := cl.Ping(ctx)
	if err == nil {
		t.Fatalf("%s: the broker accepted the client", what)
	}
	return err
}

// TestSecureListeners proves each client listener of the secure test bed with franz-go:
// a record goes in and out with the right credentials, and wrong ones are refused.
func TestSecureListeners(t *testing.T) {
	sec := env.Security
	if sec == nil {
		t.Skip("the env was started without Options.Security")
	}
	ep := sec.NewTokenEndpoint(t, kafkatest.TokenEndpointOptions{})

	accepted := []struct {
		name     string
		listener string
		opts     []kgo.Opt
	}{
		{name: "SSL with a client certificate", listener: kafkatest.ListenerSSL,
			opts: []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(sec.Client))}},
		{name: "SASL_SSL SCRAM-SHA-256", listener: kafkatest.ListenerSASLSSL,
			opts: []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(nil)), kgo.SASL(scram.Auth{User: sec.SCRAM.User, Pass: sec.SCRAM.Password}.AsSha256Mechanism())}},
		{name: "SASL_SSL SCRAM-SHA-512", listener: kafkatest.ListenerSASLSSL,
			opts: []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(nil)), kgo.SASL(scram.Auth{User: sec.SCRAM.User, Pass: sec.SCRAM.Password}.AsSha512Mechanism())}},
		{name: "SASL_PLAINTEXT PLAIN", listener: kafkatest.ListenerSASLPlaintext,
			opts: []kgo.Opt{kgo.SASL(plain.Auth{User: sec.Plain.User, Pass: sec.Plain.Password}.AsMechanism())}},
		{name: "OAUTH with a token from the endpoint", listener: kafkatest.ListenerOAuth,
			opts: []kgo.Opt{kgo.SASL(ep.Mechanism())}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, secureClient(t, tc.listener, tc.opts...), tc.listener, tc.opts...)
		})
	}
	if ep.Issued() == 0 {
		t.Errorf("the OAUTH client got no token from the endpoint")
	}

	wrongAudience := signed(t, sec, "aud", "someone-else")
	wrongIssuer := signed(t, sec, "iss", "https://someone-else.invalid")
	expired := signed(t, sec, "exp", time.Now().Add(-time.Hour).Unix())
	good := signed(t, sec, "", nil)
	forged := good[:strings.LastIndexByte(good, '.')+1] + base64.RawURLEncoding.EncodeToString(make([]byte, 256))
	refused := []struct {
		name     string
		listener string
		opts     []kgo.Opt
		check    func(error) error
	}{
		{name: "EXPIRED broker certificate", listener: kafkatest.ListenerExpired,
			opts: []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(nil))},
			check: func(err error) error {
				var invalid x509.CertificateInvalidError
				if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
					return fmt.Errorf("want an x509 expiry error, got %v", err)
				}
				return nil
			}},
		{name: "SSL without a client certificate", listener: kafkatest.ListenerSSL,
			opts:  []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(nil))},
			check: tlsAlert},
		{name: "SSL with a certificate of an untrusted CA", listener: kafkatest.ListenerSSL,
			opts:  []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(sec.OtherClient))},
			check: tlsAlert},
		{name: "SSL trusting another CA only", listener: kafkatest.ListenerSSL,
			opts: []kgo.Opt{kgo.DialTLSConfig(func() *tls.Config {
				c := sec.TLSConfig(sec.Client)
				c.RootCAs = x509.NewCertPool()
				c.RootCAs.AddCert(sec.OtherCA.Cert)
				return c
			}())},
			check: func(err error) error {
				if !errors.As(err, new(x509.UnknownAuthorityError)) {
					return fmt.Errorf("want an unknown authority error, got %v", err)
				}
				return nil
			}},
		{name: "SASL_SSL wrong SCRAM password", listener: kafkatest.ListenerSASLSSL,
			opts:  []kgo.Opt{kgo.DialTLSConfig(sec.TLSConfig(nil)), kgo.SASL(scram.Auth{User: sec.SCRAM.User, Pass: "wrong-" + sec.SCRAM.Password}.AsSha512Mechanism())},
			check: saslFailed},
		{name: "SASL_PLAINTEXT wrong PLAIN password", listener: kafkatest.ListenerSASLPlaintext,
			opts:  []kgo.Opt{kgo.SASL(plain.Auth{User: sec.Plain.User, Pass: "wrong"}.AsMechanism())},
			check: saslFailed},
		{name: "OAUTH token for another audience", listener: kafkatest.ListenerOAuth,
			opts:  []kgo.Opt{kgo.SASL(oauth.Auth{Token: wrongAudience}.AsMechanism())},
			check: saslFailed},
		{name: "OAUTH token of another issuer", listener: kafkatest.ListenerOAuth,
			opts:  []kgo.Opt{kgo.SASL(oauth.Auth{Token: wrongIssuer}.AsMechanism())},
			check: saslFailed},
		{name: "OAUTH expired token", listener: kafkatest.ListenerOAuth,
			opts:  []kgo.Opt{kgo.SASL(oauth.Auth{Token: expired}.AsMechanism())},
			check: saslFailed},
		{name: "OAUTH token with a forged signature", listener: kafkatest.ListenerOAuth,
			opts:  []kgo.Opt{kgo.SASL(oauth.Auth{Token: forged}.AsMechanism())},
			check: saslFailed},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			err := pingErr(t, secureClient(t, tc.listener, tc.opts...), tc.name)
			if cerr := tc.check(err); cerr != nil {
				t.Error(cerr)
			}
		})
	}
}

// connects counts a client's successful broker connections.
type connects struct{ n atomic.Int64 }

func (c *connects) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.n.Add(1)
	}
}

// signed returns a token the OAUTH listener accepts, or with claim set to value (unless
// claim is empty) one it should refuse.
func signed(t *testing.T, sec *kafkatest.Security, claim string, value any) string {
	t.Helper()
	c := sec.Claims("strait-oauth", time.Hour)
	if claim != "" {
		c[claim] = value
	}
	tok, err := sec.SignJWT(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tlsAlert checks that the broker ended the TLS handshake with an alert about the client's
// certificate (TLS 1.3 reports it on the client's first read).
func tlsAlert(err error) error {
	if !strings.Contains(err.Error(), "certificate") {
		return fmt.Errorf("want a TLS alert about the client certificate, got %v", err)
	}
	return nil
}

func saslFailed(err error) error {
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		return fmt.Errorf("want SASL_AUTHENTICATION_FAILED, got %v", err)
	}
	return nil
}

// TestOAuthReauthentication checks that a session on the OAUTH listener lasts only as long
// as its token: the client re-authenticates with a fresh token from the endpoint, and the
// endpoint counts it.
func TestOAuthReauthentication(t *testing.T) {
	sec := env.Security
	if sec == nil {
		t.Skip("the env was started without Options.Security")
	}
	ep := sec.NewTokenEndpoint(t, kafkatest.TokenEndpointOptions{Lifetime: 3 * time.Second})
	var conns connects
	cl := secureClient(t, kafkatest.ListenerOAuth, kgo.SASL(ep.Mechanism()), kgo.WithHooks(&conns))
	// Each connection authenticates once when it opens: the tokens beyond those were
	// fetched to re-authenticate a connection whose session was about to end.
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if err := cl.Ping(t.Context()); err != nil {
			return err
		}
		if n := ep.Issued() - int(conns.n.Load()); n < 2 {
			return fmt.Errorf("%d re-authentication(s) (%d tokens, %d connections), want 2 or more: tokens last 3 s", n, ep.Issued(), conns.n.Load())
		}
		return nil
	})

	ep.Stop()
	issued := ep.Issued()
	if _, err := ep.Fetch(t.Context()); err == nil {
		t.Fatalf("the endpoint still issues tokens after Stop")
	}
	fresh := secureClient(t, kafkatest.ListenerOAuth, kgo.SASL(ep.Mechanism()))
	if err := pingErr(t, fresh, "OAUTH with the token endpoint down"); !strings.Contains(err.Error(), "connect") {
		t.Errorf("want a connection error from the stopped endpoint, got %v", err)
	}
	if ep.Issued() != issued {
		t.Errorf("the stopped endpoint issued %d more token(s)", ep.Issued()-issued)
	}
}
