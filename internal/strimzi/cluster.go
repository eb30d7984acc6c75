package strimzi

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// aliasPattern is the CRD's pattern for cluster aliases.
var aliasPattern = regexp.MustCompile(`^[a-zA-Z0-9._\-]{1,100}$`)

// Strimzi's KafkaMirrorMaker2ClusterSpec.FORBIDDEN_PREFIXES and their
// exceptions: the operator sets these itself (from tls and authentication)
// or they belong to Connect, so a cluster's config cannot set them.
var (
	forbiddenClusterPrefixes = []string{"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic",
		"ssl.", "sasl.", "security.", "listeners", "plugin.path", "rest.", "bootstrap.servers",
		"consumer.interceptor.classes", "producer.interceptor.classes"}
	allowedClusterKeys = map[string]bool{"ssl.endpoint.identification.algorithm": true, "ssl.cipher.suites": true,
		"ssl.protocol": true, "ssl.enabled.protocols": true}
)

const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	oauthLogin  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
)

// clusterSpec reads a KafkaMirrorMaker2ClusterSpec (spec.clusters[i],
// spec.target, mirrors[i].source). A cluster without alias or bootstrap
// servers cannot be converted at all.
func (c *converter) clusterSpec(p string, n *yaml.Node, target bool) (*cluster, error) {
	o := c.newObject(p, n)
	if o == nil {
		return nil, nil
	}
	alias, _ := o.scalar("alias")
	switch {
	case alias == "":
		return nil, c.inputError(o.line, "%s: no alias: every cluster has one", p)
	case !aliasPattern.MatchString(alias):
		return nil, c.inputError(o.lineOf("alias"), "%s.alias %q does not match the CRD's pattern %s", p, alias, aliasPattern)
	}
	cl := &cluster{alias: alias, from: p, res: c.resource, line: o.line}
	bootstrap, _ := o.scalar("bootstrapServers")
	if bootstrap == "" {
		return nil, c.inputError(o.line, "%s (%s): no bootstrapServers", p, alias)
	}
	cl.props = append(cl.props, prop{"bootstrap.servers", bootstrap})

	protocol := "PLAINTEXT"
	if tls := o.take("tls"); tls != nil {
		protocol = "SSL"
		c.trust(cl, o.sub("tls"), tls)
	}
	var auth []prop
	if a := o.object("authentication"); a != nil {
		protocol, auth = c.authentication(cl, a, protocol)
	}
	cl.props = append(cl.props, prop{"security.protocol", protocol})
	cl.props = append(cl.props, auth...)

	if cfg := o.object("config"); cfg != nil {
		for _, k := range cfg.keys {
			v := cfg.take(k)
			if forbiddenClusterKey(k) {
				c.unmapped(cfg.lineOf(k), cfg.sub(k), "Strimzi does not allow this key in a cluster's config (it sets it from bootstrapServers, tls and authentication, or it is Connect's) and ignores it; not converted")
				continue
			}
			if s, ok := c.scalarValue(cfg.sub(k), v); ok {
				cl.props = append(cl.props, prop{k, s})
			}
		}
	}
	known := []string{"alias", "bootstrapServers", "tls", "authentication", "config"}
	if target {
		known = append(known, "groupId", "configStorageTopic", "statusStorageTopic", "offsetStorageTopic")
		for _, f := range []string{"groupId", "configStorageTopic", "statusStorageTopic"} {
			o.note(f, "Kafka Connect's group and internal topics; Strait has no Connect worker (its progress is the consumer group strait-<source alias> on this cluster)")
		}
		if v, ok := o.scalar("offsetStorageTopic"); ok {
			c.takeover = true
			c.note(o.lineOf("offsetStorageTopic"), o.sub("offsetStorageTopic"), "Strimzi's MirrorMaker 2 kept its progress in %q under connector names like %q; Strait takes over only MM2 dedicated mode's progress (connector MirrorSourceConnector), so it starts each partition by auto.offset.reset (earliest by default: the target receives the records again); to start at the end instead, set <source alias>.consumer.auto.offset.reset = latest for the first run", v, "<source>-><target>.MirrorSourceConnector")
		}
	}
	o.done(known...)
	return cl, nil
}

func forbiddenClusterKey(k string) bool {
	if allowedClusterKeys[k] {
		return false
	}
	for _, p := range forbiddenClusterPrefixes {
		if strings.HasPrefix(strings.ToLower(k), p) {
			return true
		}
	}
	return false
}

// secretFile is where the file of a Secret's key is mounted.
func (c *converter) secretFile(secret, key string) string {
	c.useSecret(secret, key)
	return path.Join(c.opts.SecretsDir, secret, key)
}

func (c *converter) useSecret(secret, key string) {
	keys, ok := c.secrets[secret]
	if !ok {
		c.secretUse = append(c.secretUse, secret)
	}
	if !slices.Contains(keys, key) {
		c.secrets[secret] = append(keys, key)
	}
}

// secretRef is a ${directory:...} reference to a Secret's key: the value of
// a mounted Secret key is the file's whole content, which is what Kafka's
// DirectoryConfigProvider returns (FileConfigProvider would need a
// properties file).
func (c *converter) secretRef(secret, key string) string {
	c.useSecret(secret, key)
	c.directory = true
	return "${directory:" + path.Join(c.opts.SecretsDir, secret) + ":" + key + "}"
}

// secretName reads a secret reference object ({secretName, <keyField>}).
func (c *converter) secretName(o *object, keyField string) (secret, key string, ok bool) {
	secret, _ = o.scalar("secretName")
	key, _ = o.scalar(keyField)
	o.done("secretName", keyField)
	if secret == "" || key == "" || strings.ContainsAny(secret+key, "/}:") {
		c.unmapped(o.line, o.path, "needs secretName and %s (plain names); not converted", keyField)
		return "", "", false
	}
	return secret, key, true
}

// trust maps tls.trustedCertificates. Strait reads PEM certificates; one
// certificate is a truststore file, several are their contents joined.
func (c *converter) trust(cl *cluster, p string, n *yaml.Node) {
	tls := c.newObject(p, n)
	if tls == nil {
		return
	}
	var files [][2]string // secret, key
	for i, it := range tls.list("trustedCertificates") {
		cp := fmt.Sprintf("%s.trustedCertificates[%d]", p, i)
		o := c.newObject(cp, it)
		if o == nil {
			continue
		}
		secret, _ := o.scalar("secretName")
		cert, hasCert := o.scalar("certificate")
		pattern, hasPattern := o.scalar("pattern")
		o.done("secretName", "certificate", "pattern")
		switch {
		case secret == "" || strings.ContainsAny(secret, "/}:"):
			c.unmapped(o.line, cp, "needs secretName; not converted")
			continue
		case hasCert && hasPattern:
			c.unmapped(o.line, cp, "sets both certificate and pattern; Strimzi allows one: not converted")
			continue
		case hasPattern:
			// Strimzi's cluster CA Secrets (<cluster>-cluster-ca-cert) hold
			// the CA as ca.crt, which the usual pattern "*.crt" matches.
			if ok, err := path.Match(pattern, "ca.crt"); err != nil || !ok {
				c.unmapped(o.lineOf("pattern"), cp+".pattern", "Strait reads named certificate files, and pattern %q does not match a cluster CA's ca.crt: list each file with certificate: instead; not converted", pattern)
				continue
			}
			c.note(o.lineOf("pattern"), cp+".pattern", "pattern %q is read as the file ca.crt (the CA of a Strimzi cluster CA Secret); if it matches other certificates of Secret %q too, list each with certificate:", pattern, secret)
			cert = "ca.crt"
		case cert == "" || strings.ContainsAny(cert, "/}:"):
			c.unmapped(o.line, cp, "needs certificate (a key of the Secret) or pattern; not converted")
			continue
		}
		files = append(files, [2]string{secret, cert})
	}
	tls.done("trustedCertificates")
	switch len(files) {
	case 0:
		// tls: {} trusts the system's roots, as Java trusts the JDK's.
	case 1:
		cl.props = append(cl.props, prop{"ssl.truststore.type", "PEM"}, prop{"ssl.truststore.location", c.secretFile(files[0][0], files[0][1])})
	default:
		var refs []string
		for _, f := range files {
			refs = append(refs, c.secretRef(f[0], f[1]))
		}
		// One PEM bundle: the files' contents, each ending a line.
		cl.props = append(cl.props, prop{"ssl.truststore.type", "PEM"}, prop{"ssl.truststore.certificates", strings.Join(refs, "\n")})
	}
}

// authentication maps spec.clusters[].authentication and returns the
// security protocol and the sasl/ssl keys.
func (c *converter) authentication(cl *cluster, a *object, protocol string) (string, []prop) {
	typ, _ := a.scalar("type")
	sasl := func() string {
		if protocol == "SSL" {
			return "SASL_SSL"
		}
		return "SASL_PLAINTEXT"
	}
	var props []prop
	switch typ {
	case "tls":
		kp := a.object("certificateAndKey")
		a.done("type", "certificateAndKey")
		if kp == nil {
			c.unmapped(a.line, a.path, "type tls needs certificateAndKey; not converted")
			return protocol, nil
		}
		secret, _ := kp.scalar("secretName")
		cert, _ := kp.scalar("certificate")
		key, _ := kp.scalar("key")
		kp.done("secretName", "certificate", "key")
		if secret == "" || cert == "" || key == "" || strings.ContainsAny(secret+cert+key, "/}:") {
			c.unmapped(kp.line, kp.path, "needs secretName, certificate and key; not converted")
			return protocol, nil
		}
		if protocol != "SSL" {
			c.note(a.line, a.path, "client certificates need TLS, but the cluster has no tls: security.protocol is set to SSL (Strimzi would have connected in plain text and sent no certificate)")
			protocol = "SSL"
		}
		props = append(props,
			prop{"ssl.keystore.type", "PEM"},
			prop{"ssl.keystore.certificate.chain", c.secretRef(secret, cert)},
			prop{"ssl.keystore.key", c.secretRef(secret, key)})
		return protocol, props
	case "scram-sha-256", "scram-sha-512", "plain":
		user, _ := a.scalar("username")
		ps := a.object("passwordSecret")
		a.done("type", "username", "passwordSecret")
		if user == "" || ps == nil {
			c.unmapped(a.line, a.path, "type %s needs username and passwordSecret; not converted", typ)
			return protocol, nil
		}
		secret, key, ok := c.secretName(ps, "password")
		if !ok {
			return protocol, nil
		}
		mech, module := "PLAIN", plainModule
		if typ != "plain" {
			mech, module = strings.ToUpper(typ), scramModule
		}
		props = append(props,
			prop{"sasl.mechanism", mech},
			prop{"sasl.jaas.config", module + " required username=" + jaasQuote(user) + " password=" + jaasQuote(c.secretRef(secret, key)) + ";"})
		return sasl(), props
	case "oauth":
		return c.oauth(a, protocol)
	case "custom":
		return c.customAuth(cl, a, protocol)
	case "":
		a.done("type")
		c.unmapped(a.line, a.path, "no type (tls, scram-sha-256, scram-sha-512, plain, oauth or custom); not converted")
		return protocol, nil
	default:
		a.done("type")
		c.unmapped(a.lineOf("type"), a.sub("type"), "unknown authentication type %q (tls, scram-sha-256, scram-sha-512, plain, oauth or custom); not converted", typ)
		return protocol, nil
	}
}

// oauth maps Strimzi's (v1beta2) oauth type with client credentials to
// Kafka's own OAUTHBEARER login: Strimzi's Java OAuth library is not
// available, so only what Kafka's handler does is converted.
func (c *converter) oauth(a *object, protocol string) (string, []prop) {
	if c.api == apiV1 {
		a.done("type")
		c.unmapped(a.lineOf("type"), a.sub("type"), "type oauth is not in %s (it became custom); not converted", apiV1)
		return protocol, nil
	}
	clientID, _ := a.scalar("clientId")
	endpoint, _ := a.scalar("tokenEndpointUri")
	scope, hasScope := a.scalar("scope")
	var secret, key string
	ok := true
	if cs := a.object("clientSecret"); cs != nil {
		secret, key, ok = c.secretName(cs, "key")
	}
	for _, f := range []struct{ name, why string }{
		{"audience", "Kafka's OAuth client-credentials login sends no audience: configure the identity provider's default audience for this client"},
		{"grantType", "Kafka's OAuth login uses the client_credentials grant only"},
		{"username", "the password grant is not supported by Kafka's OAuth login: use client credentials"},
		{"passwordSecret", "the password grant is not supported by Kafka's OAuth login: use client credentials"},
		{"accessToken", "a fixed access token from a Secret: Kafka's OAuth login reads a token file with sasl.oauthbearer.token.endpoint.url = file:///path/to/token"},
		{"accessTokenLocation", "set sasl.oauthbearer.token.endpoint.url = file://<this path> instead"},
		{"refreshToken", "the refresh-token grant is not supported by Kafka's OAuth login: use client credentials"},
		{"clientAssertion", "client assertions from a Secret: Kafka 4.1's sasl.oauthbearer.assertion.* settings are the equivalent; set them by hand"},
		{"clientAssertionLocation", "Kafka 4.1's sasl.oauthbearer.assertion.file is the equivalent; set it by hand"},
		{"clientAssertionType", "set Kafka 4.1's sasl.oauthbearer.assertion.* settings by hand"},
		{"tlsTrustedCertificates", "the token endpoint's CA: Strait verifies it against the system's roots; add the CA to the container's trust store"},
		{"disableTlsHostnameVerification", "Strait always checks the token endpoint's host name"},
		{"maxTokenExpirySeconds", "Strait refreshes tokens before they expire by sasl.login.refresh.* (Kafka's rules)"},
		{"accessTokenIsJwt", "Kafka's OAuth login expects JWT access tokens"},
		{"enableMetrics", "Strimzi's OAuth metrics: Strait has none for the token endpoint"},
		{"includeAcceptHeader", "Kafka's OAuth login always sends Accept: application/json"},
		{"connectTimeoutSeconds", "set sasl.login.connect.timeout.ms on the cluster instead"},
		{"readTimeoutSeconds", "set sasl.login.read.timeout.ms on the cluster instead"},
		{"httpRetries", "Kafka's OAuth login retries by sasl.login.retry.backoff.ms and sasl.login.retry.backoff.max.ms"},
		{"httpRetryPauseMs", "set sasl.login.retry.backoff.ms on the cluster instead"},
		{"saslExtensions", "Kafka's OAuth client-credentials login sends no SASL extensions"},
	} {
		a.unmapped(f.name, "%s; not converted", f.why)
	}
	a.done("type", "clientId", "clientSecret", "tokenEndpointUri", "scope")
	if clientID == "" || secret == "" || endpoint == "" || !ok {
		c.unmapped(a.line, a.path, "type oauth is converted for client credentials only (clientId, clientSecret and tokenEndpointUri); not converted")
		return protocol, nil
	}
	c.note(a.line, a.path, "converted to Kafka's own OAuth login (%s, client credentials); Strimzi used its own OAuth library", oauthLogin)
	jaas := oauthModule + " required clientId=" + jaasQuote(clientID) + " clientSecret=" + jaasQuote(c.secretRef(secret, key))
	if hasScope {
		jaas += " scope=" + jaasQuote(scope)
	}
	props := []prop{
		{"sasl.mechanism", "OAUTHBEARER"},
		{"sasl.login.callback.handler.class", oauthLogin},
		{"sasl.oauthbearer.token.endpoint.url", endpoint},
		{"sasl.jaas.config", jaas + ";"},
	}
	if protocol == "SSL" {
		return "SASL_SSL", props
	}
	return "SASL_PLAINTEXT", props
}

// customAuth copies type custom's config as the cluster's keys, as Strimzi
// does; Strait's check names any class it cannot run. A config that names
// Strimzi's Java OAuth library is not converted at all: half of a login is
// worse than none.
func (c *converter) customAuth(cl *cluster, a *object, protocol string) (string, []prop) {
	useSASL, _ := a.bool("sasl")
	var props []prop
	complete := true
	if cfg := a.object("config"); cfg != nil {
		for _, k := range cfg.keys {
			v := cfg.take(k)
			s, ok := c.scalarValue(cfg.sub(k), v)
			if !ok {
				complete = false
				continue
			}
			if strings.Contains(s, "io.strimzi.") {
				c.unmapped(cfg.lineOf(k), cfg.sub(k), "names Strimzi's Java OAuth library (%s), which Strait cannot load; use Kafka's %s with sasl.oauthbearer.token.endpoint.url", s, oauthLogin)
				complete = false
				continue
			}
			props = append(props, prop{k, s})
		}
	}
	a.done("type", "sasl", "config")
	if !complete {
		c.unmapped(a.line, a.path, "custom authentication not converted, so cluster %q is reached without it: write its sasl.* keys as %s.<key> by hand", cl.alias, cl.alias)
		return protocol, nil
	}
	c.note(a.line, a.path, "custom authentication is copied as %s.<key>; run strait check on the result: it names any login module or class Strait cannot use", cl.alias)
	switch {
	case useSASL && protocol == "SSL":
		protocol = "SASL_SSL"
	case useSASL:
		protocol = "SASL_PLAINTEXT"
	}
	return protocol, props
}

// jaasQuote quotes a JAAS option value.
func jaasQuote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}
