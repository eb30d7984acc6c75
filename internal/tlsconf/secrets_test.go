package tlsconf

import (
	"encoding/base64"
	"strings"
	"testing"

	"strait/internal/config"
	"strait/internal/kafkatest/certs"
)

// No error or warning text holds a password, key material or a store's
// content, whatever goes wrong: every failure of every store is built with
// canary passwords and the texts are searched for them.
func TestNoSecretsInMessages(t *testing.T) {
	const (
		storePw = "canary-store-7f3a9"
		keyPw   = "canary-key-9b2c1"
		trustPw = "canary-trust-1d4e5"
		wrongPw = "canary-wrong-5e6f7"
	)
	b := newBed(t)
	l := b.client
	keyPlain := must(l.KeyPEM(""))(t)
	keyEnc := must(l.KeyPEM(keyPw))(t)
	jks := b.file("ks.jks", must(l.JKSKeystore(storePw, keyPw))(t))
	p12 := b.file("ks.p12", must(l.PKCS12Keystore(storePw))(t))
	pemEnc := b.file("ks.pem", must(l.PEMKeystore(keyPw))(t))
	tsJKS := b.file("ts.jks", must(certs.JKSTruststore(trustPw, b.ca))(t))
	tsP12 := b.file("ts.p12", must(certs.PKCS12Truststore(trustPw, b.ca))(t))
	chain := string(l.ChainPEM())
	clients := []config.Client{
		client("ssl.keystore.location", jks, "ssl.keystore.password", wrongPw),
		client("ssl.keystore.location", jks, "ssl.keystore.password", storePw),
		client("ssl.keystore.location", jks, "ssl.keystore.password", storePw, "ssl.key.password", wrongPw),
		client("ssl.keystore.location", p12, "ssl.keystore.password", wrongPw),
		client("ssl.keystore.location", p12, "ssl.keystore.password", storePw, "ssl.key.password", keyPw),
		client("ssl.keystore.location", tsJKS, "ssl.keystore.password", trustPw),
		client("ssl.keystore.location", tsP12, "ssl.keystore.password", trustPw),
		client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemEnc, "ssl.key.password", wrongPw),
		client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemEnc, "ssl.keystore.password", storePw),
		client("ssl.keystore.type", "PEM", "ssl.keystore.location", pemEnc),
		client("ssl.keystore.type", "PEM", "ssl.keystore.key", string(keyEnc), "ssl.keystore.certificate.chain", chain, "ssl.key.password", wrongPw),
		client("ssl.keystore.type", "PEM", "ssl.keystore.key", string(keyPlain), "ssl.keystore.certificate.chain", chain, "ssl.key.password", keyPw),
		client("ssl.keystore.type", "PEM", "ssl.keystore.key", string(keyPlain), "ssl.keystore.certificate.chain", strings.ReplaceAll(chain, "\n", " ")),
		client("ssl.keystore.key", string(keyPlain), "ssl.keystore.certificate.chain", chain, "ssl.keystore.password", storePw, "ssl.keystore.location", jks),
		client("ssl.keystore.certificate.chain", string(keyEnc)),
		client("ssl.keystore.password", storePw),
		client("ssl.truststore.location", tsJKS, "ssl.truststore.password", wrongPw),
		client("ssl.truststore.location", tsP12, "ssl.truststore.password", wrongPw),
		client("ssl.truststore.location", tsP12),
		client("ssl.truststore.location", p12, "ssl.truststore.password", storePw),
		client("ssl.truststore.certificates", string(keyPlain), "ssl.truststore.password", trustPw),
		client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(keyPlain)),
		client("ssl.truststore.password", trustPw, "ssl.endpoint.identification.algorithm", ""),
		// Values resolved through a config provider are secret, whatever the key.
		secret(client("ssl.keymanager.algorithm", keyPw, "ssl.provider", storePw, "ssl.keystore.type", trustPw, "ssl.keystore.location", b.dir+"/"+wrongPw,
			"ssl.keystore.password", storePw, "ssl.protocol", keyPw, "ssl.endpoint.identification.algorithm", storePw, "ssl.cipher.suites", wrongPw,
			"ssl.engine.factory.class", trustPw, "ssl.truststore.location", b.dir+"/"+keyPw)),
		secret(client("ssl.enabled.protocols", keyPw+",TLSv1.2", "ssl.truststore.type", storePw, "ssl.truststore.location", tsJKS)),
		secret(client("ssl.keystore.location", b.dir+"/"+wrongPw, "ssl.keystore.password", storePw, "ssl.truststore.location", b.dir+"/"+trustPw)),
	}
	// Key material as it could leak: the PEM bodies and the raw key in base64.
	var canaries = []string{storePw, keyPw, trustPw, wrongPw}
	for _, text := range []string{string(keyPlain), string(keyEnc)} {
		body := strings.Join(strings.Split(text, "\n")[1:3], "")
		canaries = append(canaries, body[10:40])
	}
	der := must(pkcs8DER(l))(t)
	canaries = append(canaries, base64.StdEncoding.EncodeToString(der)[8:32])
	var n int
	for i, c := range clients {
		_, ws, err := Build(c, Options{})
		var texts []string
		if err != nil {
			texts = append(texts, err.Error())
		}
		for _, w := range ws {
			texts = append(texts, w.String())
		}
		for _, text := range texts {
			n++
			t.Logf("case %d: %s", i, text)
			for _, s := range canaries {
				if strings.Contains(text, s) {
					t.Errorf("case %d leaks %q:\n%s", i, s, text)
				}
			}
		}
	}
	if n < len(clients) {
		t.Fatalf("%d messages from %d failing cases; every case must report", n, len(clients))
	}
}

// secret marks every property of c secret, as a config provider does.
func secret(c config.Client) config.Client {
	for i := range c.Props {
		c.Props[i].Secret = true
	}
	return c
}
