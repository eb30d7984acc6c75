package tlsconf

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"

	"strait/internal/config"
	"strait/internal/kafkatest/certs"
)

// Every keystore format, as a file and inline, with and without a key
// password, gives the client certificate.
func TestKeystoreFormats(t *testing.T) {
	b := newBed(t)
	l := b.client
	jks := b.file("ks.jks", must(l.JKSKeystore("store-pw", "store-pw"))(t))
	jksOwnKeyPw := b.file("ks-keypw.jks", must(l.JKSKeystore("store-pw", "key-pw"))(t))
	p12 := b.file("ks.p12", must(l.PKCS12Keystore("store-pw"))(t))
	pemPlain := b.file("ks.pem", must(l.PEMKeystore(""))(t))
	pemEnc := b.file("ks-enc.pem", must(l.PEMKeystore("key-pw"))(t))
	keyPlain := string(must(l.KeyPEM(""))(t))
	keyEnc := string(must(l.KeyPEM("key-pw"))(t))
	// The value an mm2.properties with bare continuation lines gives: one
	// line, the PEM lines joined by spaces.
	oneLine := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

	tests := []struct {
		name string
		c    config.Client
	}{
		{"JKS file", client("ssl.keystore.location", jks, "ssl.keystore.password", "store-pw")},
		{"JKS file, type written in lower case", client("ssl.keystore.type", "jks", "ssl.keystore.location", jks, "ssl.keystore.password", "store-pw")},
		{"JKS file, key password of its own", client("ssl.keystore.location", jksOwnKeyPw, "ssl.keystore.password", "store-pw", "ssl.key.password", "key-pw")},
		{"JKS file, ssl.key.password equal to the store's", client("ssl.keystore.location", jks, "ssl.keystore.password", "store-pw", "ssl.key.password", "store-pw")},
		{"PKCS12 file", client("ssl.keystore.type", "PKCS12", "ssl.keystore.location", p12, "ssl.keystore.password", "store-pw")},
		{"PKCS12 file under the default type JKS (keystore.type.compat)", client("ssl.keystore.location", p12, "ssl.keystore.password", "store-pw")},
		{"JKS file under type PKCS12 (keystore.type.compat)", client("ssl.keystore.type", "PKCS12", "ssl.keystore.location", jks, "ssl.keystore.password", "store-pw")},
		{"PKCS12 file, ssl.key.password equal to the store's", client("ssl.keystore.type", "PKCS12", "ssl.keystore.location", p12, "ssl.keystore.password", "store-pw", "ssl.key.password", "store-pw")},
		{"PEM file, plain key", client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemPlain)},
		{"PEM file, encrypted key", client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemEnc, "ssl.key.password", "key-pw")},
		{"inline PEM, plain key", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", string(l.ChainPEM()))},
		{"inline PEM, encrypted key", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyEnc, "ssl.keystore.certificate.chain", string(l.ChainPEM()), "ssl.key.password", "key-pw")},
		{"inline PEM, key on one line", client("ssl.keystore.type", "PEM", "ssl.keystore.key", oneLine(keyEnc), "ssl.keystore.certificate.chain", string(l.ChainPEM()), "ssl.key.password", "key-pw")},
		{"an empty type is the default", client("ssl.keystore.type", "", "ssl.keystore.location", jks, "ssl.keystore.password", "store-pw")},
		{"a JKS store with the empty password", client("ssl.keystore.location", b.file("empty-pw.jks", must(l.JKSKeystore("", "key-pw"))(t)), "ssl.keystore.password", "", "ssl.key.password", "key-pw")},
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
			if len(cfg.Certificates) != 1 {
				t.Fatalf("%d client certificates, want 1", len(cfg.Certificates))
			}
			got := cfg.Certificates[0]
			if !got.Leaf.Equal(l.Cert) {
				t.Errorf("leaf is %q, want the client's", got.Leaf.Subject)
			}
			if len(got.Certificate) != 2 || !bytes.Equal(got.Certificate[1], b.ca.Cert.Raw) {
				t.Errorf("chain has %d certificates, want the client's and its CA's", len(got.Certificate))
			}
		})
	}
}

// No keystore: no client certificate, and no problem (brokers that do not
// require client authentication).
func TestNoKeystore(t *testing.T) {
	if leaf := leafOf(t, client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(newBed(t).ca.PEM())), Options{}); leaf != nil {
		t.Fatalf("client certificate %q without a keystore", leaf.Subject)
	}
}

// jksWith is a JKS keystore of leaves by alias, each key protected by its
// own password.
func jksWith(t *testing.T, storePw string, keys map[string]*certs.Leaf, keyPws map[string]string) []byte {
	t.Helper()
	ks := keystore.New()
	for alias, l := range keys {
		der := must(x509.MarshalPKCS8PrivateKey(l.Key))(t)
		e := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der}
		for _, c := range l.Chain {
			e.CertificateChain = append(e.CertificateChain, keystore.Certificate{Type: "X509", Content: c.Raw})
		}
		if err := ks.SetPrivateKeyEntry(alias, e, []byte(keyPws[alias])); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(storePw)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A JKS keystore with several keys: the first alias in alphabetical order
// is used, with a warning naming it; every key must open with the one key
// password, as Java's SunX509 key manager requires.
func TestJKSSeveralKeys(t *testing.T) {
	b := newBed(t)
	second := must(b.ca.Issue(certs.LeafOptions{CommonName: "second"}))(t)
	both := b.file("two.jks", jksWith(t, "store-pw", map[string]*certs.Leaf{"zeta": b.client, "alpha": second}, map[string]string{"zeta": "store-pw", "alpha": "store-pw"}))
	cfg, ws, err := Build(client("ssl.keystore.location", both, "ssl.keystore.password", "store-pw"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Certificates[0].Leaf; !got.Equal(second.Cert) {
		t.Errorf("chose %q, want the key under alias alpha", got.Subject)
	}
	if msg := messages(ws); !strings.Contains(msg, `holds 2 private keys (alpha, zeta); Strait uses the first, "alpha"`) {
		t.Errorf("warnings do not name the chosen key:\n%s", msg)
	}

	mixed := b.file("mixed.jks", jksWith(t, "store-pw", map[string]*certs.Leaf{"zeta": b.client, "alpha": second}, map[string]string{"zeta": "other-pw", "alpha": "store-pw"}))
	_, _, err = Build(client("ssl.keystore.location", mixed, "ssl.keystore.password", "store-pw"), Options{})
	if err == nil || !strings.Contains(err.Error(), `the key "zeta" in the keystore `+mixed+` (JKS) has its own password`) {
		t.Errorf("a key with another password: got %v", err)
	}
}

// The client's own certificate must be valid at Options.Now.
func TestClientCertificateValidity(t *testing.T) {
	b := newBed(t)
	now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	expired := must(b.ca.Issue(certs.LeafOptions{CommonName: "old-client", NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.Add(-time.Hour)}))(t)
	future := must(b.ca.Issue(certs.LeafOptions{CommonName: "new-client", NotBefore: now.Add(time.Hour), NotAfter: now.AddDate(1, 0, 0)}))(t)
	valid := must(b.ca.Issue(certs.LeafOptions{CommonName: "client", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}))(t)
	tests := []struct {
		name string
		leaf *certs.Leaf
		want string
	}{
		{"valid", valid, ""},
		{"expired", expired, `cluster "B": the client certificate of the keystore ` + b.dir + `/expired.p12 (PKCS12) (subject "CN=old-client,O=Strait test bed", named by ssl.keystore.location) expired at 2030-06-01T11:00:00Z; renew it and update B.ssl.keystore.location`},
		{"not yet valid", future, `(subject "CN=new-client,O=Strait test bed", named by ssl.keystore.location) is not valid before 2030-06-01T13:00:00Z; check this host's clock`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := b.file(strings.ReplaceAll(tt.name, " ", "-")+".p12", must(tt.leaf.PKCS12Keystore("pw"))(t))
			_, _, err := Build(client("ssl.keystore.location", path, "ssl.keystore.password", "pw"), at(now))
			ps := problems(t, err)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return
			}
			if len(ps) != 1 || !strings.Contains(ps[0].Message, tt.want) {
				t.Fatalf("got %v\nwant a problem containing %s", err, tt.want)
			}
			if ps[0].Origin.Key != "B.ssl.keystore.location" {
				t.Errorf("problem at %v, want B.ssl.keystore.location", ps[0].Origin)
			}
		})
	}
}

// Each way a keystore can be wrong is its own problem, at the key at fault.
func TestKeystoreProblems(t *testing.T) {
	b := newBed(t)
	l := b.client
	jks := b.file("ks.jks", must(l.JKSKeystore("store-pw", "store-pw"))(t))
	jksKeyPw := b.file("ks-keypw.jks", must(l.JKSKeystore("store-pw", "key-pw"))(t))
	p12 := b.file("ks.p12", must(l.PKCS12Keystore("store-pw"))(t))
	trustJKS := b.file("ts.jks", must(certs.JKSTruststore("store-pw", b.ca))(t))
	trustP12 := b.file("ts.p12", must(certs.PKCS12Truststore("store-pw", b.ca))(t))
	pemKS := b.file("ks.pem", must(l.PEMKeystore(""))(t))
	pemEnc := b.file("ks-enc.pem", must(l.PEMKeystore("key-pw"))(t))
	garbage := b.file("garbage.bin", []byte("this is not a keystore at all"))
	damaged := b.file("damaged.jks", append(jksMagic, 0, 0, 0, 2, 0, 0, 0, 9))
	jceks := b.file("ks.jceks", append(jceksMagic, 0, 0, 0, 2))
	chainOnly := b.file("chain.pem", l.ChainPEM())
	keyPlain := string(must(l.KeyPEM(""))(t))
	keyEnc := string(must(l.KeyPEM("key-pw"))(t))
	chain := string(l.ChainPEM())
	sec1 := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: must(x509.MarshalECPrivateKey(l.Key.(*ecdsa.PrivateKey)))(t)}))
	strangerKey := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))(t)
	strangerPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(strangerKey))(t)}))
	missing := b.dir + "/missing.jks"

	tests := []struct {
		name   string
		c      config.Client
		origin string // the key the problem points at
		want   string
	}{
		{"missing file", client("ssl.keystore.location", missing, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `cluster "B": cannot read the keystore file ` + missing + `: the file does not exist; check B.ssl.keystore.location`},
		{"empty file", client("ssl.keystore.location", b.file("empty.jks", nil), "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `cluster "B": the keystore file ` + b.dir + `/empty.jks is empty; check B.ssl.keystore.location`},
		{"JKS, wrong store password", client("ssl.keystore.location", jks, "ssl.keystore.password", "nope"),
			"B.ssl.keystore.password", `cluster "B": ssl.keystore.password does not open the keystore ` + jks + ` (JKS): the password is wrong (or the file was altered); check B.ssl.keystore.password`},
		{"JKS, wrong key password", client("ssl.keystore.location", jksKeyPw, "ssl.keystore.password", "store-pw", "ssl.key.password", "nope"),
			"B.ssl.key.password", `ssl.key.password does not open the key "strait" in the keystore ` + jksKeyPw + ` (JKS): the password is wrong; check B.ssl.key.password`},
		{"JKS, key password needed", client("ssl.keystore.location", jksKeyPw, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.password", `the key "strait" in the keystore ` + jksKeyPw + ` (JKS) has its own password, not ssl.keystore.password (Java's key manager opens every key with one password); set B.ssl.key.password to the key's password`},
		{"PKCS12, wrong store password", client("ssl.keystore.type", "PKCS12", "ssl.keystore.location", p12, "ssl.keystore.password", "nope"),
			"B.ssl.keystore.password", `ssl.keystore.password does not open the keystore ` + p12 + ` (PKCS12): the password is wrong; check B.ssl.keystore.password`},
		{"PKCS12, key password not the store's", client("ssl.keystore.type", "PKCS12", "ssl.keystore.location", p12, "ssl.keystore.password", "store-pw", "ssl.key.password", "key-pw"),
			"B.ssl.key.password", `a PKCS12 key has the store's password (keytool ignores -keypass for PKCS12), so Java fails with it too; remove B.ssl.key.password or set it to the keystore password`},
		{"JKS without a private key", client("ssl.keystore.location", trustJKS, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `the keystore ` + trustJKS + ` (JKS) holds no private key entry, only trusted certificates`},
		{"PKCS12 without a private key", client("ssl.keystore.location", trustP12, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `the keystore ` + trustP12 + ` (PKCS12) holds no private key, only certificates`},
		{"file of another format", client("ssl.keystore.location", garbage, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `the keystore ` + garbage + ` is neither a JKS nor a PKCS12 keystore; check B.ssl.keystore.location and B.ssl.keystore.type`},
		{"damaged JKS", client("ssl.keystore.location", damaged, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `the keystore ` + damaged + ` (JKS) is damaged and cannot be parsed`},
		{"JCEKS file", client("ssl.keystore.location", jceks, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `is a JCEKS store, which Strait cannot read: Strait reads JKS, PKCS12 and PEM stores; convert it with keytool -importkeystore`},
		{"PEM file under type JKS", client("ssl.keystore.location", pemKS, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `the keystore ` + pemKS + ` is a PEM file but ssl.keystore.type is JKS; set B.ssl.keystore.type=PEM`},
		{"JKS file under type PEM", client("ssl.keystore.type", "PEM", "ssl.keystore.location", jks),
			"B.ssl.keystore.location", `the keystore ` + jks + ` is not PEM but ssl.keystore.type is PEM (the file looks like JKS); set B.ssl.keystore.type to the file's type`},
		{"type pem in lower case", client("ssl.keystore.type", "pem", "ssl.keystore.location", pemKS, "ssl.keystore.password", "x"),
			"B.ssl.keystore.type", `ssl.keystore.type=pem is not supported: Kafka compares the type PEM case-sensitively, so write PEM`},
		{"type JCEKS", client("ssl.keystore.type", "JCEKS", "ssl.keystore.location", jks, "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.type", `ssl.keystore.type=JCEKS is not supported: Strait reads JKS, PKCS12 and PEM stores`},
		{"location without password", client("ssl.keystore.location", jks),
			"B.ssl.keystore.location", `the keystore ` + jks + ` needs its password, but ssl.keystore.password is not set; set B.ssl.keystore.password`},
		{"password without location", client("ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.password", `ssl.keystore.password is set but ssl.keystore.location is not: set B.ssl.keystore.location to the keystore file, or remove B.ssl.keystore.password`},
		{"location and inline key", client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemKS, "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.location", `ssl.keystore.location and ssl.keystore.key are both set: Kafka refuses a keystore file and an inline key together; remove B.ssl.keystore.location or B.ssl.keystore.key`},
		{"inline key under type JKS", client("ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.key", `ssl.keystore.key (an inline PEM key) needs ssl.keystore.type=PEM, but the type is JKS; set B.ssl.keystore.type=PEM`},
		{"inline key without chain", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain),
			"B.ssl.keystore.key", `ssl.keystore.key is set but ssl.keystore.certificate.chain is not`},
		{"chain without key", client("ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.certificate.chain", `ssl.keystore.certificate.chain is set but ssl.keystore.key is not: set B.ssl.keystore.key to the client's PEM private key`},
		{"inline key with store password", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", chain, "ssl.keystore.password", "x"),
			"B.ssl.keystore.password", `ssl.keystore.password cannot be used with an inline PEM key`},
		{"PEM file with store password", client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemKS, "ssl.keystore.password", "x"),
			"B.ssl.keystore.password", `ssl.keystore.password cannot be used with a PEM keystore (Kafka takes only ssl.key.password, the password of an encrypted key); remove B.ssl.keystore.password`},
		{"encrypted PEM key without key password", client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemEnc),
			"B.ssl.keystore.location", `the private key in the keystore ` + pemEnc + ` (PEM) is encrypted, but ssl.key.password is not set; set B.ssl.key.password to the key's password`},
		{"plain PEM key with key password", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", chain, "ssl.key.password", "key-pw"),
			"B.ssl.key.password", `ssl.key.password is set, but the private key in ssl.keystore.key is not encrypted`},
		{"PEM key, wrong key password", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyEnc, "ssl.keystore.certificate.chain", chain, "ssl.key.password", "nope"),
			"B.ssl.key.password", `ssl.key.password does not decrypt the private key in ssl.keystore.key: the password is wrong; check B.ssl.key.password`},
		{"SEC1 key", client("ssl.keystore.type", "PEM", "ssl.keystore.key", sec1, "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.key", `is in PKCS#1 or SEC1 form (BEGIN RSA/EC PRIVATE KEY), and Kafka reads only PKCS#8; convert it with openssl pkcs8 -topk8`},
		{"key of another certificate", client("ssl.keystore.type", "PEM", "ssl.keystore.key", strangerPEM, "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.certificate.chain", `the private key of ssl.keystore.certificate.chain does not belong to its first certificate (subject "CN=strait-client,O=Strait test bed")`},
		{"PEM file without a key", client("ssl.keystore.type", "PEM", "ssl.keystore.location", chainOnly),
			"B.ssl.keystore.location", `the keystore ` + chainOnly + ` (PEM) holds no PEM private key`},
		{"chain of two on one line", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", strings.ReplaceAll(chain, "\n", " ")),
			"B.ssl.keystore.certificate.chain", `ssl.keystore.certificate.chain holds 2 certificates on one line, and Kafka's PEM parser then reads only the last (subject "CN=bed CA,O=Strait test bed"), which is not the client's: MirrorMaker 2 fails with this value too; end each PEM line of B.ssl.keystore.certificate.chain with \n\ in the properties file`},
		{"empty location", client("ssl.keystore.location", "", "ssl.keystore.password", "store-pw"),
			"B.ssl.keystore.location", `ssl.keystore.location is empty, which Kafka takes as an empty value, not as unset, and cannot use; set B.ssl.keystore.location or remove it`},
		{"empty inline key", client("ssl.keystore.type", "PEM", "ssl.keystore.key", " ", "ssl.keystore.certificate.chain", chain),
			"B.ssl.keystore.key", `ssl.keystore.key is empty`},
		{"empty key password is a password", client("ssl.keystore.location", jks, "ssl.keystore.password", "store-pw", "ssl.key.password", ""),
			"B.ssl.key.password", `ssl.key.password does not open the key "strait" in the keystore ` + jks + ` (JKS): the password is wrong (ssl.key.password is set to the empty string, which Java takes as a password, not as unset); check B.ssl.key.password`},
		{"chain without certificates", client("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPlain, "ssl.keystore.certificate.chain", "not a certificate"),
			"B.ssl.keystore.certificate.chain", `ssl.keystore.certificate.chain holds no PEM certificate`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Build(tt.c, Options{})
			if cfg != nil {
				t.Errorf("a config despite problems")
			}
			ps := problems(t, err)
			for _, p := range ps {
				if p.Origin.Key == tt.origin && strings.Contains(p.Message, tt.want) {
					return
				}
			}
			t.Fatalf("got %v\nwant a problem at %s containing\n%s", err, tt.origin, tt.want)
		})
	}
}
