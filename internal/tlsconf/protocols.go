package tlsconf

import (
	"crypto/tls"
	"slices"
	"strings"
)

// javaVersion is a TLS version and its Java name.
type javaVersion struct {
	name string
	v    uint16
}

// javaVersions are the protocol names JSSE takes in ssl.enabled.protocols
// that Go's client speaks, lowest first.
var javaVersions = []javaVersion{
	{"TLSv1", tls.VersionTLS10},
	{"TLSv1.1", tls.VersionTLS11},
	{"TLSv1.2", tls.VersionTLS12},
	{"TLSv1.3", tls.VersionTLS13},
}

// versionName is Java's name of a TLS version.
func versionName(v uint16) string {
	for _, jv := range javaVersions {
		if jv.v == v {
			return jv.name
		}
	}
	return "?"
}

// unsupportedProtocol reports whether name is a protocol JSSE knows and Go
// does not speak.
func unsupportedProtocol(name string) bool {
	n := strings.ToUpper(name)
	return n == "SSLV3" || n == "SSLV2" || n == "SSLV2HELLO" || strings.HasPrefix(n, "DTLS")
}

// versions sets MinVersion, MaxVersion and CipherSuites from ssl.protocol,
// ssl.enabled.protocols and ssl.cipher.suites.
func (b *builder) versions(cfg *tls.Config) {
	protocol, protoP, _ := b.lookup("ssl.protocol")
	protocol = strings.TrimSpace(protocol)
	if protocol == "" {
		protocol = "TLSv1.3"
	}
	protoRef := b.ref("ssl.protocol")
	protoD := b.shown("ssl.protocol", protocol)
	// ssl.protocol is an SSLContext name (matched in any case): it caps
	// the version.
	var maxV uint16
	switch p := strings.ToUpper(protocol); {
	case p == "TLS" || p == "SSL":
		maxV = tls.VersionTLS13
	case unsupportedProtocol(p):
		b.problemf(protoP, "ssl.protocol=%s cannot be honoured: Go speaks TLSv1 to TLSv1.3 and no SSL or DTLS; set %s=TLSv1.3 (or TLSv1.2)", protoD, protoRef)
		return
	default:
		for _, jv := range javaVersions {
			if strings.EqualFold(jv.name, protocol) {
				maxV = jv.v
			}
		}
		if maxV == 0 {
			b.problemf(protoP, "ssl.protocol=%s is not a TLS protocol name; set %s=TLSv1.3 (or TLSv1.2, TLSv1.1, TLSv1, TLS)", protoD, protoRef)
			return
		}
	}

	enabledRaw, enabledP, _ := b.lookup("ssl.enabled.protocols")
	enabledRef := b.ref("ssl.enabled.protocols")
	names := listValue(enabledRaw)
	if len(names) == 0 {
		names = []string{"TLSv1.2", "TLSv1.3"} // Kafka's default, and the JDK's
	}
	var enabled []uint16
	var bad, unsupported, wrongCase []string
	for _, n := range names {
		i := slices.IndexFunc(javaVersions, func(jv javaVersion) bool { return strings.EqualFold(jv.name, n) })
		switch {
		case i >= 0 && javaVersions[i].name == n:
			enabled = append(enabled, javaVersions[i].v)
		case i >= 0:
			wrongCase = append(wrongCase, b.shown(enabledP.Key, n)+" (write "+javaVersions[i].name+")")
		case unsupportedProtocol(n):
			unsupported = append(unsupported, b.shown(enabledP.Key, n))
		default:
			bad = append(bad, b.shown(enabledP.Key, n))
		}
	}
	ok := true
	if len(unsupported) > 0 {
		b.problemf(enabledP, "ssl.enabled.protocols lists %s, which Go cannot speak (it speaks TLSv1 to TLSv1.3; SSLv2Hello is an old hello format Go never sends); remove them from %s, e.g. %s=TLSv1.2,TLSv1.3",
			strings.Join(unsupported, ", "), enabledRef, enabledRef)
		ok = false
	}
	if len(wrongCase) > 0 {
		b.problemf(enabledP, "ssl.enabled.protocols lists %s: Java's protocol names are case-sensitive; fix %s", strings.Join(wrongCase, ", "), enabledRef)
		ok = false
	}
	if len(bad) > 0 {
		b.problemf(enabledP, "ssl.enabled.protocols lists unknown protocols %s; use TLSv1.2 and TLSv1.3 (or TLSv1.1, TLSv1) in %s", strings.Join(bad, ", "), enabledRef)
		ok = false
	}
	if !ok {
		return
	}
	slices.Sort(enabled)
	enabled = slices.Compact(enabled)
	var usable []uint16
	for _, v := range enabled {
		if v <= maxV {
			usable = append(usable, v)
		}
	}
	if len(usable) == 0 {
		at := enabledP
		if _, set := b.props[at.Key]; !set {
			at = protoP
		}
		b.problemf(at, "ssl.protocol=%s allows none of ssl.enabled.protocols (%s), so no connection could be made; set %s=TLSv1.3, or enable %s or lower in %s",
			protoD, b.shown(enabledP.Key, strings.Join(names, ",")), protoRef, versionName(maxV), enabledRef)
		return
	}
	for i := 1; i < len(usable); i++ {
		if usable[i] != usable[i-1]+1 {
			b.problemf(enabledP, "ssl.enabled.protocols enables %s and %s but not %s between them, and Go can only enable a range of versions; set %s=%s or enable the versions between",
				versionName(usable[i-1]), versionName(usable[i]), versionName(usable[i-1]+1), enabledRef, versionName(usable[len(usable)-1]))
			return
		}
	}
	minV, maxV := usable[0], usable[len(usable)-1]
	if minV < tls.VersionTLS12 {
		b.warnf(enabledP, "ssl.enabled.protocols enables %s, which is deprecated (RFC 8996) and disabled in current JDKs (jdk.tls.disabledAlgorithms), so MirrorMaker 2 on such a JDK never used it; Strait enables it as written; remove TLSv1 and TLSv1.1 from %s",
			versionName(minV), enabledRef)
	}
	minV, maxV, ok = b.cipherSuites(cfg, minV, maxV)
	if !ok {
		return
	}
	cfg.MinVersion, cfg.MaxVersion = minV, maxV
}

// listValue splits a Kafka LIST value: comma-separated, each item trimmed,
// empty items dropped.
func listValue(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TLS 1.3 suites, which Go always enables and cannot restrict.
var tls13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// cipherSuites applies ssl.cipher.suites and narrows [minV, maxV] the way
// JSSE does: a protocol none of whose suites is enabled is not offered.
func (b *builder) cipherSuites(cfg *tls.Config, minV, maxV uint16) (uint16, uint16, bool) {
	raw, p, _ := b.lookup("ssl.cipher.suites")
	names := listValue(raw)
	if len(names) == 0 {
		return minV, maxV, true // Go's defaults, as Java's are the JDK's
	}
	ref := b.ref("ssl.cipher.suites")
	secure := map[string]*tls.CipherSuite{}
	for _, s := range tls.CipherSuites() {
		secure[s.Name] = s
	}
	insecure := map[string]*tls.CipherSuite{}
	for _, s := range tls.InsecureCipherSuites() {
		insecure[s.Name] = s
	}
	var ids []uint16
	var named13, unknown, weak []string
	for _, n := range names {
		name := n
		if strings.HasPrefix(name, "SSL_") { // Java's names of the old suites
			name = "TLS_" + strings.TrimPrefix(name, "SSL_")
		}
		if name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
			continue // Go always signals secure renegotiation
		}
		if slices.Contains(tls13Suites, name) {
			if !slices.Contains(named13, name) {
				named13 = append(named13, name)
			}
			continue
		}
		s, ok := secure[name]
		if !ok {
			if s, ok = insecure[name]; ok {
				weak = append(weak, b.shown(p.Key, n))
			}
		}
		if !ok {
			unknown = append(unknown, b.shown(p.Key, n))
			continue
		}
		if !slices.Contains(ids, s.ID) {
			ids = append(ids, s.ID)
		}
	}
	if len(unknown) > 0 {
		b.problemf(p, "ssl.cipher.suites lists %s, which Go does not implement; remove them from %s (Go's TLS 1.2 suites include TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 and TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)",
			strings.Join(unknown, ", "), ref)
		return 0, 0, false
	}
	if len(weak) > 0 {
		b.warnf(p, "ssl.cipher.suites lists %s, which Go counts as insecure; Strait enables them as written; prefer ECDHE suites with AES-GCM or ChaCha20 in %s",
			strings.Join(weak, ", "), ref)
	}
	if len(named13) > 0 && len(named13) < len(tls13Suites) {
		b.warnf(p, "ssl.cipher.suites names only %s of the TLS 1.3 suites, but Go always enables all of %s and cannot restrict them; a TLS 1.3 connection may use any of them",
			b.shown(p.Key, strings.Join(named13, ", ")), strings.Join(tls13Suites, ", "))
	}
	// As in JSSE, a version with no enabled suite is not offered.
	covered := func(v uint16) bool {
		if v == tls.VersionTLS13 {
			return len(named13) > 0
		}
		for _, id := range ids {
			for _, s := range tls.CipherSuites() {
				if s.ID == id && slices.Contains(s.SupportedVersions, v) {
					return true
				}
			}
			for _, s := range tls.InsecureCipherSuites() {
				if s.ID == id && slices.Contains(s.SupportedVersions, v) {
					return true
				}
			}
		}
		return false
	}
	var offered []uint16
	for v := minV; v <= maxV; v++ {
		if covered(v) {
			offered = append(offered, v)
		}
	}
	if len(offered) == 0 {
		b.problemf(p, "ssl.cipher.suites lists no suite for the enabled protocols %s to %s, so no connection could be made; add suites for them to %s (the TLS 1.3 suites are %s)",
			versionName(minV), versionName(maxV), ref, strings.Join(tls13Suites, ","))
		return 0, 0, false
	}
	cfg.CipherSuites = ids
	return offered[0], offered[len(offered)-1], true
}
