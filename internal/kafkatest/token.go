package kafkatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// TokenPath is the path of a TokenEndpoint's token URL.
const TokenPath = "/oauth2/token"

// TokenEndpointOptions configure a TokenEndpoint; the zero value is a good default.
type TokenEndpointOptions struct {
	// Lifetime is how long each token is valid (exp - iat, and expires_in); default an hour.
	Lifetime time.Duration
	// Subject is the sub of every token, the principal the broker sees; default
	// "strait-oauth".
	Subject string
}

// TokenEndpoint is an OAuth 2 token endpoint on 127.0.0.1 for the OAUTH listener: it
// serves the client-credentials grant (RFC 6749 section 4.4: a form POST with
// grant_type=client_credentials, the client authenticated with HTTP Basic, as Kafka's
// OAuthBearerLoginCallbackHandler sends it, or with client_id and client_secret in the
// form) and answers {"access_token": JWT, "token_type": "bearer", "expires_in": seconds}.
// Its JWTs are signed by the key of the brokers' JWKS and carry sub, iss, aud, iat, nbf and
// exp (and scope, if the request asked for one), so the OAUTH listener accepts them.
type TokenEndpoint struct {
	// URL is the token URL (sasl.oauthbearer.token.endpoint.url).
	URL string
	// ClientID and ClientSecret are the only client credentials it accepts.
	ClientID     string
	ClientSecret string
	// Subject is the sub of its tokens.
	Subject string

	sec      *Security
	srv      *httptest.Server
	mu       sync.Mutex
	lifetime time.Duration
	issued   atomic.Int64
	refused  atomic.Int64
}

// NewTokenEndpoint starts a token endpoint for the OAUTH listener of the test bed s
// describes; it stops when the test ends.
func (s *Security) NewTokenEndpoint(t testing.TB, opts TokenEndpointOptions) *TokenEndpoint {
	t.Helper()
	if opts.Lifetime <= 0 {
		opts.Lifetime = time.Hour
	}
	if opts.Subject == "" {
		opts.Subject = "strait-oauth"
	}
	e := &TokenEndpoint{
		ClientID:     "strait-client",
		ClientSecret: canary("oauth"),
		Subject:      opts.Subject,
		sec:          s,
		lifetime:     opts.Lifetime,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting the token endpoint: %v", err)
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc(TokenPath, e.serveToken)
	e.srv = httptest.NewUnstartedServer(mux)
	e.srv.Listener = ln
	e.srv.Start()
	e.URL = e.srv.URL + TokenPath
	t.Cleanup(e.Stop)
	return e
}

// Issued returns the number of tokens the endpoint has issued, e.g. to check that a
// client fetched a new one before the old expired.
func (e *TokenEndpoint) Issued() int { return int(e.issued.Load()) }

// Refused returns the number of requests it refused (bad client credentials or request).
func (e *TokenEndpoint) Refused() int { return int(e.refused.Load()) }

// SetLifetime changes the lifetime of the tokens issued from now on.
func (e *TokenEndpoint) SetLifetime(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lifetime = d
}

// Stop closes the endpoint: later requests find nothing listening on its port (connection
// refused), as when the identity provider is down. It waits for requests in flight and may
// be called more than once.
func (e *TokenEndpoint) Stop() { e.srv.Close() }

// Fetch asks the endpoint for a token with its own client credentials, as a Kafka client
// would, and returns the access token.
func (e *TokenEndpoint) Fetch(ctx context.Context) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(e.ClientID), url.QueryEscape(e.ClientSecret))
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching a token from %s: %w", e.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading the answer of %s: %w", e.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token endpoint %s answered %s: %s", e.URL, resp.Status, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint %s answered no access_token: %s", e.URL, body)
	}
	return tok.AccessToken, nil
}

// Mechanism returns a franz-go OAUTHBEARER mechanism that fetches a new token from the
// endpoint for every authentication (each connection and each re-authentication).
func (e *TokenEndpoint) Mechanism() sasl.Mechanism {
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := e.Fetch(ctx)
		return oauth.Auth{Token: tok}, err
	})
}

func (e *TokenEndpoint) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		e.refuse(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		e.refuse(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		e.refuse(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q: only client_credentials", g))
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		// RFC 6749 section 2.3.1: both are form-encoded before they are joined.
		id, _ = url.QueryUnescape(u)
		secret, _ = url.QueryUnescape(p)
	}
	if id != e.ClientID || secret != e.ClientSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="strait-kafkatest"`)
		e.refuse(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	e.mu.Lock()
	lifetime := e.lifetime
	e.mu.Unlock()
	claims := e.sec.Claims(e.Subject, lifetime)
	scope := r.PostForm.Get("scope")
	if scope != "" {
		claims["scope"] = scope
	}
	tok, err := e.sec.SignJWT(claims)
	if err != nil {
		e.refuse(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	e.issued.Add(1)
	answer := map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": int(lifetime.Seconds())}
	if scope != "" {
		answer["scope"] = scope
	}
	writeJSON(w, http.StatusOK, answer)
}

func (e *TokenEndpoint) refuse(w http.ResponseWriter, status int, code, description string) {
	e.refused.Add(1)
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
