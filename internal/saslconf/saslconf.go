// Package saslconf builds a franz-go SASL mechanism from the Java client
// settings of one MM2 client: sasl.mechanism, sasl.jaas.config and the
// other sasl.* keys, read as Kafka's Java client reads them.
//
// Exactly one login module is accepted in sasl.jaas.config, and only these;
// nothing named in a JAAS line is ever loaded or looked up:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule        PLAIN
//	org.apache.kafka.common.security.scram.ScramLoginModule        SCRAM-SHA-256, SCRAM-SHA-512
//	org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule  OAUTHBEARER (client credentials or a token file)
//	software.amazon.msk.auth.iam.IAMLoginModule                    AWS_MSK_IAM
//	com.sun.security.auth.module.Krb5LoginModule                   GSSAPI (keytab or ticket cache)
//
// What a JVM would take from its own system properties is read from the
// environment instead: the Kerberos configuration from KRB5_CONFIG or
// /etc/krb5.conf (Java: -Djava.security.krb5.conf), the ticket cache from
// the ticketCache option, KRB5CCNAME or /tmp/krb5cc_<uid>, and AWS
// credentials and settings through the AWS SDK's standard chain
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_CONFIG_FILE, web identity, ECS and
// EC2 roles). A sasl.jaas.config is required: the JVM-wide
// java.security.auth.login.config file is not read.
//
// Nothing secret (passwords, client secrets, tokens, keys) appears in an
// error, warning or log line, or in the printed mechanism.
package saslconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"

	"strait/internal/config"
)

// Options injects the outside world; nil fields get defaults.
type Options struct {
	// HTTPClient calls the OAuth token endpoint. nil: a client without
	// keep-alives whose dial and response-header timeouts are
	// sasl.login.connect.timeout.ms and sasl.login.read.timeout.ms
	// (10 s and 30 s when unset; Java waits forever).
	HTTPClient *http.Client
	// Now is the clock of token lifetimes and refreshes; nil: time.Now.
	Now func() time.Time
	// Getenv reads KRB5_CONFIG and KRB5CCNAME; nil: os.Getenv. The AWS SDK
	// and franz-go's AWS_MSK_IAM signer read their own variables
	// (AWS_REGION, AWS_PROFILE, ...) from the process environment.
	Getenv func(string) string
	// ReadFile reads krb5.conf, keytabs, ticket caches and token files;
	// nil: os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Log receives token refreshes and their failures; nil: discarded.
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// The SASL mechanisms Strait supports, by Kafka's names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
	AWSMSKIAM   = "AWS_MSK_IAM"
	GSSAPI      = "GSSAPI"
)

var mechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer, AWSMSKIAM, GSSAPI}

// Build returns the SASL mechanism for client c, for a security.protocol of
// SASL_PLAINTEXT or SASL_SSL. Settings that cannot be honoured are
// config.Problem values (joined with errors.Join), each naming the key, the
// cluster alias and the fix; settings without effect are warnings. Build
// reads local files (krb5.conf, keytab, ticket cache) and the AWS shared
// configuration but talks to no server: tokens, credentials and tickets are
// fetched when a connection authenticates.
//
// The mechanism is a sasl.ClosingMechanism: Close (kgo calls it when the
// client closes) ends a Kerberos client's ticket renewal and the token
// endpoint's idle connections. Give each kgo client its own mechanism.
func Build(c config.Client, o Options) (sasl.Mechanism, []config.Warning, error) {
	b := newBuilder(c, o.withDefaults())
	m := b.build()
	if len(b.problems) > 0 {
		if m != nil {
			m.Close()
		}
		return nil, b.warnings, errors.Join(b.problems...)
	}
	return m, b.warnings, nil
}

// builder collects the problems and warnings of one Build.
type builder struct {
	c     config.Client
	o     Options
	props map[string]config.ClientProp // the sasl.* keys
	used  map[string]bool              // sasl.* keys consumed
	// anchor is where a missing key is reported: security.protocol, the
	// setting that asked for SASL.
	anchor config.Origin

	mech     string
	mechProp config.ClientProp // zero Origin.Key when sasl.mechanism is unset
	jaas     *jaasEntry
	jaasProp config.ClientProp
	usedOpts map[string]bool // JAAS options consumed
	nums     map[string]float64
	flags    map[string]bool

	problems []error
	warnings []config.Warning
}

func newBuilder(c config.Client, o Options) *builder {
	b := &builder{c: c, o: o, props: map[string]config.ClientProp{}, used: map[string]bool{}, usedOpts: map[string]bool{}}
	for _, p := range c.Props {
		switch {
		case p.Key == "security.protocol":
			b.anchor = p.Origin
		case strings.HasPrefix(p.Key, "sasl."):
			b.props[p.Key] = p
		}
	}
	if b.anchor.Key == "" {
		b.anchor = config.Origin{Key: c.Cluster + ".security.protocol"}
	}
	return b
}

func (b *builder) problem(o config.Origin, format string, args ...any) {
	b.problems = append(b.problems, config.Problem{Origin: o, Message: fmt.Sprintf("cluster %q: ", b.c.Cluster) + fmt.Sprintf(format, args...)})
}

func (b *builder) warn(o config.Origin, format string, args ...any) {
	b.warnings = append(b.warnings, config.Warning{Origin: o, Message: fmt.Sprintf("cluster %q: ", b.c.Cluster) + fmt.Sprintf(format, args...)})
}

// prop returns sasl key k, trimmed as Kafka's ConfigDef trims, and marks it
// used.
func (b *builder) prop(k string) (string, config.ClientProp, bool) {
	p, ok := b.props[k]
	if !ok {
		return "", p, false
	}
	b.used[k] = true
	return strings.TrimSpace(p.Value.Reveal()), p, true
}

// opt returns JAAS option k and marks it used.
func (b *builder) opt(k string) (string, bool) {
	b.usedOpts[k] = true
	return b.jaas.get(k)
}

// optTrue reads a JAAS boolean option as Java's login modules do:
// "true".equalsIgnoreCase(value).
func (b *builder) optTrue(k string) bool {
	v, _ := b.opt(k)
	return strings.EqualFold(v, "true")
}

// jaasOrigin is where problems with JAAS options are reported.
func (b *builder) jaasOrigin() config.Origin { return b.jaasProp.Origin }

// mechOrigin is where problems with the mechanism are reported.
func (b *builder) mechOrigin() config.Origin {
	if b.mechProp.Origin.Key != "" {
		return b.mechProp.Origin
	}
	return b.anchor
}

func (b *builder) mechDisplay() string {
	if b.mechProp.Origin.Key == "" {
		return "sasl.mechanism=GSSAPI (Kafka's default when sasl.mechanism is not set)"
	}
	return "sasl.mechanism=" + b.mech
}

func (b *builder) build() *mechanism {
	b.checkTyped()
	if !b.mechanism() {
		b.leftovers()
		return nil
	}
	if !b.parseJAAS() {
		b.leftovers()
		return nil
	}
	mod, ok := loginModules[b.jaas.Module]
	if !ok {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: login module %s is not supported (custom Java classes cannot be loaded); use one of %s", className(b.jaas.Module), strings.Join(moduleNames(), ", "))
		b.leftovers()
		return nil
	}
	if !b.agree(mod) {
		b.leftovers()
		return nil
	}
	b.classes()
	var m *mechanism
	switch b.mech {
	case Plain:
		m = b.plain()
	case ScramSHA256, ScramSHA512:
		m = b.scram()
	case OAuthBearer:
		m = b.oauth()
	case AWSMSKIAM:
		m = b.aws()
	case GSSAPI:
		m = b.kerberos()
	}
	b.leftovers()
	if m != nil {
		b.unusedOptions() // after a problem, options may be left unread
	}
	return m
}

// mechanism reads sasl.mechanism (Kafka's default is GSSAPI). Kafka's
// names are case-sensitive: the broker refuses "plain".
func (b *builder) mechanism() bool {
	v, p, ok := b.prop("sasl.mechanism")
	if !ok {
		b.mech = GSSAPI
		return true
	}
	b.mechProp = p
	for _, m := range mechanisms {
		if v == m {
			b.mech = v
			return true
		}
	}
	for _, m := range mechanisms {
		if strings.EqualFold(v, m) {
			b.problem(p.Origin, "sasl.mechanism=%s: mechanism names are case-sensitive in Kafka and the broker would refuse this one; set sasl.mechanism=%s", v, m)
			return false
		}
	}
	b.problem(p.Origin, "sasl.mechanism=%q is not supported; use one of %s", v, strings.Join(mechanisms, ", "))
	return false
}

func (b *builder) parseJAAS() bool {
	v, p, ok := b.prop("sasl.jaas.config")
	if !ok || v == "" {
		o := b.anchor
		if ok {
			o = p.Origin
		}
		b.problem(o, "SASL needs %s.sasl.jaas.config (Strait does not read the JVM's java.security.auth.login.config file); set it to the KafkaClient entry, e.g. %s",
			b.c.Cluster, jaasExample(b.mech))
		return false
	}
	b.jaasProp = p
	e, err := parseJAAS(v)
	if err != nil {
		b.problem(p.Origin, "sasl.jaas.config: %v", err)
		return false
	}
	b.jaas = e
	seen := map[string]bool{}
	for _, o := range e.Options {
		if seen[o.Key] {
			b.warn(p.Origin, "sasl.jaas.config: option %s is given more than once; the last one is used, as in Java", o.Key)
		}
		seen[o.Key] = true
	}
	return true
}

// agree checks that sasl.mechanism and the login module fit together.
// Java's PLAIN and SCRAM clients both take the user name and password that
// PlainLoginModule and ScramLoginModule put into the JAAS subject, so those
// two mix; that only earns a warning.
func (b *builder) agree(mod loginModule) bool {
	for _, m := range mod.mechs {
		if m == b.mech {
			return true
		}
	}
	userPass := func(m string) bool { return m == Plain || m == ScramSHA256 || m == ScramSHA512 }
	if userPass(b.mech) && userPass(mod.mechs[0]) {
		b.warn(b.mechOrigin(), "%s is used with the login module %s, which is meant for %s; Java clients accept the mix and so does Strait, using its username and password",
			b.mechDisplay(), b.jaas.Module, strings.Join(mod.mechs, " or "))
		return true
	}
	want := loginModuleFor(b.mech)
	b.problem(b.mechOrigin(), "%s does not match the login module %s in sasl.jaas.config, which provides %s; set sasl.mechanism=%s, or use %s for %s",
		b.mechDisplay(), b.jaas.Module, strings.Join(mod.mechs, " or "), mod.mechs[0], want, b.mech)
	return false
}

// jaasExample is a sasl.jaas.config line for mechanism m, for messages.
func jaasExample(m string) string {
	switch m {
	case Plain:
		return `org.apache.kafka.common.security.plain.PlainLoginModule required username="..." password="...";`
	case ScramSHA256, ScramSHA512:
		return `org.apache.kafka.common.security.scram.ScramLoginModule required username="..." password="...";`
	case OAuthBearer:
		return `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`
	case AWSMSKIAM:
		return `software.amazon.msk.auth.iam.IAMLoginModule required;`
	}
	return `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/path/client.keytab" principal="client@REALM";`
}

// mechanism is what Build returns: a franz-go mechanism that adds the
// cluster to its errors, closes what it owns, and never prints what it
// holds.
type mechanism struct {
	name    string
	cluster string
	inner   sasl.Mechanism
	hint    func(error) string // extra advice for an authentication error
	onClose []func()
	once    sync.Once

	oauth *tokenSource // OAUTHBEARER only, for tests
}

var _ sasl.ClosingMechanism = (*mechanism)(nil)

// Name implements sasl.Mechanism.
func (m *mechanism) Name() string { return m.name }

// Authenticate implements sasl.Mechanism.
func (m *mechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	s, first, err := m.inner.Authenticate(ctx, host)
	if err != nil {
		hint := ""
		if m.hint != nil {
			hint = m.hint(err)
		}
		return nil, nil, &LoginError{msg: fmt.Sprintf("SASL %s for cluster %q (broker %s): %v%s", m.name, m.cluster, host, err, hint), err: err}
	}
	return s, first, nil
}

// Login gets what the mechanism needs before it can authenticate to any
// broker (an OAuth token), so that a token endpoint that is down or refuses
// Strait is reported as that, not as brokers that do not answer. It is a
// no-op for the other mechanisms.
func (m *mechanism) Login(ctx context.Context) error {
	if m.oauth == nil {
		return nil
	}
	if _, err := m.oauth.token(ctx); err != nil {
		return &LoginError{msg: fmt.Sprintf("SASL %s for cluster %q: %v", m.name, m.cluster, err), err: err}
	}
	return nil
}

// LoginError is a failure of a mechanism to log in or authenticate. Its
// message names the cluster and says what to check; the cause is wrapped.
type LoginError struct {
	msg string
	err error
}

func (e *LoginError) Error() string { return e.msg }
func (e *LoginError) Unwrap() error { return e.err }

// Close implements sasl.ClosingMechanism; it is idempotent.
func (m *mechanism) Close() {
	m.once.Do(func() {
		for _, f := range m.onClose {
			f()
		}
	})
}

// String says what the mechanism is, never what it holds.
func (m *mechanism) String() string {
	return fmt.Sprintf("SASL %s for cluster %q", m.name, m.cluster)
}

// GoString is String, so %#v prints no credentials either.
func (m *mechanism) GoString() string { return m.String() }

// Format makes every fmt verb print String.
func (m *mechanism) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(m.String())) }

// LogValue implements slog.LogValuer.
func (m *mechanism) LogValue() slog.Value { return slog.StringValue(m.String()) }
