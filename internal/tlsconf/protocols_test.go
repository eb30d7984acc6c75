package tlsconf

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"
)

// ssl.protocol, ssl.enabled.protocols and ssl.cipher.suites become the
// version range and TLS 1.2 suites Java would offer.
func TestVersions(t *testing.T) {
	tests := []struct {
		name     string
		kv       []string
		min, max uint16
		suites   []uint16
		warning  string // a fragment of the one warning, or "" for none
	}{
		{"defaults", nil, tls.VersionTLS12, tls.VersionTLS13, nil, ""},
		{"ssl.protocol TLSv1.2 caps the version", []string{"ssl.protocol", "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, nil, ""},
		{"ssl.protocol in any case", []string{"ssl.protocol", "tlsv1.2"}, tls.VersionTLS12, tls.VersionTLS12, nil, ""},
		{"ssl.protocol TLS", []string{"ssl.protocol", "TLS"}, tls.VersionTLS12, tls.VersionTLS13, nil, ""},
		{"TLSv1.3 only", []string{"ssl.enabled.protocols", "TLSv1.3"}, tls.VersionTLS13, tls.VersionTLS13, nil, ""},
		{"empty enabled list is the default", []string{"ssl.enabled.protocols", ""}, tls.VersionTLS12, tls.VersionTLS13, nil, ""},
		{"spaces in the list", []string{"ssl.enabled.protocols", " TLSv1.3 , TLSv1.2 "}, tls.VersionTLS12, tls.VersionTLS13, nil, ""},
		{"old versions honoured with a warning", []string{"ssl.protocol", "TLSv1.2", "ssl.enabled.protocols", "TLSv1,TLSv1.1,TLSv1.2"}, tls.VersionTLS10, tls.VersionTLS12, nil,
			`ssl.enabled.protocols enables TLSv1, which is deprecated (RFC 8996) and disabled in current JDKs`},
		{"a gap above the cap does not count", []string{"ssl.protocol", "TLSv1.1", "ssl.enabled.protocols", "TLSv1.1,TLSv1.3"}, tls.VersionTLS11, tls.VersionTLS11, nil,
			`enables TLSv1.1`},
		{"TLS 1.2 suites only: no TLS 1.3, as in JSSE", []string{"ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
			tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}, ""},
		{"TLS 1.3 suites only: no TLS 1.2", []string{"ssl.cipher.suites", "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"},
			tls.VersionTLS13, tls.VersionTLS13, nil, ""},
		{"some TLS 1.3 suites: Go enables all", []string{"ssl.cipher.suites", "TLS_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			tls.VersionTLS12, tls.VersionTLS13, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
			`ssl.cipher.suites names only TLS_AES_256_GCM_SHA384 of the TLS 1.3 suites, but Go always enables all of TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256`},
		{"insecure suites with a warning, Java's SSL_ names", []string{"ssl.protocol", "TLSv1.2", "ssl.cipher.suites", "SSL_RSA_WITH_3DES_EDE_CBC_SHA,TLS_EMPTY_RENEGOTIATION_INFO_SCSV"},
			tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA},
			`ssl.cipher.suites lists SSL_RSA_WITH_3DES_EDE_CBC_SHA, which Go counts as insecure; Strait enables them as written`},
		{"CBC suites reach down to TLSv1", []string{"ssl.protocol", "TLSv1.2", "ssl.enabled.protocols", "TLSv1,TLSv1.1,TLSv1.2", "ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"},
			tls.VersionTLS10, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA}, `enables TLSv1,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ws, err := Build(client(tt.kv...), Options{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if cfg.MinVersion != tt.min || cfg.MaxVersion != tt.max {
				t.Errorf("versions %s..%s, want %s..%s", versionName(cfg.MinVersion), versionName(cfg.MaxVersion), versionName(tt.min), versionName(tt.max))
			}
			if !slices.Equal(cfg.CipherSuites, tt.suites) {
				t.Errorf("suites %v, want %v", cfg.CipherSuites, tt.suites)
			}
			switch msg := messages(ws); {
			case tt.warning == "" && msg != "":
				t.Errorf("unexpected warnings:\n%s", msg)
			case len(ws) > 1 || !strings.Contains(msg, tt.warning):
				t.Errorf("warnings:\n%s\nwant one containing %s", msg, tt.warning)
			}
		})
	}
}

// Protocols and suites Go cannot honour are problems that say what to
// write instead.
func TestVersionProblems(t *testing.T) {
	tests := []struct {
		name   string
		kv     []string
		origin string
		want   string
	}{
		{"ssl.protocol SSLv3", []string{"ssl.protocol", "SSLv3"},
			"B.ssl.protocol", `ssl.protocol=SSLv3 cannot be honoured: Go speaks TLSv1 to TLSv1.3 and no SSL or DTLS; set B.ssl.protocol=TLSv1.3 (or TLSv1.2)`},
		{"ssl.protocol unknown", []string{"ssl.protocol", "TLSv2"},
			"B.ssl.protocol", `ssl.protocol=TLSv2 is not a TLS protocol name`},
		{"SSLv3 enabled", []string{"ssl.enabled.protocols", "SSLv3,TLSv1.2"},
			"B.ssl.enabled.protocols", `ssl.enabled.protocols lists SSLv3, which Go cannot speak`},
		{"SSLv2Hello enabled", []string{"ssl.enabled.protocols", "SSLv2Hello,TLSv1.2,TLSv1.3"},
			"B.ssl.enabled.protocols", `lists SSLv2Hello, which Go cannot speak (it speaks TLSv1 to TLSv1.3; SSLv2Hello is an old hello format Go never sends); remove them from B.ssl.enabled.protocols, e.g. B.ssl.enabled.protocols=TLSv1.2,TLSv1.3`},
		{"a gap", []string{"ssl.enabled.protocols", "TLSv1.1,TLSv1.3"},
			"B.ssl.enabled.protocols", `ssl.enabled.protocols enables TLSv1.1 and TLSv1.3 but not TLSv1.2 between them, and Go can only enable a range of versions; set B.ssl.enabled.protocols=TLSv1.3 or enable the versions between`},
		{"unknown protocol", []string{"ssl.enabled.protocols", "TLSv1.2,TLSv1.4"},
			"B.ssl.enabled.protocols", `ssl.enabled.protocols lists unknown protocols TLSv1.4`},
		{"case matters in the enabled list", []string{"ssl.enabled.protocols", "tlsv1.2"},
			"B.ssl.enabled.protocols", `ssl.enabled.protocols lists tlsv1.2 (write TLSv1.2): Java's protocol names are case-sensitive`},
		{"cap below every enabled version", []string{"ssl.protocol", "TLSv1.1"},
			"B.ssl.protocol", `ssl.protocol=TLSv1.1 allows none of ssl.enabled.protocols (TLSv1.2,TLSv1.3), so no connection could be made`},
		{"suites Go does not have", []string{"ssl.cipher.suites", "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_FOO"},
			"B.ssl.cipher.suites", `ssl.cipher.suites lists TLS_DHE_RSA_WITH_AES_128_GCM_SHA256, TLS_FOO, which Go does not implement; remove them from B.ssl.cipher.suites`},
		{"TLS 1.3 suites only, TLS 1.3 not enabled", []string{"ssl.protocol", "TLSv1.2", "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"},
			"B.ssl.cipher.suites", `ssl.cipher.suites lists no suite for the enabled protocols TLSv1.2 to TLSv1.2, so no connection could be made`},
		{"no suite for TLS 1.3 only", []string{"ssl.enabled.protocols", "TLSv1.3", "ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
			"B.ssl.cipher.suites", `ssl.cipher.suites lists no suite for the enabled protocols TLSv1.3 to TLSv1.3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Build(client(tt.kv...), Options{})
			if cfg != nil {
				t.Errorf("a config despite problems")
			}
			for _, p := range problems(t, err) {
				if p.Origin.Key == tt.origin && strings.Contains(p.Message, tt.want) {
					return
				}
			}
			t.Fatalf("got %v\nwant a problem at %s containing\n%s", err, tt.origin, tt.want)
		})
	}
}
