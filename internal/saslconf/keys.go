package saslconf

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"strait/internal/config"
)

// Login module classes.
const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	iamModule   = "software.amazon.msk.auth.iam.IAMLoginModule"
	krb5Module  = "com.sun.security.auth.module.Krb5LoginModule"
)

// loginModule is what a supported login module provides.
type loginModule struct {
	mechs []string // the mechanisms it serves; the first is its usual one
	short string   // the simple class name, for messages
}

var loginModules = map[string]loginModule{
	plainModule: {mechs: []string{Plain}, short: "PlainLoginModule"},
	scramModule: {mechs: []string{ScramSHA256, ScramSHA512}, short: "ScramLoginModule"},
	oauthModule: {mechs: []string{OAuthBearer}, short: "OAuthBearerLoginModule"},
	iamModule:   {mechs: []string{AWSMSKIAM}, short: "IAMLoginModule"},
	krb5Module:  {mechs: []string{GSSAPI}, short: "Krb5LoginModule"},
}

func moduleNames() []string {
	return []string{plainModule, scramModule, oauthModule, iamModule, krb5Module}
}

// loginModuleFor returns the login module class for mechanism m.
func loginModuleFor(m string) string {
	for _, name := range moduleNames() {
		if slices.Contains(loginModules[name].mechs, m) {
			return name
		}
	}
	return krb5Module
}

// Callback handler and login classes Strait knows. Kafka's own defaults
// may be written out; anything else is a custom Java class.
const (
	defaultClientHandler = "org.apache.kafka.common.security.authenticator.SaslClientCallbackHandler"
	defaultLoginHandler  = "org.apache.kafka.common.security.authenticator.AbstractLogin$DefaultLoginCallbackHandler"
	iamClientHandler     = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
	iamOAuthHandler      = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
	oauthHandler         = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oauthHandler3        = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	unsecuredHandler     = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)

// defaultLoginClass is Kafka's sasl.login.class for each mechanism.
var defaultLoginClass = map[string]string{
	Plain:       "org.apache.kafka.common.security.authenticator.DefaultLogin",
	ScramSHA256: "org.apache.kafka.common.security.authenticator.DefaultLogin",
	ScramSHA512: "org.apache.kafka.common.security.authenticator.DefaultLogin",
	AWSMSKIAM:   "org.apache.kafka.common.security.authenticator.DefaultLogin",
	OAuthBearer: "org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerRefreshingLogin",
	GSSAPI:      "org.apache.kafka.common.security.kerberos.KerberosLogin",
}

// classes checks sasl.login.class and the callback handler classes; the
// OAUTHBEARER login callback handler is checked by oauth.
func (b *builder) classes() {
	if v, p, ok := b.prop("sasl.login.class"); ok && v != "" && v != defaultLoginClass[b.mech] {
		b.problem(p.Origin, "sasl.login.class=%s: custom Java classes cannot be loaded; remove the setting (Strait logs in for %s itself)", v, b.mech)
	}
	if v, p, ok := b.prop("sasl.client.callback.handler.class"); ok && v != "" {
		switch {
		case v == defaultClientHandler:
		case v == iamClientHandler && b.mech == AWSMSKIAM:
		case v == iamClientHandler:
			b.problem(p.Origin, "sasl.client.callback.handler.class=%s serves only sasl.mechanism=AWS_MSK_IAM, not %s; remove it", v, b.mech)
		default:
			b.problem(p.Origin, "sasl.client.callback.handler.class=%s: custom Java classes cannot be loaded; remove the setting", v)
		}
	} else if b.mech == AWSMSKIAM {
		b.warn(b.mechOrigin(), "sasl.client.callback.handler.class is not set: Java clients need %s for AWS_MSK_IAM; Strait gets the credentials without it", iamClientHandler)
	}
	if b.mech == OAuthBearer {
		return
	}
	if v, p, ok := b.prop("sasl.login.callback.handler.class"); ok && v != "" {
		switch v {
		case defaultLoginHandler:
		case oauthHandler, oauthHandler3, unsecuredHandler:
			b.warn(p.Origin, "sasl.login.callback.handler.class=%s has no effect with %s", v, b.mechDisplay())
		default:
			b.problem(p.Origin, "sasl.login.callback.handler.class=%s: custom Java classes cannot be loaded; remove the setting", v)
		}
	}
}

// Keys of Kafka's client ConfigDef that only a broker uses.
var brokerKeys = map[string]bool{
	"sasl.oauthbearer.jwks.endpoint.url": true, "sasl.oauthbearer.jwks.endpoint.refresh.ms": true,
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": true, "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": true,
	"sasl.oauthbearer.clock.skew.seconds": true, "sasl.oauthbearer.expected.audience": true,
	"sasl.oauthbearer.expected.issuer": true, "sasl.enabled.mechanisms": true,
	"sasl.mechanism.inter.broker.protocol": true, "sasl.mechanism.controller.protocol": true,
	"sasl.server.callback.handler.class": true, "sasl.server.max.receive.size": true,
	"sasl.kerberos.principal.to.local.rules": true,
}

// Keys that matter only for one family of mechanisms.
var (
	oauthKeys = []string{
		"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope", "sasl.oauthbearer.client.credentials.client.id",
		"sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.header.urlencode",
		"sasl.oauthbearer.jwt.retriever.class", "sasl.oauthbearer.jwt.validator.class",
		"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
		"sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
		"sasl.login.refresh.buffer.seconds", "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
		"sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms",
	}
	kerberosKeys = []string{
		"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
		"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
	}
)

// leftovers warns about every sasl.* key that nothing used.
func (b *builder) leftovers() {
	for _, p := range b.c.Props {
		if !strings.HasPrefix(p.Key, "sasl.") || b.used[p.Key] {
			continue
		}
		switch {
		case brokerKeys[p.Key]:
			b.warn(p.Origin, "%s is a broker-side setting with no effect on a client", p.Key)
		case strings.HasPrefix(p.Key, "sasl.oauthbearer.assertion."):
			b.warn(p.Origin, "%s configures the JWT bearer grant, which Strait does not support; it has no effect", p.Key)
		case b.mech == "" && (slices.Contains(oauthKeys, p.Key) || slices.Contains(kerberosKeys, p.Key)):
			// The mechanism is bad: whether the key has an effect is unknown.
		case len(b.problems) > 0 && (b.mech == OAuthBearer && slices.Contains(oauthKeys, p.Key) || b.mech == GSSAPI && slices.Contains(kerberosKeys, p.Key)):
			// Left unread because of a problem reported already.
		case slices.Contains(oauthKeys, p.Key) || slices.Contains(kerberosKeys, p.Key):
			b.warn(p.Origin, "%s has no effect with %s", p.Key, b.mechDisplay())
		default:
			b.warn(p.Origin, "%s is not a Kafka client setting; it has no effect", p.Key)
		}
	}
}

// unusedOptions warns about JAAS options the login module does not use.
func (b *builder) unusedOptions() {
	if b.jaas == nil {
		return
	}
	warned := map[string]bool{}
	for _, o := range b.jaas.Options {
		if b.usedOpts[o.Key] || warned[o.Key] {
			continue
		}
		warned[o.Key] = true
		b.warn(b.jaasOrigin(), "sasl.jaas.config: option %s of %s has no effect in Strait", o.Key, loginModules[b.jaas.Module].short)
	}
}

// typedKey is a key of Kafka's ConfigDef with a type Strait checks.
type typedKey struct {
	kind    byte // 'd' DOUBLE, 'l' LONG, INT or SHORT, 'b' BOOLEAN
	def     float64
	lo, hi  float64
	boolDef bool
}

// typedKeys are checked whatever the mechanism, as Kafka's ConfigDef
// checks every key it defines: a Java client with a bad value does not
// start.
var typedKeys = map[string]typedKey{
	"sasl.login.refresh.window.factor":                    {kind: 'd', def: 0.8, lo: 0.5, hi: 1},
	"sasl.login.refresh.window.jitter":                    {kind: 'd', def: 0.05, lo: 0, hi: 0.25},
	"sasl.login.refresh.min.period.seconds":               {kind: 'l', def: 60, lo: 0, hi: 900},
	"sasl.login.refresh.buffer.seconds":                   {kind: 'l', def: 300, lo: 0, hi: 3600},
	"sasl.login.connect.timeout.ms":                       {kind: 'l', def: 10000, lo: 0, hi: math.MaxInt32},
	"sasl.login.read.timeout.ms":                          {kind: 'l', def: 30000, lo: 0, hi: math.MaxInt32},
	"sasl.login.retry.backoff.ms":                         {kind: 'l', def: 100, lo: 0, hi: maxMillis},
	"sasl.login.retry.backoff.max.ms":                     {kind: 'l', def: 10000, lo: 0, hi: maxMillis},
	"sasl.oauthbearer.header.urlencode":                   {kind: 'b'},
	"sasl.kerberos.ticket.renew.window.factor":            {kind: 'd', def: 0.8, lo: math.Inf(-1), hi: math.Inf(1)},
	"sasl.kerberos.ticket.renew.jitter":                   {kind: 'd', def: 0.05, lo: math.Inf(-1), hi: math.Inf(1)},
	"sasl.kerberos.min.time.before.relogin":               {kind: 'l', def: 60000, lo: math.MinInt64, hi: math.MaxInt64},
	"sasl.oauthbearer.jwks.endpoint.refresh.ms":           {kind: 'l', def: 3600000, lo: math.MinInt64, hi: math.MaxInt64},
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms":     {kind: 'l', def: 100, lo: math.MinInt64, hi: math.MaxInt64},
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": {kind: 'l', def: 10000, lo: math.MinInt64, hi: math.MaxInt64},
	"sasl.oauthbearer.clock.skew.seconds":                 {kind: 'l', def: 30, lo: math.MinInt32, hi: math.MaxInt32},
}

// maxMillis is the largest LONG of milliseconds that fits a time.Duration.
const maxMillis = float64(math.MaxInt64 / int64(time.Millisecond))

// checkTyped parses every typed key present, reporting bad values, and
// keeps the results for num and flag.
func (b *builder) checkTyped() {
	b.nums = map[string]float64{}
	b.flags = map[string]bool{}
	for _, p := range b.c.Props {
		t, ok := typedKeys[p.Key]
		if !ok {
			continue
		}
		v := strings.TrimSpace(p.Value.Reveal())
		switch t.kind {
		case 'b':
			switch strings.ToLower(v) {
			case "true":
				b.flags[p.Key] = true
			case "false":
				b.flags[p.Key] = false
			default:
				b.problem(p.Origin, "%s must be true or false, got %q", p.Key, v)
			}
		case 'd':
			f, err := strconv.ParseFloat(v, 64)
			switch {
			case err != nil || math.IsNaN(f):
				b.problem(p.Origin, "%s must be a number, got %q", p.Key, v)
			case f < t.lo || f > t.hi:
				b.problem(p.Origin, "%s must be between %g and %g, got %s", p.Key, t.lo, t.hi, v)
			default:
				b.nums[p.Key] = f
			}
		case 'l':
			n, err := strconv.ParseInt(v, 10, 64)
			switch {
			case err != nil:
				b.problem(p.Origin, "%s must be an integer, got %q", p.Key, v)
			case float64(n) < t.lo || float64(n) > t.hi:
				b.problem(p.Origin, "%s must be between %.0f and %.0f, got %d", p.Key, t.lo, t.hi, n)
			default:
				b.nums[p.Key] = float64(n)
			}
		}
	}
}

// num returns typed key k (its default when unset or bad) and marks it
// used.
func (b *builder) num(k string) float64 {
	b.used[k] = true
	if v, ok := b.nums[k]; ok {
		return v
	}
	return typedKeys[k].def
}

// millis is num for a key of milliseconds or seconds.
func (b *builder) duration(k string, unit time.Duration) time.Duration {
	return time.Duration(b.num(k)) * unit
}

// flag returns boolean key k (its default when unset or bad) and marks it
// used.
func (b *builder) flag(k string) bool {
	b.used[k] = true
	if v, ok := b.flags[k]; ok {
		return v
	}
	return typedKeys[k].boolDef
}

// userPass reads the username and password options of PlainLoginModule or
// ScramLoginModule.
func (b *builder) userPass() (string, config.Secret, bool) {
	user, okU := b.opt("username")
	pass, okP := b.opt("password")
	short := loginModules[b.jaas.Module].short
	var missing []string
	if !okU || user == "" {
		missing = append(missing, "username")
	}
	if !okP || pass == "" {
		missing = append(missing, "password")
	}
	if len(missing) > 0 {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: %s needs a non-empty %s; add %s", short, strings.Join(missing, " and "), optionExample(missing))
		return "", config.Secret{}, false
	}
	return user, config.NewSecret(pass), true
}

func optionExample(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + `="..."`
	}
	return strings.Join(parts, " ")
}

func (b *builder) plain() *mechanism {
	user, pass, ok := b.userPass()
	if b.jaas.Module == scramModule && b.optTrue("tokenauth") {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: tokenauth=true has no effect with sasl.mechanism=PLAIN (delegation tokens authenticate with SCRAM)")
	}
	if !ok {
		return nil
	}
	inner := plain.Plain(func(context.Context) (plain.Auth, error) {
		return plain.Auth{User: user, Pass: pass.Reveal()}, nil
	})
	return &mechanism{name: Plain, cluster: b.c.Cluster, inner: inner}
}

func (b *builder) scram() *mechanism {
	user, pass, ok := b.userPass()
	// ScramLoginModule: tokenauth=true marks a delegation token (KIP-48),
	// which franz-go sends as the tokenauth extension.
	token := b.jaas.Module == scramModule && b.optTrue("tokenauth")
	if !ok {
		return nil
	}
	fn := func(context.Context) (scram.Auth, error) {
		return scram.Auth{User: user, Pass: pass.Reveal(), IsToken: token}, nil
	}
	inner := scram.Sha256(fn)
	if b.mech == ScramSHA512 {
		inner = scram.Sha512(fn)
	}
	return &mechanism{name: b.mech, cluster: b.c.Cluster, inner: inner}
}
