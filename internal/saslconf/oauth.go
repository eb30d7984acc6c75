package saslconf

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"strait/internal/config"
)

// Kafka 4.1's JWT retriever and validator classes (KIP-1139).
const (
	jwtRetrieverPkg        = "org.apache.kafka.common.security.oauthbearer."
	defaultJwtRetriever    = jwtRetrieverPkg + "DefaultJwtRetriever"
	clientCredsRetriever   = jwtRetrieverPkg + "ClientCredentialsJwtRetriever"
	fileJwtRetriever       = jwtRetrieverPkg + "FileJwtRetriever"
	jwtBearerRetriever     = jwtRetrieverPkg + "JwtBearerJwtRetriever"
	defaultJwtValidator    = jwtRetrieverPkg + "DefaultJwtValidator"
	clientJwtValidator     = jwtRetrieverPkg + "ClientJwtValidator"
	reloginRetryAfterFails = 10 * time.Second // Kafka's DELAY_SECONDS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS
	maxTokenResponse       = 1 << 20
)

var (
	extensionName  = regexp.MustCompile(`^[A-Za-z]+$`)           // Kafka's SaslExtensions key pattern
	extensionValue = regexp.MustCompile(`^[\x21-\x7E \t\r\n]+$`) // and value pattern
)

// oauth builds OAUTHBEARER with the client credentials grant (RFC 6749
// 4.4) against sasl.oauthbearer.token.endpoint.url, or a token read from a
// file:// URL, as Kafka's OAuthBearerLoginCallbackHandler does.
func (b *builder) oauth() *mechanism {
	handler, hp, ok := b.prop("sasl.login.callback.handler.class")
	endpoint, ep, hasEndpoint := b.prop("sasl.oauthbearer.token.endpoint.url")
	switch {
	case !ok || handler == "" || handler == unsecuredHandler:
		o := b.mechOrigin()
		if ok {
			o = hp.Origin
		}
		if hasEndpoint {
			b.problem(o, "OAUTHBEARER without sasl.login.callback.handler.class uses Kafka's unsecured test handler, which ignores sasl.oauthbearer.token.endpoint.url and sends unsigned tokens; Strait does not send unsigned tokens: set sasl.login.callback.handler.class=%s", oauthHandler)
		} else {
			b.problem(o, "OAUTHBEARER without sasl.login.callback.handler.class and sasl.oauthbearer.token.endpoint.url is Kafka's unsecured test login, which sends unsigned tokens; Strait does not send unsigned tokens: set sasl.oauthbearer.token.endpoint.url to the token endpoint of your identity provider and sasl.login.callback.handler.class=%s", oauthHandler)
		}
		return nil
	case handler == iamOAuthHandler:
		b.problem(hp.Origin, "sasl.login.callback.handler.class=%s: custom Java classes cannot be loaded; for MSK IAM use sasl.mechanism=AWS_MSK_IAM with sasl.jaas.config=%s required;", handler, iamModule)
		return nil
	case handler != oauthHandler && handler != oauthHandler3:
		b.problem(hp.Origin, "sasl.login.callback.handler.class=%s: custom Java classes cannot be loaded; use %s", handler, oauthHandler)
		return nil
	}
	if !hasEndpoint || endpoint == "" {
		b.problem(hp.Origin, "%s needs sasl.oauthbearer.token.endpoint.url: set it to the token endpoint of your identity provider (https://...) or to a file:// URL of a token", handler)
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" {
		b.problem(ep.Origin, "sasl.oauthbearer.token.endpoint.url is not a URL; set it to the token endpoint of your identity provider (https://...) or to a file:// URL of a token")
		return nil
	}
	scheme := strings.ToLower(u.Scheme)
	var file string
	switch scheme {
	case "https":
	case "http":
		b.warn(ep.Origin, "sasl.oauthbearer.token.endpoint.url is http: the client secret and the tokens travel unencrypted; use https")
	case "file":
		file = u.Path
		if file == "" {
			file = u.Opaque
		}
	default:
		b.problem(ep.Origin, "sasl.oauthbearer.token.endpoint.url must be an https, http or file URL, not %s", scheme)
		return nil
	}
	if !b.oauthClasses(file != "") {
		return nil
	}

	s := &tokenSource{
		endpoint: displayURL(u),
		url:      u.String(),
		file:     file,
		now:      b.o.Now,
		readFile: b.o.ReadFile,
		log:      b.o.Log.With("component", "saslconf", "cluster", b.c.Cluster, "mechanism", OAuthBearer),
		refresh: refreshConfig{
			factor:    b.num("sasl.login.refresh.window.factor"),
			jitter:    b.num("sasl.login.refresh.window.jitter"),
			minPeriod: b.duration("sasl.login.refresh.min.period.seconds", time.Second),
			buffer:    b.duration("sasl.login.refresh.buffer.seconds", time.Second),
		},
		backoff:    b.duration("sasl.login.retry.backoff.ms", time.Millisecond),
		backoffMax: b.duration("sasl.login.retry.backoff.max.ms", time.Millisecond),
		rand:       rand.Float64,
	}
	connect := b.duration("sasl.login.connect.timeout.ms", time.Millisecond)
	read := b.duration("sasl.login.read.timeout.ms", time.Millisecond)
	urlencode := b.flag("sasl.oauthbearer.header.urlencode")
	for _, k := range []string{"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name"} {
		if _, p, ok := b.prop(k); ok {
			b.warn(p.Origin, "%s: Java clients use it only to check the claims of the token they receive; Strait does not check them (the broker does)", k)
		}
	}

	id, idOK := b.configOrJAAS("sasl.oauthbearer.client.credentials.client.id", "clientId")
	secret, secretOK := b.configOrJAAS("sasl.oauthbearer.client.credentials.client.secret", "clientSecret")
	scope, _ := b.configOrJAAS("sasl.oauthbearer.scope", "scope")
	if file == "" {
		var missing []string
		if !idOK || strings.TrimSpace(id) == "" {
			missing = append(missing, "sasl.oauthbearer.client.credentials.client.id (or the JAAS option clientId)")
		}
		if !secretOK || strings.TrimSpace(secret) == "" {
			missing = append(missing, "sasl.oauthbearer.client.credentials.client.secret (or the JAAS option clientSecret)")
		}
		if len(missing) > 0 {
			b.problem(hp.Origin, "the client credentials grant needs %s; set the client id and secret your identity provider issued", strings.Join(missing, " and "))
		}
		s.clientID = strings.TrimSpace(id)
		s.clientSecret = config.NewSecret(strings.TrimSpace(secret))
		s.scope = strings.TrimSpace(scope)
		s.urlencode = urlencode
	} else if idOK || secretOK {
		b.warn(ep.Origin, "the client id and secret have no effect: sasl.oauthbearer.token.endpoint.url is a file, the token is read from it")
	}

	s.extensions = b.extensions()
	b.oauthOptions()
	if o := b.o.HTTPClient; o != nil {
		s.httpc = o
	} else if file == "" {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: connect}).DialContext
		t.TLSHandshakeTimeout = connect
		t.ResponseHeaderTimeout = read
		t.DisableKeepAlives = true // one request an hour: no idle connection to keep
		s.httpc = &http.Client{Transport: t, Timeout: connect + read}
	}
	if len(b.problems) > 0 {
		return nil
	}
	inner := oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := s.token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: tok.Reveal(), Extensions: s.extensions}, nil
	})
	m := &mechanism{name: OAuthBearer, cluster: b.c.Cluster, inner: inner, oauth: s}
	if b.o.HTTPClient == nil && s.httpc != nil {
		m.onClose = append(m.onClose, s.httpc.CloseIdleConnections)
	}
	return m
}

// oauthClasses checks Kafka 4.1's sasl.oauthbearer.jwt.retriever.class and
// jwt.validator.class.
func (b *builder) oauthClasses(file bool) bool {
	ok := true
	if v, p, set := b.prop("sasl.oauthbearer.jwt.retriever.class"); set && v != "" {
		switch v {
		case defaultJwtRetriever:
		case clientCredsRetriever:
			if file {
				b.problem(p.Origin, "sasl.oauthbearer.jwt.retriever.class=%s needs an https token endpoint, but sasl.oauthbearer.token.endpoint.url is a file; use %s or an https URL", v, fileJwtRetriever)
				ok = false
			}
		case fileJwtRetriever:
			if !file {
				b.problem(p.Origin, "sasl.oauthbearer.jwt.retriever.class=%s needs a file:// sasl.oauthbearer.token.endpoint.url; use %s for an https token endpoint", v, clientCredsRetriever)
				ok = false
			}
		case jwtBearerRetriever:
			b.problem(p.Origin, "sasl.oauthbearer.jwt.retriever.class=%s: the JWT bearer grant is not supported; use the client credentials grant (%s)", v, clientCredsRetriever)
			ok = false
		default:
			b.problem(p.Origin, "sasl.oauthbearer.jwt.retriever.class=%s: custom Java classes cannot be loaded; remove the setting", v)
			ok = false
		}
	}
	if v, p, set := b.prop("sasl.oauthbearer.jwt.validator.class"); set && v != "" {
		switch v {
		case defaultJwtValidator, clientJwtValidator:
		default:
			b.problem(p.Origin, "sasl.oauthbearer.jwt.validator.class=%s: custom Java classes cannot be loaded; remove the setting", v)
			ok = false
		}
	}
	return ok
}

// configOrJAAS reads a Kafka 4.1 key, else the Kafka 3.x JAAS option, as
// ClientCredentialsJwtRetriever does.
func (b *builder) configOrJAAS(key, opt string) (string, bool) {
	jv, jok := b.opt(opt)
	v, p, ok := b.prop(key)
	if ok {
		if jok {
			b.warn(p.Origin, "%s is set, so the JAAS option %s has no effect", key, opt)
		}
		return v, true
	}
	return jv, jok
}

// extensions reads the JAAS options extension_<name> (SASL extensions,
// KIP-342), checked as Kafka's OAuthBearerClientInitialResponse does.
func (b *builder) extensions() map[string]string {
	var ext map[string]string
	for _, o := range b.jaas.Options {
		name, ok := strings.CutPrefix(o.Key, "extension_")
		if !ok {
			continue
		}
		b.usedOpts[o.Key] = true
		v := o.Value.Reveal()
		switch {
		case !extensionName.MatchString(name) || name == "auth":
			b.problem(b.jaasOrigin(), "sasl.jaas.config: option %s: a SASL extension name must be letters only and not \"auth\"", o.Key)
		case !extensionValue.MatchString(v):
			b.problem(b.jaasOrigin(), "sasl.jaas.config: option %s: a SASL extension value must be printable ASCII, spaces, tabs or line breaks", o.Key)
		default:
			if ext == nil {
				ext = map[string]string{}
			}
			ext[name] = v
		}
	}
	return ext
}

// oauthOptions handles the OAuthBearerLoginModule options that Strait
// does not honour.
func (b *builder) oauthOptions() {
	for _, o := range b.jaas.Options {
		switch {
		case b.usedOpts[o.Key]:
		case strings.HasPrefix(o.Key, "unsecuredLogin"):
			b.usedOpts[o.Key] = true
			b.warn(b.jaasOrigin(), "sasl.jaas.config: option %s belongs to Kafka's unsecured test login and has no effect with %s", o.Key, oauthHandler)
		case strings.HasPrefix(o.Key, "ssl."):
			b.usedOpts[o.Key] = true
			b.warn(b.jaasOrigin(), "sasl.jaas.config: option %s (TLS for the token endpoint) is not honoured: Strait verifies the token endpoint against the system's trusted certificates", o.Key)
		}
	}
}

// displayURL is the endpoint for messages: no user info, no query.
func displayURL(u *url.URL) string {
	if strings.EqualFold(u.Scheme, "file") {
		return "file://" + u.Path
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// refreshConfig is Kafka's ExpiringCredentialRefreshConfig.
type refreshConfig struct {
	factor, jitter    float64
	minPeriod, buffer time.Duration
}

// refreshAt is when a token obtained at now, valid from start until
// expire, is refreshed: ExpiringCredentialRefreshingLogin.refreshMs.
// r is a uniform random number in [0, 1) for the jitter.
func (c refreshConfig) refreshAt(now, start, expire time.Time, r float64) time.Time {
	pct := c.factor + c.jitter*r
	if now.Add(c.minPeriod + c.buffer).After(expire) {
		// Too short a lifetime for both buffers: ignore them.
		return now.Add(time.Duration(float64(expire.Sub(now)) * pct))
	}
	proposed := start.Add(time.Duration(float64(expire.Sub(start)) * pct))
	if end := expire.Add(-c.buffer); proposed.After(end) {
		return end
	}
	if earliest := now.Add(c.minPeriod); proposed.Before(earliest) {
		return earliest
	}
	return proposed
}

// tokenSource fetches OAuth tokens and caches one until its refresh time.
// Order of events: the first caller past the refresh time becomes the
// fetch's leader and fetches on its own goroutine (the package starts
// none); callers that come meanwhile use the current token while it is
// still valid, or else wait for the leader's result; if the leader gives
// up (its context ends), a waiter fetches in turn. A failed refresh keeps
// the current token until it expires, as Java's refresh thread does, and
// is tried again 10 s later.
type tokenSource struct {
	endpoint     string // for messages
	url          string
	file         string // a token file instead of an endpoint
	clientID     string
	clientSecret config.Secret
	scope        string
	urlencode    bool
	extensions   map[string]string
	httpc        *http.Client
	now          func() time.Time
	readFile     func(string) ([]byte, error)
	log          *slog.Logger
	refresh      refreshConfig
	backoff      time.Duration
	backoffMax   time.Duration
	rand         func() float64

	mu        sync.Mutex
	cur       *tokenValue // nil until the first fetch
	refreshAt time.Time
	retryAt   time.Time // after a failed refresh: no new attempt before
	flight    *fetch    // the fetch in progress, if any
	waiting   int       // callers waiting for flight, for tests
	fetches   int       // fetches started, for tests
}

// tokenValue is one access token and its lifetime.
type tokenValue struct {
	token   config.Secret
	issued  time.Time
	expires time.Time
}

// fetch is one token request shared by concurrent callers.
type fetch struct {
	done chan struct{}
	tok  *tokenValue
	err  error
}

// token returns a usable token, fetching one when there is none or the
// current one has passed its refresh time.
func (s *tokenSource) token(ctx context.Context) (config.Secret, error) {
	for {
		s.mu.Lock()
		now := s.now()
		if c := s.cur; c != nil && (now.Before(s.refreshAt) || now.Before(c.expires) && now.Before(s.retryAt)) {
			s.mu.Unlock()
			return c.token, nil
		}
		f := s.flight
		if c := s.cur; f != nil && c != nil && now.Before(c.expires) {
			// Another caller is refreshing; the current token is still good.
			s.mu.Unlock()
			return c.token, nil
		}
		lead := f == nil
		if lead {
			f = &fetch{done: make(chan struct{})}
			s.flight = f
			s.fetches++
		} else {
			s.waiting++
		}
		s.mu.Unlock()

		if lead {
			tok, err := s.fetch(ctx)
			s.finish(f, tok, err)
		} else {
			select {
			case <-f.done:
			case <-ctx.Done():
				s.mu.Lock()
				s.waiting--
				s.mu.Unlock()
				return config.Secret{}, ctx.Err()
			}
			s.mu.Lock()
			s.waiting--
			s.mu.Unlock()
		}
		if f.err == nil {
			return f.tok.token, nil
		}
		if !lead && isContextErr(f.err) && ctx.Err() == nil {
			continue // the leader gave up, not us: fetch ourselves
		}
		return config.Secret{}, f.err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// finish records the result of the fetch f and wakes its waiters.
func (s *tokenSource) finish(f *fetch, tok *tokenValue, err error) {
	s.mu.Lock()
	now := s.now()
	switch {
	case err == nil:
		s.cur = tok
		s.refreshAt = s.refresh.refreshAt(now, tok.issued, tok.expires, s.rand())
		s.retryAt = time.Time{}
		f.tok = tok
		s.log.Debug("OAuth token fetched", "endpoint", s.endpoint, "expires", tok.expires, "refresh_at", s.refreshAt)
	case s.cur != nil && now.Before(s.cur.expires) && !isContextErr(err):
		s.retryAt = now.Add(reloginRetryAfterFails)
		f.tok = s.cur
		s.log.Warn("OAuth token refresh failed; the current token is used until it expires", "expires", s.cur.expires, "retry_at", s.retryAt, "err", err)
	default:
		f.err = err
	}
	s.flight = nil
	s.mu.Unlock()
	close(f.done)
}

// fetch gets a new token, retrying as Kafka's Retry does: waits of
// sasl.login.retry.backoff.ms doubling each time, for at most
// sasl.login.retry.backoff.max.ms in all, and no retry of a response that
// will not change (HTTP 4xx other than 408/429, a malformed answer).
func (s *tokenSource) fetch(ctx context.Context) (*tokenValue, error) {
	if s.file != "" {
		return s.readToken()
	}
	start := s.now()
	var waited time.Duration
	backoff := s.backoff
	var last error // the last failure that was not the context ending
	for attempt := 1; ; attempt++ {
		tok, retry, err := s.post(ctx)
		if ctx.Err() != nil && last != nil {
			return nil, fmt.Errorf("%w (%d attempts; gave up: %w)", last, attempt-1, ctx.Err())
		}
		if err == nil || !retry {
			return tok, err
		}
		last = err
		// The clock may be a test's that stands still: the waits count too.
		elapsed := max(s.now().Sub(start), waited)
		wait := min(backoff, s.backoffMax-elapsed)
		if backoff < s.backoffMax {
			backoff *= 2
		}
		if wait <= 0 {
			if attempt > 1 {
				err = fmt.Errorf("%w (%d attempts in %v)", err, attempt, elapsed.Round(time.Millisecond))
			}
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			// The last failure says why; the context only when it ended.
			return nil, fmt.Errorf("%w (%d attempts; gave up: %w)", err, attempt, ctx.Err())
		case <-t.C:
		}
		waited += wait
	}
}

// readToken reads the token of a file:// endpoint, as Kafka's
// FileTokenRetriever: the file holds a JWT, whose exp claim is its expiry.
// Strait reads the file again at each refresh, so a token rotated into
// the file is picked up (Java reads it once).
func (s *tokenSource) readToken() (*tokenValue, error) {
	b, err := s.readFile(s.file)
	if err != nil {
		return nil, fmt.Errorf("reading the token file %s: %w; check sasl.oauthbearer.token.endpoint.url", s.file, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil, fmt.Errorf("the token file %s is empty; check sasl.oauthbearer.token.endpoint.url", s.file)
	}
	exp, ok := jwtExpiry(tok)
	if !ok {
		return nil, fmt.Errorf("the token in %s is not a JWT with an exp claim; check sasl.oauthbearer.token.endpoint.url", s.file)
	}
	return s.valid(tok, exp, "the token file "+s.file)
}

// valid checks that a new token has not expired already.
func (s *tokenSource) valid(tok string, exp time.Time, from string) (*tokenValue, error) {
	now := s.now()
	if !exp.After(now) {
		return nil, fmt.Errorf("%s gave a token that expired at %s, before now (%s); check this host's clock", from, exp.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return &tokenValue{token: config.NewSecret(tok), issued: now, expires: exp}, nil
}

// unretryable are the HTTP statuses Kafka's token retriever does not retry.
var unretryable = map[int]bool{400: true, 401: true, 402: true, 403: true, 404: true, 405: true, 406: true, 407: true,
	409: true, 410: true, 411: true, 412: true, 413: true, 414: true, 415: true, 501: true, 505: true}

// post makes one token request. Its errors name the endpoint without its
// query or user info and never quote the request or a token.
func (s *tokenSource) post(ctx context.Context) (*tokenValue, bool, error) {
	form := "grant_type=client_credentials"
	if s.scope != "" {
		form += "&scope=" + javaURLEncode(s.scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(form))
	if err != nil {
		return nil, false, fmt.Errorf("token endpoint %s: %w; check sasl.oauthbearer.token.endpoint.url", s.endpoint, err)
	}
	id, secret := s.clientID, s.clientSecret.Reveal()
	if s.urlencode {
		id, secret = javaURLEncode(id), javaURLEncode(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := s.httpc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL may carry a query
		}
		return nil, true, fmt.Errorf("token endpoint %s is not reachable: %v; check sasl.oauthbearer.token.endpoint.url", s.endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return nil, true, fmt.Errorf("reading the answer of token endpoint %s: %v; check sasl.oauthbearer.token.endpoint.url", s.endpoint, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil, !unretryable[resp.StatusCode], fmt.Errorf("token endpoint %s answered HTTP %d (%s); check the client id and secret (sasl.oauthbearer.client.credentials.client.id and .client.secret, or the JAAS options clientId and clientSecret) and sasl.oauthbearer.token.endpoint.url",
			s.endpoint, resp.StatusCode, oauthError(body))
	}
	tok, exp, what := parseTokenResponse(body, s.now())
	if what != "" {
		return nil, false, fmt.Errorf("token endpoint %s answered with a malformed token response: %s; check sasl.oauthbearer.token.endpoint.url", s.endpoint, what)
	}
	t, err := s.valid(tok, exp, "token endpoint "+s.endpoint)
	return t, false, err
}

// parseTokenResponse reads access_token and its expiry from a token
// response: expires_in (a number of seconds, or a string of one as some
// providers send), else the exp claim of the token as a JWT. what says
// what is wrong, without quoting the body.
func parseTokenResponse(body []byte, now time.Time) (tok string, exp time.Time, what string) {
	var r struct {
		AccessToken json.RawMessage `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&r); err != nil {
		return "", time.Time{}, "the body is not a JSON object"
	}
	if len(r.AccessToken) == 0 || string(r.AccessToken) == "null" {
		return "", time.Time{}, "it has no access_token"
	}
	if err := json.Unmarshal(r.AccessToken, &tok); err != nil {
		return "", time.Time{}, "access_token is not a string"
	}
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", time.Time{}, "access_token is empty"
	}
	if len(r.ExpiresIn) > 0 && string(r.ExpiresIn) != "null" {
		raw := strings.Trim(string(r.ExpiresIn), `"`)
		secs, err := strconv.ParseFloat(raw, 64)
		if err != nil || secs <= 0 || secs > 1e9 {
			return "", time.Time{}, "expires_in is not a positive number of seconds"
		}
		return tok, now.Add(time.Duration(secs * float64(time.Second))), ""
	}
	e, ok := jwtExpiry(tok)
	if !ok {
		return "", time.Time{}, "it has no expires_in and access_token is not a JWT with an exp claim"
	}
	return tok, e, ""
}

// jwtExpiry reads the exp claim (seconds since the epoch) of a JWT.
func jwtExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if err := d.Decode(&claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// oauthError is the RFC 6749 error of an error response ("error:
// error_description"; Okta's errorCode/errorSummary too), never the rest of
// the body, which could hold anything.
func oauthError(body []byte) string {
	var e struct {
		Error        string `json:"error"`
		Description  string `json:"error_description"`
		ErrorCode    string `json:"errorCode"`
		ErrorSummary string `json:"errorSummary"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" && e.ErrorCode == "" {
		return "no OAuth error in the response body"
	}
	code, desc := e.Error, e.Description
	if code == "" {
		code, desc = e.ErrorCode, e.ErrorSummary
	}
	s := "error " + printable(code, 100)
	if desc != "" {
		s += ": " + printable(desc, 300)
	}
	return s
}

// printable drops control characters and cuts s to n runes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			b.WriteString("...")
			break
		}
		if r < ' ' || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
		n--
	}
	return b.String()
}

// javaURLEncode is java.net.URLEncoder.encode(s, UTF-8): letters, digits
// and ".-*_" stay, a space becomes '+', every other byte is %XX.
func javaURLEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
