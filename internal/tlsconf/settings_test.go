package tlsconf

import (
	"strings"
	"testing"
)

// Java-only settings warn unless they are Java's defaults; a custom engine
// factory cannot be honoured; unknown keys warn; other keys are ignored.
func TestSettings(t *testing.T) {
	tests := []struct {
		name    string
		kv      []string
		warning string // fragment of the one warning; "" for none
		problem string // fragment of the one problem; "" for none
	}{
		{"non-ssl keys are ignored", []string{"bootstrap.servers", "b:9093", "sasl.mechanism", "PLAIN", "security.protocol", "SSL"}, "", ""},
		{"keymanager default", []string{"ssl.keymanager.algorithm", "SunX509"}, "", ""},
		{"keymanager PKIX", []string{"ssl.keymanager.algorithm", "PKIX"},
			`key "B.ssl.keymanager.algorithm" (line 1): cluster "B": ssl.keymanager.algorithm=PKIX has no effect in Go`, ""},
		{"trustmanager default", []string{"ssl.trustmanager.algorithm", "pkix"}, "", ""},
		{"trustmanager SunX509", []string{"ssl.trustmanager.algorithm", "SunX509"}, `ssl.trustmanager.algorithm=SunX509 has no effect in Go`, ""},
		{"provider", []string{"ssl.provider", "BCJSSE"}, `ssl.provider=BCJSSE has no effect in Go: Strait uses Go's crypto/tls, not a Java security provider; remove B.ssl.provider`, ""},
		{"empty provider", []string{"ssl.provider", ""}, "", ""},
		{"secure random", []string{"ssl.secure.random.implementation", "SHA1PRNG"}, `ssl.secure.random.implementation=SHA1PRNG has no effect in Go`, ""},
		{"Kafka's own engine factory", []string{"ssl.engine.factory.class", "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory"}, "", ""},
		{"custom engine factory", []string{"ssl.engine.factory.class", "com.example.MyFactory"}, "",
			`ssl.engine.factory.class=com.example.MyFactory cannot be honoured: Strait cannot load Java classes`},
		{"broker key", []string{"ssl.client.auth", "required"}, `ssl.client.auth is a broker setting that Kafka clients ignore`, ""},
		{"unknown key", []string{"ssl.keystore.locaton", "/x"}, `ssl.keystore.locaton is not a Kafka client TLS setting and is ignored; check the spelling of B.ssl.keystore.locaton`, ""},
		{"https in upper case", []string{"ssl.endpoint.identification.algorithm", "HTTPS"}, "", ""},
		{"no hostname check", []string{"ssl.endpoint.identification.algorithm", ""},
			`ssl.endpoint.identification.algorithm is empty, so the brokers' host names are not checked against their certificates (the chain is still verified against the truststore)`, ""},
		{"LDAPS", []string{"ssl.endpoint.identification.algorithm", "LDAPS"}, "",
			`ssl.endpoint.identification.algorithm=LDAPS is not supported: Strait checks host names as https does, or not at all`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ws, err := Build(client(tt.kv...), Options{})
			msg := messages(ws)
			switch {
			case tt.warning == "" && len(ws) > 0:
				t.Errorf("unexpected warnings:\n%s", msg)
			case tt.warning != "" && (len(ws) != 1 || !strings.Contains(msg, tt.warning)):
				t.Errorf("warnings:\n%s\nwant one containing %s", msg, tt.warning)
			}
			ps := problems(t, err)
			switch {
			case tt.problem == "" && err != nil:
				t.Errorf("Build: %v", err)
			case tt.problem != "" && (len(ps) != 1 || !strings.Contains(ps[0].Message, tt.problem)):
				t.Errorf("problems: %v\nwant one containing %s", err, tt.problem)
			case tt.problem != "" && cfg != nil:
				t.Error("a config despite a problem")
			case tt.problem == "" && cfg == nil:
				t.Error("no config")
			}
		})
	}
}

// With an empty identification algorithm the config skips Go's host name
// check only: VerifyConnection verifies the chain (the handshake tests
// show it refuses untrusted and expired certificates).
func TestNoHostnameCheckStillVerifies(t *testing.T) {
	b := newBed(t)
	cfg, _, err := Build(client("ssl.endpoint.identification.algorithm", "", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(b.ca.PEM())), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.InsecureSkipVerify || cfg.VerifyConnection == nil {
		t.Fatalf("InsecureSkipVerify %v, VerifyConnection set %v; want both", cfg.InsecureSkipVerify, cfg.VerifyConnection != nil)
	}
	if cfg.RootCAs == nil {
		t.Fatal("no RootCAs")
	}
}
