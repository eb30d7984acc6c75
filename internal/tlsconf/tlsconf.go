package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"strait/internal/config"
)

// Options injects the outside world (nil fields: os.ReadFile, time.Now).
type Options struct {
	ReadFile func(string) ([]byte, error)
	Now      func() time.Time
}

// Build returns the TLS config for client c (used when security.protocol is
// SSL or SASL_SSL). Problems are config.Problem values (errors.Join of them),
// each naming the key's Origin and the fix; warnings are config.Warning. The
// error text and warnings never contain a password or key material. Keys
// other than ssl.* are ignored.
//
// ServerName is left empty for the dialer to fill in per broker (franz-go
// uses the host of the broker's address), so one config serves every broker
// of the cluster.
func Build(c config.Client, o Options) (*tls.Config, []config.Warning, error) {
	b := &builder{c: c, props: map[string]config.ClientProp{}, readFile: o.ReadFile, now: o.Now}
	if b.readFile == nil {
		b.readFile = os.ReadFile
	}
	if b.now == nil {
		b.now = time.Now
	}
	for _, p := range c.Props {
		if strings.HasPrefix(p.Key, "ssl.") {
			b.props[p.Key] = p
		}
	}
	cfg := &tls.Config{Time: o.Now}
	b.settings()
	if cert, ok := b.keystore(); ok {
		cfg.Certificates = []tls.Certificate{cert}
	}
	roots := b.truststore()
	cfg.RootCAs = roots
	b.identification(cfg, roots)
	b.versions(cfg)
	if len(b.problems) > 0 {
		return nil, b.warnings, errors.Join(b.problems...)
	}
	return cfg, b.warnings, nil
}

// builder collects the problems and warnings of one Build.
type builder struct {
	c        config.Client
	props    map[string]config.ClientProp // the ssl.* keys only
	readFile func(string) ([]byte, error)
	now      func() time.Time
	problems []error
	warnings []config.Warning
}

// lookup returns key's value, its property and whether it is set. A key
// set to the empty string is set, as in Java: an empty password is a
// password.
func (b *builder) lookup(key string) (string, config.ClientProp, bool) {
	p, ok := b.props[key]
	if !ok {
		return "", config.ClientProp{Key: key}, false
	}
	return p.Value.Reveal(), p, true
}

// value returns key's trimmed value, or def when it is unset or empty.
func (b *builder) value(key, def string) string {
	if v, _, _ := b.lookup(key); strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// blank records a problem for each of keys that is set to an empty value,
// which Java would use as it is (an empty path or PEM value fails there
// too), and reports whether there was one.
func (b *builder) blank(keys ...string) bool {
	found := false
	for _, k := range keys {
		if v, p, ok := b.lookup(k); ok && strings.TrimSpace(v) == "" {
			b.problemf(p, "%s is empty, which Kafka takes as an empty value, not as unset, and cannot use; set %s or remove it", k, b.ref(k))
			found = true
		}
	}
	return found
}

// emptyNote explains a password that does not work when it is empty.
func (b *builder) emptyNote(key string) string {
	if v, _, ok := b.lookup(key); ok && v == "" {
		return " (" + key + " is set to the empty string, which Java takes as a password, not as unset)"
	}
	return ""
}

// shown is v, a value of key, as a message may show it: [redacted] when
// the property is secret (resolved through a config provider, say).
func (b *builder) shown(key, v string) string {
	if p, ok := b.props[key]; ok && p.Secret {
		return "[redacted]"
	}
	return v
}

// ref is how the operator writes key for this client: as it was written if
// it is set, else with the prefix one of the near keys was written with
// (B.consumer.ssl.keystore.location suggests B.consumer.ssl.keystore.password),
// else at cluster scope.
func (b *builder) ref(key string, near ...string) string {
	if p, ok := b.props[key]; ok && p.Origin.Key != "" {
		return p.Origin.Key
	}
	for _, n := range near {
		if p, ok := b.props[n]; ok && strings.HasSuffix(p.Origin.Key, n) {
			return strings.TrimSuffix(p.Origin.Key, n) + key
		}
	}
	return b.c.Cluster + "." + key
}

// origin is where a problem with p points: p's own origin, or its key when
// p is not set (a problem about a key that is missing points at the key
// that needs it instead).
func origin(p config.ClientProp) config.Origin {
	if p.Origin.Key == "" {
		return config.Origin{Key: p.Key}
	}
	return p.Origin
}

// problemf records a problem at p, prefixed with the cluster alias.
func (b *builder) problemf(p config.ClientProp, format string, args ...any) {
	b.problems = append(b.problems, config.Problem{
		Origin:  origin(p),
		Message: fmt.Sprintf("cluster %q: ", b.c.Cluster) + fmt.Sprintf(format, args...),
	})
}

// warnf records a warning at p, prefixed with the cluster alias.
func (b *builder) warnf(p config.ClientProp, format string, args ...any) {
	b.warnings = append(b.warnings, config.Warning{
		Origin:  origin(p),
		Message: fmt.Sprintf("cluster %q: ", b.c.Cluster) + fmt.Sprintf(format, args...),
	})
}

// Kafka's client ssl.* keys (SslConfigs) that settings does not judge
// itself: each is read by keystore, truststore, identification or versions.
var readKeys = map[string]bool{
	"ssl.keystore.type": true, "ssl.keystore.location": true, "ssl.keystore.password": true,
	"ssl.key.password": true, "ssl.keystore.key": true, "ssl.keystore.certificate.chain": true,
	"ssl.truststore.type": true, "ssl.truststore.location": true, "ssl.truststore.password": true,
	"ssl.truststore.certificates": true, "ssl.endpoint.identification.algorithm": true,
	"ssl.protocol": true, "ssl.enabled.protocols": true, "ssl.cipher.suites": true,
}

// brokerKeys are ssl.* settings of brokers (and Connect's REST server) that
// Kafka clients ignore.
var brokerKeys = map[string]bool{
	"ssl.client.auth": true, "ssl.principal.mapping.rules": true,
	"ssl.allow.dn.changes": true, "ssl.allow.san.changes": true,
}

// defaultEngineFactory is the class Kafka uses when ssl.engine.factory.class
// is unset; naming it changes nothing.
const defaultEngineFactory = "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory"

// settings judges the ssl.* keys that Go cannot use, and unknown ones.
func (b *builder) settings() {
	for _, p := range b.c.Props {
		if _, ok := b.props[p.Key]; !ok || readKeys[p.Key] {
			continue
		}
		v := strings.TrimSpace(p.Value.Reveal())
		shown := b.shown(p.Key, v)
		switch {
		case p.Key == "ssl.keymanager.algorithm":
			if v != "" && !strings.EqualFold(v, "SunX509") {
				b.warnf(p, "ssl.keymanager.algorithm=%s has no effect in Go: Strait presents the keystore's one client certificate itself; remove %s", shown, b.ref(p.Key))
			}
		case p.Key == "ssl.trustmanager.algorithm":
			if v != "" && !strings.EqualFold(v, "PKIX") {
				b.warnf(p, "ssl.trustmanager.algorithm=%s has no effect in Go: Strait verifies the broker's chain with Go's x509 verifier against the truststore; remove %s", shown, b.ref(p.Key))
			}
		case p.Key == "ssl.provider":
			if v != "" {
				b.warnf(p, "ssl.provider=%s has no effect in Go: Strait uses Go's crypto/tls, not a Java security provider; remove %s", shown, b.ref(p.Key))
			}
		case p.Key == "ssl.secure.random.implementation":
			if v != "" {
				b.warnf(p, "ssl.secure.random.implementation=%s has no effect in Go: Go's TLS always uses crypto/rand; remove %s", shown, b.ref(p.Key))
			}
		case p.Key == "ssl.engine.factory.class":
			if v != "" && v != defaultEngineFactory {
				b.problemf(p, "ssl.engine.factory.class=%s cannot be honoured: Strait cannot load Java classes; express the TLS setup with the standard ssl.* keys and remove %s", shown, b.ref(p.Key))
			}
		case brokerKeys[p.Key]:
			b.warnf(p, "%s is a broker setting that Kafka clients ignore; it has no effect here; remove %s", p.Key, b.ref(p.Key))
		default:
			b.warnf(p, "%s is not a Kafka client TLS setting and is ignored; check the spelling of %s", p.Key, b.ref(p.Key))
		}
	}
}
