package tlsconf

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/pavlo-v-chernykh/keystore-go/v4"

	"strait/internal/config"
	"strait/internal/kafkatest/certs"
)

// Every truststore format, as a file and inline, with and without a
// password where Java allows none, trusts exactly its CAs.
func TestTruststoreFormats(t *testing.T) {
	b := newBed(t)
	second := must(certs.NewAuthority("second CA"))(t)
	jks := b.file("ts.jks", must(certs.JKSTruststore("trust-pw", b.ca, second))(t))
	p12 := b.file("ts.p12", must(certs.PKCS12Truststore("trust-pw", b.ca, second))(t))
	p12NoPw := b.file("ts-nopw.p12", must(certs.PKCS12Truststore("", b.ca, second))(t))
	pemFile := b.file("ts.pem", certs.PEMTruststore(b.ca, second))
	// A keystore used as a truststore: Java trusts its key entry's own
	// certificate.
	keystoreAsTrust := b.file("ks.jks", must(b.client.JKSKeystore("trust-pw", "trust-pw"))(t))

	tests := []struct {
		name  string
		c     config.Client
		trust []*certs.Authority // the CAs the truststore holds
		leaf  bool               // and the client's certificate
	}{
		{"JKS with password", client("ssl.truststore.location", jks, "ssl.truststore.password", "trust-pw"), []*certs.Authority{b.ca, second}, false},
		{"JKS without password (no integrity check, as Java)", client("ssl.truststore.location", jks), []*certs.Authority{b.ca, second}, false},
		{"PKCS12 with password", client("ssl.truststore.type", "PKCS12", "ssl.truststore.location", p12, "ssl.truststore.password", "trust-pw"), []*certs.Authority{b.ca, second}, false},
		{"PKCS12 under type JKS", client("ssl.truststore.location", p12, "ssl.truststore.password", "trust-pw"), []*certs.Authority{b.ca, second}, false},
		{"PKCS12 with the empty password, none set", client("ssl.truststore.type", "PKCS12", "ssl.truststore.location", p12NoPw), []*certs.Authority{b.ca, second}, false},
		{"PEM file", client("ssl.truststore.type", "PEM", "ssl.truststore.location", pemFile), []*certs.Authority{b.ca, second}, false},
		{"inline PEM", client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(certs.PEMTruststore(b.ca, second))), []*certs.Authority{b.ca, second}, false},
		{"JKS keystore as truststore", client("ssl.truststore.location", keystoreAsTrust), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ws, err := Build(tt.c, Options{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if len(ws) > 0 {
				t.Fatalf("unexpected warnings:\n%s", messages(ws))
			}
			if cfg.RootCAs == nil {
				t.Fatal("RootCAs is nil: the system roots instead of the truststore")
			}
			want := pool(tt.trust...)
			if tt.leaf {
				want.AddCert(b.client.Cert)
			}
			if !cfg.RootCAs.Equal(want) {
				t.Error("RootCAs is not exactly the truststore's certificates")
			}
		})
	}
}

// pool is the certificate pool of cas.
func pool(cas ...*certs.Authority) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.Cert)
	}
	return p
}

// No truststore: the system roots (RootCAs nil), as Java uses cacerts.
func TestNoTruststore(t *testing.T) {
	cfg, ws, err := Build(client("ssl.endpoint.identification.algorithm", "https"), Options{})
	if err != nil || len(ws) > 0 {
		t.Fatalf("Build: %v %v", err, ws)
	}
	if cfg.RootCAs != nil || cfg.InsecureSkipVerify {
		t.Fatalf("RootCAs %v, InsecureSkipVerify %v; want the system roots, verified", cfg.RootCAs, cfg.InsecureSkipVerify)
	}
}

// Several CAs on one line: Kafka's parser reads the last only, and so does
// Strait, with a warning.
func TestTruststoreOneLine(t *testing.T) {
	b := newBed(t)
	second := must(certs.NewAuthority("second CA"))(t)
	line := strings.ReplaceAll(string(certs.PEMTruststore(b.ca, second)), "\n", " ")
	cfg, ws, err := Build(client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", line), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.RootCAs.Equal(pool(second)) {
		t.Error("RootCAs is not the last CA alone")
	}
	want := `ssl.truststore.certificates holds 2 certificates on one line, and Kafka's PEM parser then reads only the last (subject "CN=second CA,O=Strait test bed"): MirrorMaker 2 trusted only it, and so does Strait`
	if !strings.Contains(messages(ws), want) {
		t.Errorf("warnings:\n%s\nwant %s", messages(ws), want)
	}
}

// Each way a truststore can be wrong is its own problem, at the key at
// fault.
func TestTruststoreProblems(t *testing.T) {
	b := newBed(t)
	jks := b.file("ts.jks", must(certs.JKSTruststore("trust-pw", b.ca))(t))
	p12 := b.file("ts.p12", must(certs.PKCS12Truststore("trust-pw", b.ca))(t))
	p12Keystore := b.file("ks.p12", must(b.client.PKCS12Keystore("trust-pw"))(t))
	var empty bytes.Buffer
	if err := keystore.New().Store(&empty, []byte("trust-pw")); err != nil {
		t.Fatal(err)
	}
	emptyJKS := b.file("empty.jks", empty.Bytes())
	keyOnlyPEM := b.file("key.pem", must(b.client.KeyPEM(""))(t))
	pemFile := b.file("ts.pem", b.ca.PEM())
	garbage := b.file("garbage.bin", []byte("not a truststore"))
	missing := b.dir + "/missing.jks"

	tests := []struct {
		name   string
		c      config.Client
		origin string
		want   string
	}{
		{"missing file", client("ssl.truststore.location", missing),
			"B.ssl.truststore.location", `cluster "B": cannot read the truststore file ` + missing + `: the file does not exist; check B.ssl.truststore.location`},
		{"JKS, wrong password", client("ssl.truststore.location", jks, "ssl.truststore.password", "nope"),
			"B.ssl.truststore.password", `ssl.truststore.password does not open the truststore ` + jks + ` (JKS): the password is wrong (or the file was altered); check B.ssl.truststore.password, or remove it`},
		{"PKCS12, wrong password", client("ssl.truststore.location", p12, "ssl.truststore.password", "nope"),
			"B.ssl.truststore.password", `ssl.truststore.password does not open the truststore ` + p12 + ` (PKCS12): the password is wrong`},
		{"PKCS12, password needed", client("ssl.truststore.location", p12),
			"B.ssl.truststore.location", `the truststore ` + p12 + ` (PKCS12) is protected by a password, and ssl.truststore.password is not set; set B.ssl.truststore.password`},
		{"PKCS12 keystore as truststore", client("ssl.truststore.location", p12Keystore, "ssl.truststore.password", "trust-pw"),
			"B.ssl.truststore.location", `(PKCS12) holds more than trusted certificates (a private key?)`},
		{"empty JKS", client("ssl.truststore.location", emptyJKS, "ssl.truststore.password", "trust-pw"),
			"B.ssl.truststore.location", `the truststore ` + emptyJKS + ` (JKS) holds no certificates, so no broker could be trusted (Java refuses an empty truststore too)`},
		{"PEM file without certificates", client("ssl.truststore.type", "PEM", "ssl.truststore.location", keyOnlyPEM),
			"B.ssl.truststore.location", `the truststore ` + keyOnlyPEM + ` (PEM) holds no certificates`},
		{"inline without certificates", client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", "-----BEGIN NOTHING-----"),
			"B.ssl.truststore.certificates", `ssl.truststore.certificates holds no certificates`},
		{"file of another format", client("ssl.truststore.location", garbage),
			"B.ssl.truststore.location", `the truststore ` + garbage + ` is neither a JKS nor a PKCS12 truststore`},
		{"PEM file under type JKS", client("ssl.truststore.location", pemFile),
			"B.ssl.truststore.location", `the truststore ` + pemFile + ` is a PEM file but ssl.truststore.type is JKS; set B.ssl.truststore.type=PEM`},
		{"inline under type JKS", client("ssl.truststore.certificates", string(b.ca.PEM())),
			"B.ssl.truststore.certificates", `ssl.truststore.certificates (inline PEM certificates) needs ssl.truststore.type=PEM, but the type is JKS; set B.ssl.truststore.type=PEM`},
		{"location and inline", client("ssl.truststore.type", "PEM", "ssl.truststore.location", pemFile, "ssl.truststore.certificates", string(b.ca.PEM())),
			"B.ssl.truststore.location", `ssl.truststore.location and ssl.truststore.certificates are both set: Kafka refuses a truststore file and inline certificates together`},
		{"PEM with password", client("ssl.truststore.type", "PEM", "ssl.truststore.location", pemFile, "ssl.truststore.password", "x"),
			"B.ssl.truststore.password", `ssl.truststore.password cannot be used with a PEM truststore; remove B.ssl.truststore.password`},
		{"password without location", client("ssl.truststore.password", "x"),
			"B.ssl.truststore.password", `ssl.truststore.password is set but ssl.truststore.location is not`},
		{"empty location", client("ssl.truststore.location", ""),
			"B.ssl.truststore.location", `ssl.truststore.location is empty`},
		{"JKS, empty password", client("ssl.truststore.location", jks, "ssl.truststore.password", ""),
			"B.ssl.truststore.password", `the password is wrong (or the file was altered) (ssl.truststore.password is set to the empty string, which Java takes as a password, not as unset)`},
		{"type BCFKS", client("ssl.truststore.type", "BCFKS", "ssl.truststore.location", jks),
			"B.ssl.truststore.type", `ssl.truststore.type=BCFKS is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Build(tt.c, Options{})
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
