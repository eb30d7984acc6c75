package saslconf

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"strait/internal/config"
)

// idp is a token endpoint: it records each request and answers with
// respond(n) for the n-th (from 1). When gate is set, it holds each
// request until gate is closed.
type idp struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []tokenRequest
	respond func(n int) (int, string)
	gate    chan struct{}
}

type tokenRequest struct {
	method, body, auth, accept, ctype, cache string
}

func newIDP(t *testing.T, respond func(n int) (int, string)) *idp {
	t.Helper()
	p := &idp{respond: respond}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, tokenRequest{r.Method, string(body), r.Header.Get("Authorization"), r.Header.Get("Accept"), r.Header.Get("Content-Type"), r.Header.Get("Cache-Control")})
		n, gate := len(p.reqs), p.gate
		p.mu.Unlock()
		if gate != nil {
			<-gate
		}
		status, out := p.respond(n)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) url() string { return p.srv.URL + "/oauth2/token" }

func (p *idp) requests() []tokenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]tokenRequest(nil), p.reqs...)
}

// tokens answers every request with access token "token-<n>" valid for
// lifetime.
func tokens(lifetime time.Duration) func(int) (int, string) {
	return func(n int) (int, string) {
		return 200, fmt.Sprintf(`{"access_token":"token-%d","token_type":"bearer","expires_in":%d}`, n, int(lifetime.Seconds()))
	}
}

// jwt is an unsigned JWT with claims; Strait reads only exp.
func jwt(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(b) + ".c2ln"
}

const oauthJAAS = oauthModule + ` required clientId="strait" clientSecret="s3cret" scope="kafka";`

// oauthClient is an OAUTHBEARER client of the endpoint url, Kafka 3 style,
// without refresh jitter.
func oauthClient(url string, extra ...string) config.Client {
	kv := []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS,
		"sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url,
		"sasl.login.refresh.window.jitter", "0"}
	for i := 0; i+1 < len(extra); i += 2 {
		replaced := false
		for j := 0; j < len(kv); j += 2 {
			if kv[j] == extra[i] {
				kv[j+1], replaced = extra[i+1], true
			}
		}
		if !replaced {
			kv = append(kv, extra[i], extra[i+1])
		}
	}
	return newClient(kv...)
}

// bearer is the first OAUTHBEARER message for token and extensions.
func bearer(token string, ext ...string) string {
	s := "n,,\x01auth=Bearer " + token + "\x01"
	for _, e := range ext {
		s += e + "\x01"
	}
	return s + "\x01"
}

func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

func TestOAuthClientCredentials(t *testing.T) {
	tests := []struct {
		name     string
		extra    []string
		wantBody string
		wantAuth string
		wantExt  []string
	}{
		{name: "kafka 3 jaas options", wantBody: "grant_type=client_credentials&scope=kafka", wantAuth: basic("strait", "s3cret")},
		{name: "kafka 3 handler class", extra: []string{"sasl.login.callback.handler.class", oauthHandler3},
			wantBody: "grant_type=client_credentials&scope=kafka", wantAuth: basic("strait", "s3cret")},
		{name: "kafka 4.1 keys", extra: []string{"sasl.jaas.config", oauthModule + " required;",
			"sasl.oauthbearer.client.credentials.client.id", "id41", "sasl.oauthbearer.client.credentials.client.secret", "secret41",
			"sasl.oauthbearer.scope", "a b", "sasl.oauthbearer.jwt.retriever.class", clientCredsRetriever},
			wantBody: "grant_type=client_credentials&scope=a+b", wantAuth: basic("id41", "secret41")},
		{name: "no scope", extra: []string{"sasl.jaas.config", oauthModule + ` required clientId="strait" clientSecret="s3cret";`},
			wantBody: "grant_type=client_credentials", wantAuth: basic("strait", "s3cret")},
		{name: "url-encoded header", extra: []string{"sasl.jaas.config", oauthModule + ` required clientId="a b:c" clientSecret="x*y~z/";`,
			"sasl.oauthbearer.header.urlencode", "true"},
			wantBody: "grant_type=client_credentials", wantAuth: basic("a+b%3Ac", "x*y%7Ez%2F")},
		{name: "not url-encoded by default", extra: []string{"sasl.jaas.config", oauthModule + ` required clientId="a b:c" clientSecret="x*y~z/";`},
			wantBody: "grant_type=client_credentials", wantAuth: basic("a b:c", "x*y~z/")},
		{name: "sasl extensions", extra: []string{"sasl.jaas.config", oauthModule + ` required clientId="strait" clientSecret="s3cret" extension_logicalCluster="lkc-1" extension_identityPoolId="pool-2";`},
			wantBody: "grant_type=client_credentials", wantAuth: basic("strait", "s3cret"), wantExt: []string{"identityPoolId=pool-2", "logicalCluster=lkc-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIDP(t, tokens(time.Hour))
			o := newWorld().options()
			o.HTTPClient = p.srv.Client()
			m, ws := build(t, oauthClient(p.url(), tt.extra...), o)
			if m.Name() != OAuthBearer {
				t.Errorf("Name() = %q", m.Name())
			}
			if len(ws) != 1 || !strings.Contains(ws[0].Message, "is http") {
				t.Errorf("warnings = %q, want only the one about http", warnings(ws))
			}
			if got, want := string(first(t, m, "broker:9093")), bearer("token-1", tt.wantExt...); got != want {
				t.Errorf("first message = %q, want %q", got, want)
			}
			reqs := p.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d token requests, want 1", len(reqs))
			}
			r := reqs[0]
			want := tokenRequest{"POST", tt.wantBody, tt.wantAuth, "application/json", "application/x-www-form-urlencoded", "no-cache"}
			if r != want {
				t.Errorf("request = %+v, want %+v", r, want)
			}
		})
	}
}

func TestRefreshAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	def := refreshConfig{factor: 0.8, jitter: 0.05, minPeriod: 60 * time.Second, buffer: 300 * time.Second}
	tests := []struct {
		name     string
		c        refreshConfig
		lifetime time.Duration
		r        float64
		want     time.Duration // after t0
	}{
		{"factor of the lifetime", def, time.Hour, 0, 2880 * time.Second},
		{"with the largest jitter", def, time.Hour, 1, 3060 * time.Second},
		{"bounded by the buffer before expiry", def, 1000 * time.Second, 0, 700 * time.Second},
		{"bounded by the minimum period", refreshConfig{factor: 0.5, minPeriod: 900 * time.Second, buffer: 0}, 1000 * time.Second, 0, 900 * time.Second},
		{"too short for both buffers: factor of what is left", def, 200 * time.Second, 0, 160 * time.Second},
		{"factor 1, no buffers", refreshConfig{factor: 1}, time.Hour, 0, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.refreshAt(t0, t0, t0.Add(tt.lifetime), tt.r)
			if got.Sub(t0) != tt.want {
				t.Errorf("refreshAt = t0+%v, want t0+%v", got.Sub(t0), tt.want)
			}
		})
	}
}

// TestOAuthRefreshesAfterTheWindow: the token is cached until issued +
// 0.8 x lifetime, and a new one is fetched after that.
func TestOAuthRefreshesAfterTheWindow(t *testing.T) {
	tests := []struct {
		name     string
		respond  func(*world) func(int) (int, string)
		refresh  time.Duration
		lifetime time.Duration
	}{
		{"expires_in", func(*world) func(int) (int, string) { return tokens(time.Hour) }, 2880 * time.Second, time.Hour},
		{"expires_in as a string", func(*world) func(int) (int, string) {
			return func(n int) (int, string) {
				return 200, fmt.Sprintf(`{"access_token":"token-%d","expires_in":"3600"}`, n)
			}
		}, 2880 * time.Second, time.Hour},
		{"exp claim of a JWT", func(w *world) func(int) (int, string) {
			return func(n int) (int, string) {
				exp := w.options().Now().Add(1000 * time.Second).Unix()
				return 200, fmt.Sprintf(`{"access_token":%q}`, jwt(map[string]any{"sub": "strait", "exp": exp, "n": n}))
			}
		}, 700 * time.Second, 1000 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			p := newIDP(t, tt.respond(w))
			o := w.options()
			o.HTTPClient = p.srv.Client()
			m, _ := build(t, oauthClient(p.url()), o)
			one := string(first(t, m, "b:1"))
			w.advance(tt.refresh - time.Second)
			if got := string(first(t, m, "b:1")); got != one || len(p.requests()) != 1 {
				t.Fatalf("1 s before the refresh: %d requests, message %q; want the cached token", len(p.requests()), got)
			}
			w.advance(2 * time.Second)
			two := string(first(t, m, "b:1"))
			if two == one || len(p.requests()) != 2 {
				t.Fatalf("1 s after the refresh time: %d requests; want a new token", len(p.requests()))
			}
			if got := string(first(t, m, "b:1")); got != two || len(p.requests()) != 2 {
				t.Errorf("the refreshed token is not cached")
			}
		})
	}
}

// TestOAuthConcurrentCallersShareOneFetch: callers that find no token
// while one is being fetched wait for that fetch.
func TestOAuthConcurrentCallersShareOneFetch(t *testing.T) {
	p := newIDP(t, tokens(time.Hour))
	p.gate = make(chan struct{})
	o := newWorld().options()
	o.HTTPClient = p.srv.Client()
	m, _ := build(t, oauthClient(p.url()), o)
	const callers = 8
	var wg sync.WaitGroup
	msgs := make([]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			_, msg, err := m.Authenticate(t.Context(), "b:1")
			msgs[i], errs[i] = string(msg), err
		})
	}
	s := m.oauth
	eventually(t, func() error {
		s.mu.Lock()
		waiting := s.waiting
		s.mu.Unlock()
		if n := len(p.requests()); n != 1 || waiting != callers-1 {
			return fmt.Errorf("%d requests, %d callers waiting", n, waiting)
		}
		return nil
	})
	close(p.gate)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || msgs[i] != bearer("token-1") {
			t.Errorf("caller %d: %q, %v", i, msgs[i], errs[i])
		}
	}
	if n := len(p.requests()); n != 1 || s.fetches != 1 {
		t.Errorf("%d requests and %d fetches, want 1", n, s.fetches)
	}
}

// eventually polls cond until it returns nil, for at most 10 s.
func eventually(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met in 10 s: %v", err)
		}
		tm := time.NewTimer(5 * time.Millisecond)
		<-tm.C
	}
}

func TestOAuthEndpointDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/token?tenant=x"
	srv.Close()
	// The default HTTP client, with a single attempt.
	m, _ := build(t, oauthClient(url, "sasl.login.retry.backoff.max.ms", "0"), newWorld().options())
	_, _, err := m.Authenticate(t.Context(), "b:1")
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{`SASL OAUTHBEARER for cluster "A" (broker b:1): token endpoint ` + strings.TrimSuffix(url, "?tenant=x") + ` is not reachable: `,
		"connection refused", "check sasl.oauthbearer.token.endpoint.url"}
	if miss := missing(err.Error(), want...); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
	if strings.Contains(err.Error(), "tenant") {
		t.Errorf("error %q shows the URL's query", err)
	}
}

func TestOAuthErrorResponses(t *testing.T) {
	tests := []struct {
		name     string
		respond  func(int) (int, string)
		extra    []string
		want     []string
		requests int
	}{
		{"401 with an RFC 6749 error", func(int) (int, string) {
			return 401, `{"error":"invalid_client","error_description":"Client authentication failed","access_token":"LEAKED"}`
		}, nil, []string{"answered HTTP 401 (error invalid_client: Client authentication failed); check the client id and secret (sasl.oauthbearer.client.credentials.client.id and .client.secret, or the JAAS options clientId and clientSecret) and sasl.oauthbearer.token.endpoint.url"}, 1},
		{"403 with okta's error", func(int) (int, string) {
			return 403, `{"errorCode":"E0000011","errorSummary":"Invalid token provided"}`
		}, nil, []string{"answered HTTP 403 (error E0000011: Invalid token provided)"}, 1},
		{"500 is retried until backoff.max.ms", func(int) (int, string) { return 500, `LEAKED body` },
			[]string{"sasl.login.retry.backoff.ms", "1", "sasl.login.retry.backoff.max.ms", "6"},
			[]string{"answered HTTP 500 (no OAuth error in the response body)", "(4 attempts in "}, 4},
		{"not JSON", func(int) (int, string) { return 200, `LEAKED` }, nil, []string{"answered with a malformed token response: the body is not a JSON object; check sasl.oauthbearer.token.endpoint.url"}, 1},
		{"no access token", func(int) (int, string) { return 200, `{"token_type":"LEAKED"}` }, nil, []string{"malformed token response: it has no access_token"}, 1},
		{"access token not a string", func(int) (int, string) { return 200, `{"access_token":5}` }, nil, []string{"access_token is not a string"}, 1},
		{"empty access token", func(int) (int, string) { return 200, `{"access_token":" "}` }, nil, []string{"access_token is empty"}, 1},
		{"opaque token without expires_in", func(int) (int, string) { return 200, `{"access_token":"LEAKED"}` }, nil,
			[]string{"it has no expires_in and access_token is not a JWT with an exp claim"}, 1},
		{"negative expires_in", func(int) (int, string) { return 200, `{"access_token":"LEAKED","expires_in":-5}` }, nil,
			[]string{"expires_in is not a positive number of seconds"}, 1},
		{"expired JWT", func(int) (int, string) {
			return 200, fmt.Sprintf(`{"access_token":%q}`, jwt(map[string]any{"exp": 1000, "LEAKED": 1}))
		}, nil, []string{"gave a token that expired at 1970-01-01T00:16:40Z, before now (2026-03-01T12:00:00Z); check this host's clock"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIDP(t, tt.respond)
			o := newWorld().options()
			o.HTTPClient = p.srv.Client()
			m, _ := build(t, oauthClient(p.url(), tt.extra...), o)
			_, _, err := m.Authenticate(t.Context(), "b:1")
			if err == nil {
				t.Fatal("no error")
			}
			want := append([]string{`SASL OAUTHBEARER for cluster "A"`, "token endpoint " + p.url()}, tt.want...)
			if miss := missing(err.Error(), want...); len(miss) > 0 {
				t.Errorf("error %q lacks %q", err, miss)
			}
			if strings.Contains(err.Error(), "LEAKED") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q quotes the response or the secret", err)
			}
			if n := len(p.requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}

func TestOAuthRetriesAServerError(t *testing.T) {
	p := newIDP(t, func(n int) (int, string) {
		if n < 3 {
			return 503, `{"error":"temporarily_unavailable"}`
		}
		return tokens(time.Hour)(n)
	})
	o := newWorld().options()
	o.HTTPClient = p.srv.Client()
	m, _ := build(t, oauthClient(p.url(), "sasl.login.retry.backoff.ms", "1"), o)
	if got := string(first(t, m, "b:1")); got != bearer("token-3") {
		t.Errorf("first message = %q", got)
	}
}

// TestOAuthRefreshFailureKeepsTheToken: a failed refresh keeps the current
// token until it expires and is tried again 10 s later, as Java's refresh
// thread does.
func TestOAuthRefreshFailureKeepsTheToken(t *testing.T) {
	w := newWorld()
	p := newIDP(t, func(n int) (int, string) {
		if n == 1 {
			return tokens(time.Hour)(n)
		}
		return 401, `{"error":"invalid_client"}`
	})
	o := w.options()
	o.HTTPClient = p.srv.Client()
	m, _ := build(t, oauthClient(p.url()), o)
	first(t, m, "b:1")
	w.advance(2900 * time.Second) // past the refresh time
	if got := string(first(t, m, "b:1")); got != bearer("token-1") || len(p.requests()) != 2 {
		t.Fatalf("after a failed refresh: %q after %d requests, want the current token after 2", got, len(p.requests()))
	}
	if !strings.Contains(w.log.String(), "OAuth token refresh failed; the current token is used until it expires") {
		t.Errorf("log %q lacks the refresh failure", w.log.String())
	}
	w.advance(9 * time.Second)
	first(t, m, "b:1")
	if n := len(p.requests()); n != 2 {
		t.Errorf("%d requests within 10 s of the failure, want no new one", n)
	}
	w.advance(2 * time.Second)
	first(t, m, "b:1")
	if n := len(p.requests()); n != 3 {
		t.Errorf("%d requests 11 s after the failure, want a new attempt", n)
	}
	w.advance(time.Hour)
	if _, _, err := m.Authenticate(t.Context(), "b:1"); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("after the token expired: %v, want the endpoint's error", err)
	}
}

func TestOAuthTokenFile(t *testing.T) {
	w := newWorld()
	exp := w.now.Add(time.Hour).Unix()
	one, two := jwt(map[string]any{"sub": "a", "exp": exp}), jwt(map[string]any{"sub": "b", "exp": exp + 3600})
	w.setFile("/var/run/token.jwt", []byte(one+"\n"))
	m, ws := build(t, oauthClient("file:///var/run/token.jwt", "sasl.jaas.config", oauthModule+" required;"), w.options())
	if len(ws) != 0 {
		t.Errorf("warnings = %q", warnings(ws))
	}
	if got := string(first(t, m, "b:1")); got != bearer(one) {
		t.Errorf("first message = %q", got)
	}
	w.setFile("/var/run/token.jwt", []byte(two))
	if got := string(first(t, m, "b:1")); got != bearer(one) {
		t.Errorf("before the refresh time: %q, want the first token", got)
	}
	w.advance(2881 * time.Second)
	if got := string(first(t, m, "b:1")); got != bearer(two) {
		t.Errorf("after the refresh time: %q, want the token now in the file", got)
	}
	w.setFile("/var/run/token.jwt", []byte("opaque"))
	w.advance(2 * time.Hour) // past the expiry of the second token
	if _, _, err := m.Authenticate(t.Context(), "b:1"); err == nil || !strings.Contains(err.Error(), "the token in /var/run/token.jwt is not a JWT with an exp claim") {
		t.Errorf("error = %v", err)
	}
	delete(w.files, "/var/run/token.jwt")
	if _, _, err := m.Authenticate(t.Context(), "b:1"); err == nil || !strings.Contains(err.Error(), "reading the token file /var/run/token.jwt: open /var/run/token.jwt: file does not exist") {
		t.Errorf("error = %v", err)
	}
}

func TestOAuthProblems(t *testing.T) {
	const url = "https://idp.example.com/token"
	tests := []struct {
		name  string
		props []string
		want  []string
	}{
		{"unsecured: no handler and no endpoint", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + ` required unsecuredLoginStringClaim_sub="admin";`},
			[]string{`key "A.sasl.mechanism"`, `cluster "A"`, "Kafka's unsecured test login, which sends unsigned tokens; Strait does not send unsigned tokens: set sasl.oauthbearer.token.endpoint.url to the token endpoint of your identity provider and sasl.login.callback.handler.class=" + oauthHandler}},
		{"unsecured: endpoint without handler", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.oauthbearer.token.endpoint.url", url},
			[]string{"ignores sasl.oauthbearer.token.endpoint.url and sends unsigned tokens; Strait does not send unsigned tokens: set sasl.login.callback.handler.class=" + oauthHandler}},
		{"unsecured handler named", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", unsecuredHandler},
			[]string{`key "A.sasl.login.callback.handler.class"`, "Strait does not send unsigned tokens"}},
		{"msk iam oauth handler", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", iamOAuthHandler},
			[]string{iamOAuthHandler + ": custom Java classes cannot be loaded; for MSK IAM use sasl.mechanism=AWS_MSK_IAM"}},
		{"custom handler", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler"},
			[]string{"sasl.login.callback.handler.class=io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler: custom Java classes cannot be loaded; use " + oauthHandler}},
		{"handler without endpoint", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler},
			[]string{"needs sasl.oauthbearer.token.endpoint.url"}},
		{"ftp endpoint", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", "ftp://idp/token"},
			[]string{`key "A.sasl.oauthbearer.token.endpoint.url"`, "must be an https, http or file URL, not ftp"}},
		{"not a URL", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", "idp/token"},
			[]string{"sasl.oauthbearer.token.endpoint.url is not a URL"}},
		{"no client id or secret", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + " required;", "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url},
			[]string{"the client credentials grant needs sasl.oauthbearer.client.credentials.client.id (or the JAAS option clientId) and sasl.oauthbearer.client.credentials.client.secret (or the JAAS option clientSecret)"}},
		{"jwt bearer retriever", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.oauthbearer.jwt.retriever.class", jwtBearerRetriever},
			[]string{`key "A.sasl.oauthbearer.jwt.retriever.class"`, "the JWT bearer grant is not supported"}},
		{"custom retriever", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.oauthbearer.jwt.retriever.class", "com.example.Retriever"},
			[]string{"sasl.oauthbearer.jwt.retriever.class=com.example.Retriever: custom Java classes cannot be loaded"}},
		{"file retriever with https", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.oauthbearer.jwt.retriever.class", fileJwtRetriever},
			[]string{"needs a file:// sasl.oauthbearer.token.endpoint.url"}},
		{"client credentials retriever with a file", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", "file:///t.jwt", "sasl.oauthbearer.jwt.retriever.class", clientCredsRetriever},
			[]string{"needs an https token endpoint, but sasl.oauthbearer.token.endpoint.url is a file"}},
		{"custom validator", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.oauthbearer.jwt.validator.class", "com.example.Validator"},
			[]string{"sasl.oauthbearer.jwt.validator.class=com.example.Validator: custom Java classes cannot be loaded"}},
		{"bad extension name", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + ` required clientId="a" clientSecret="b" extension_auth="x";`, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url},
			[]string{"option extension_auth: a SASL extension name must be letters only and not \"auth\""}},
		{"bad extension value", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + " required clientId=\"a\" clientSecret=\"b\" extension_x=\"\\001\";", "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url},
			[]string{"option extension_x: a SASL extension value must be printable ASCII"}},
		{"bad urlencode", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.oauthbearer.header.urlencode", "yes"},
			[]string{`key "A.sasl.oauthbearer.header.urlencode"`, `sasl.oauthbearer.header.urlencode must be true or false, got "yes"`}},
		{"bad retry backoff", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", oauthHandler, "sasl.oauthbearer.token.endpoint.url", url, "sasl.login.retry.backoff.ms", "-1"},
			[]string{"sasl.login.retry.backoff.ms must be between 0 and"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOneProblem(t, tt.props, newWorld().options(), tt.want...)
		})
	}
}

func TestOAuthWarnings(t *testing.T) {
	const url = "https://idp.example.com/token"
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{"http endpoint", []string{"sasl.oauthbearer.token.endpoint.url", "http://idp/token"},
			[]string{"sasl.oauthbearer.token.endpoint.url is http: the client secret and the tokens travel unencrypted; use https"}},
		{"4.1 key overrides the jaas option", []string{"sasl.oauthbearer.client.credentials.client.id", "other"},
			[]string{"sasl.oauthbearer.client.credentials.client.id is set, so the JAAS option clientId has no effect"}},
		{"claim names", []string{"sasl.oauthbearer.sub.claim.name", "client_id"},
			[]string{"sasl.oauthbearer.sub.claim.name: Java clients use it only to check the claims of the token they receive"}},
		{"unsecured and ssl jaas options", []string{"sasl.jaas.config", oauthModule + ` required clientId="a" clientSecret="b" unsecuredLoginStringClaim_sub="x" ssl.truststore.location="/t.jks" foo="bar";`},
			[]string{"option unsecuredLoginStringClaim_sub belongs to Kafka's unsecured test login and has no effect",
				"option ssl.truststore.location (TLS for the token endpoint) is not honoured",
				"option foo of OAuthBearerLoginModule has no effect in Strait"}},
		{"default retriever and validator", []string{"sasl.oauthbearer.jwt.retriever.class", defaultJwtRetriever, "sasl.oauthbearer.jwt.validator.class", defaultJwtValidator}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ws := build(t, oauthClient(url, tt.extra...), newWorld().options())
			got := warnings(ws)
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestOAuthWaiterOfACancelledFetchFetchesItself: when the caller that
// started a fetch gives up, a waiting caller fetches the token itself.
func TestOAuthWaiterOfACancelledFetchFetchesItself(t *testing.T) {
	p := newIDP(t, tokens(time.Hour))
	gate := make(chan struct{})
	p.gate = gate
	o := newWorld().options()
	o.HTTPClient = p.srv.Client()
	m, _ := build(t, oauthClient(p.url()), o)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var leadErr, waitErr error
	var waitMsg []byte
	wg.Go(func() { _, _, leadErr = m.Authenticate(ctx, "b:1") })
	eventually(t, func() error {
		if n := len(p.requests()); n != 1 {
			return fmt.Errorf("%d requests", n)
		}
		return nil
	})
	wg.Go(func() { _, waitMsg, waitErr = m.Authenticate(t.Context(), "b:1") })
	eventually(t, func() error {
		m.oauth.mu.Lock()
		defer m.oauth.mu.Unlock()
		if m.oauth.waiting != 1 {
			return fmt.Errorf("%d waiting", m.oauth.waiting)
		}
		return nil
	})
	p.mu.Lock()
	p.gate = nil // the second request is answered at once
	p.mu.Unlock()
	cancel()
	wg.Wait()
	close(gate)
	if leadErr == nil || !strings.Contains(leadErr.Error(), "context canceled") {
		t.Errorf("the cancelled caller: %v", leadErr)
	}
	if waitErr != nil || string(waitMsg) != bearer("token-2") {
		t.Errorf("the waiting caller: %q, %v; want the token of its own fetch", waitMsg, waitErr)
	}
}

// Login fetches the token before any broker is asked, and a caller whose
// deadline ends while the fetch still retries learns why it failed, not
// only that its time ran out (strait check showed "context deadline
// exceeded" for a token endpoint that was down).
func TestOAuthLoginGivesTheLastFailure(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/token"
	srv.Close()
	m, _ := build(t, oauthClient(url, "sasl.login.retry.backoff.ms", "20", "sasl.login.retry.backoff.max.ms", "60000"), newWorld().options())
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := m.Login(ctx)
	var login *LoginError
	if !errors.As(err, &login) {
		t.Fatalf("Login = %v, want a *LoginError", err)
	}
	if miss := missing(err.Error(), `SASL OAUTHBEARER for cluster "A"`, "is not reachable", "connection refused", "gave up"); len(miss) > 0 {
		t.Errorf("error %q lacks %q", err, miss)
	}
}
