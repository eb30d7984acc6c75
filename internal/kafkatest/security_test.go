package kafkatest

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

func newTestSecurity(t *testing.T) *Security {
	t.Helper()
	s, err := NewSecurity()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseStartOutputListeners(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    map[string]map[string]string
		wantErr string
	}{
		{
			name: "one broker and three",
			out: "a 127.0.0.1:1 /x/a\nb 127.0.0.1:2,127.0.0.1:3,127.0.0.1:4 /x/b\n" +
				"node b:1 127.0.0.1:2 - - /x/b/1\nnode b:2 127.0.0.1:3 - - /x/b/2\nnode b:3 127.0.0.1:4 - - /x/b/3\n" +
				"listener a SSL 127.0.0.1:11\nlistener a OAUTH 127.0.0.1:12\n" +
				"listener b SSL 127.0.0.1:21,127.0.0.1:31,127.0.0.1:41\n/x\n",
			want: map[string]map[string]string{
				"a": {"SSL": "127.0.0.1:11", "OAUTH": "127.0.0.1:12"},
				"b": {"SSL": "127.0.0.1:21,127.0.0.1:31,127.0.0.1:41"},
			},
		},
		{name: "no security", out: "a 127.0.0.1:1 /x/a\nb 127.0.0.1:2 /x/b\n/x\n", want: map[string]map[string]string{"a": nil, "b": nil}},
		{name: "unknown cluster", out: "a 127.0.0.1:1 /x/a\nb 127.0.0.1:2 /x/b\nlistener c SSL 127.0.0.1:9\n/x\n", wantErr: "names no cluster"},
		{name: "address missing", out: "a 127.0.0.1:1,127.0.0.1:2 /x/a\nb 127.0.0.1:3 /x/b\n" +
			"node a:1 127.0.0.1:1 - - /x/a/1\nnode a:2 127.0.0.1:2 - - /x/a/2\nlistener a SSL 127.0.0.1:9\n/x\n",
			wantErr: "1 address(es) of listener SSL for cluster a of 2 brokers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, _, err := parseStartOutput(tc.out, 2)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if got, want := c.Listeners, tc.want[c.Name]; !equalMaps(got, want) {
					t.Errorf("cluster %s: Listeners = %v, want %v", c.Name, got, want)
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestSecurityDir checks the files kafka.sh --security reads: their names, that users.env
// passes the script's checks, and that the certificates are what the listeners need.
func TestSecurityDir(t *testing.T) {
	s := newTestSecurity(t)
	dir := filepath.Join(t.TempDir(), "security")
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if s.Dir != dir {
		t.Errorf("Dir = %q, want %q", s.Dir, dir)
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// The same checks as load_security in scripts/kafka.sh.
	line := regexp.MustCompile(`^(scram|plain):[A-Za-z][A-Za-z0-9_-]*=[A-Za-z0-9._-]+$`)
	users := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(read(usersEnvFile)))
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			if !line.MatchString(l) {
				t.Errorf("users.env line %q does not pass kafka.sh's check", l)
			}
			users[l] = true
		}
	}
	for _, want := range []string{"scram:" + s.SCRAM.User + "=" + s.SCRAM.Password, "plain:" + s.Plain.User + "=" + s.Plain.Password} {
		if !users[want] {
			t.Errorf("users.env lacks %q", want)
		}
	}
	if got, want := string(read(oauthEnvFile)), "ISSUER="+s.Issuer+"\nAUDIENCE="+s.Audience+"\n"; got != want {
		t.Errorf("oauth.env = %q, want %q", got, want)
	}

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(read(caPEMFile)) {
		t.Fatal("ca.pem holds no certificate")
	}
	tests := []struct {
		file    string
		expired bool
	}{
		{file: brokerPEMFile},
		{file: expiredBrokerPEMFile, expired: true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data := read(tc.file)
			// Kafka's PEM keystore: an unencrypted PKCS#8 key, then the chain.
			if b, _ := pem.Decode(data); b == nil || b.Type != "PRIVATE KEY" {
				t.Fatalf("%s does not start with an unencrypted PKCS#8 key", tc.file)
			}
			pair, err := tls.X509KeyPair(data, data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots}); !tc.expired && err == nil {
				t.Errorf("the broker certificate is valid for localhost: the hostname-mismatch tests need it not to be")
			}
			for _, host := range []string{"127.0.0.1"} {
				_, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
				var invalid x509.CertificateInvalidError
				switch {
				case tc.expired && !(errors.As(err, &invalid) && invalid.Reason == x509.Expired):
					t.Errorf("verifying for %s: %v, want an expiry error", host, err)
				case !tc.expired && err != nil:
					t.Errorf("verifying for %s: %v", host, err)
				}
			}
		})
	}
}

// TestTLSConfig runs handshakes against a server that, like the SSL listener, presents
// Broker and requires a client certificate issued by CA.
func TestTLSConfig(t *testing.T) {
	s := newTestSecurity(t)
	server := s.TLSConfig(s.Broker)
	server.ClientCAs = server.RootCAs
	server.ClientAuth = tls.RequireAndVerifyClientCert
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_, _ = c.Write([]byte("x")) // so the client learns whether its certificate passed
			c.Close()
		}
	}()
	defer func() { ln.Close(); <-done }()

	tests := []struct {
		name    string
		cfg     *tls.Config
		wantErr bool
	}{
		{name: "client certificate", cfg: s.TLSConfig(s.Client)},
		{name: "no client certificate", cfg: s.TLSConfig(nil), wantErr: true},
		{name: "untrusted client certificate", cfg: s.TLSConfig(s.OtherClient), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tls.Dial("tcp", ln.Addr().String(), tc.cfg)
			if err == nil {
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Read(make([]byte, 1))
				c.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestClientStores(t *testing.T) {
	s := newTestSecurity(t)
	tests := []struct {
		format    StoreFormat
		store     string
		key       string
		wantProps map[string]string
	}{
		{format: StoreJKS, store: "canary-store", key: "canary-key", wantProps: map[string]string{
			"ssl.keystore.type": "JKS", "ssl.truststore.type": "JKS", "ssl.keystore.password": "canary-store",
			"ssl.truststore.password": "canary-store", "ssl.key.password": "canary-key"}},
		{format: StorePKCS12, store: "canary-store", key: "ignored", wantProps: map[string]string{
			"ssl.keystore.type": "PKCS12", "ssl.truststore.type": "PKCS12", "ssl.keystore.password": "canary-store",
			"ssl.truststore.password": "canary-store", "ssl.key.password": "canary-store"}},
		{format: StorePEM, store: "ignored", key: "canary-key", wantProps: map[string]string{
			"ssl.keystore.type": "PEM", "ssl.truststore.type": "PEM", "ssl.key.password": "canary-key"}},
		{format: StorePEM, wantProps: map[string]string{"ssl.keystore.type": "PEM", "ssl.truststore.type": "PEM"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.format)+"/"+tc.key, func(t *testing.T) {
			cs := s.ClientStores(t, tc.format, tc.store, tc.key)
			props := cs.Properties()
			for k, v := range tc.wantProps {
				if props[k] != v {
					t.Errorf("%s = %q, want %q", k, props[k], v)
				}
			}
			if len(props) != len(tc.wantProps)+2 || props["ssl.keystore.location"] != cs.Keystore || props["ssl.truststore.location"] != cs.Truststore {
				t.Errorf("Properties() = %v, want %v and the two locations", props, tc.wantProps)
			}
			ks, err := os.ReadFile(cs.Keystore)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.format {
			case StorePKCS12:
				if _, cert, _, err := pkcs12.DecodeChain(ks, tc.store); err != nil || !cert.Equal(s.Client.Cert) {
					t.Errorf("the PKCS12 keystore does not open with its password to the client certificate: %v", err)
				}
			case StorePEM:
				want := "PRIVATE KEY"
				if tc.key != "" {
					want = "ENCRYPTED PRIVATE KEY"
				}
				if b, _ := pem.Decode(ks); b == nil || b.Type != want {
					t.Errorf("the PEM keystore does not start with a %s block", want)
				}
			}
		})
	}
}

// verifyJWT checks tok's RS256 signature against the JWKS and returns its claims.
func verifyJWT(t *testing.T, jwks []byte, tok string) map[string]any {
	t.Helper()
	var set struct {
		Keys []struct{ Kty, Kid, Alg, N, E string }
	}
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", jwks, err)
	}
	k := set.Keys[0]
	n, _ := base64.RawURLEncoding.DecodeString(k.N)
	e, _ := base64.RawURLEncoding.DecodeString(k.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWS", tok)
	}
	var header map[string]string
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(h, &header); err != nil || header["alg"] != "RS256" || header["kid"] != k.Kid {
		t.Fatalf("header %s (kid in JWKS %q): %v", h, k.Kid, err)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
		t.Fatalf("signature does not verify with the JWKS key: %v", err)
	}
	var claims map[string]any
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(p, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestTokenEndpoint(t *testing.T) {
	s := newTestSecurity(t)
	ep := s.NewTokenEndpoint(t, TokenEndpointOptions{Lifetime: 90 * time.Second, Subject: "svc"})
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || !strings.HasSuffix(ep.URL, TokenPath) {
		t.Errorf("URL = %q", ep.URL)
	}
	basic := func(id, secret string) http.Header {
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
		return r.Header
	}
	tests := []struct {
		name       string
		method     string
		form       url.Values
		header     http.Header
		wantStatus int
		wantScope  string
	}{
		{name: "basic auth", method: http.MethodPost, form: url.Values{"grant_type": {"client_credentials"}},
			header: basic(ep.ClientID, ep.ClientSecret), wantStatus: http.StatusOK},
		{name: "credentials in the form, with a scope", method: http.MethodPost,
			form:       url.Values{"grant_type": {"client_credentials"}, "client_id": {ep.ClientID}, "client_secret": {ep.ClientSecret}, "scope": {"kafka"}},
			wantStatus: http.StatusOK, wantScope: "kafka"},
		{name: "wrong secret", method: http.MethodPost, form: url.Values{"grant_type": {"client_credentials"}},
			header: basic(ep.ClientID, "wrong"), wantStatus: http.StatusUnauthorized},
		{name: "other grant", method: http.MethodPost, form: url.Values{"grant_type": {"password"}},
			header: basic(ep.ClientID, ep.ClientSecret), wantStatus: http.StatusBadRequest},
		{name: "GET", method: http.MethodGet, wantStatus: http.StatusMethodNotAllowed},
	}
	var wantIssued, wantRefused int
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, ep.URL, strings.NewReader(tc.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := ep.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%v), want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if tc.wantStatus != http.StatusOK {
				wantRefused++
				if body["error"] == nil {
					t.Errorf("error answer %v has no error code", body)
				}
				return
			}
			wantIssued++
			if body["token_type"] != "bearer" || body["expires_in"] != 90.0 {
				t.Errorf("answer %v, want token_type bearer and expires_in 90", body)
			}
			tok, _ := body["access_token"].(string)
			c := verifyJWT(t, s.JWKS(), tok)
			if c["sub"] != "svc" || c["aud"] != s.Audience || c["iss"] != s.Issuer {
				t.Errorf("claims %v, want sub svc, aud %q, iss %q", c, s.Audience, s.Issuer)
			}
			if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 90 {
				t.Errorf("exp - iat = %v, want 90", exp-iat)
			}
			if got, _ := c["scope"].(string); got != tc.wantScope {
				t.Errorf("scope = %q, want %q", got, tc.wantScope)
			}
		})
	}
	if ep.Issued() != wantIssued || ep.Refused() != wantRefused {
		t.Errorf("Issued() = %d, Refused() = %d, want %d and %d", ep.Issued(), ep.Refused(), wantIssued, wantRefused)
	}

	ep.SetLifetime(5 * time.Second)
	tok, err := ep.Fetch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c := verifyJWT(t, s.JWKS(), tok); c["exp"].(float64)-c["iat"].(float64) != 5 {
		t.Errorf("after SetLifetime(5s) the token lasts %v s", c["exp"].(float64)-c["iat"].(float64))
	}
	ep.Stop()
	ep.Stop() // idempotent
	var opErr *net.OpError
	if _, err := ep.Fetch(t.Context()); !errors.As(err, &opErr) {
		t.Errorf("Fetch after Stop: %v, want a connection error", err)
	}
}
