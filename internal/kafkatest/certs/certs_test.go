package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Every store reads back with the libraries Strait's TLS code uses, and the
// PEM pair is a working Go key pair.
func TestStoresReadBack(t *testing.T) {
	ca, err := NewAuthority("test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(LeafOptions{CommonName: "broker", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: pool(ca)}); err != nil {
		t.Fatalf("leaf does not verify against its CA: %v", err)
	}
	key, err := leaf.KeyPEM("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(leaf.ChainPEM(), key); err != nil {
		t.Fatalf("PEM pair: %v", err)
	}
	if enc, err := leaf.KeyPEM("pw"); err != nil || !bytes.Contains(enc, []byte("ENCRYPTED PRIVATE KEY")) {
		t.Fatalf("encrypted key PEM: %v\n%s", err, enc)
	}

	jks, err := leaf.JKSKeystore("store-pw", "key-pw")
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(jks), []byte("store-pw")); err != nil {
		t.Fatalf("JKS keystore: %v", err)
	}
	if _, err := ks.GetPrivateKeyEntry("strait", []byte("key-pw")); err != nil {
		t.Fatalf("JKS key entry: %v", err)
	}
	p12, err := leaf.PKCS12Keystore("pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, c, _, err := pkcs12.DecodeChain(p12, "pw"); err != nil || !c.Equal(leaf.Cert) {
		t.Fatalf("PKCS12 keystore: %v", err)
	}
	ts, err := JKSTruststore("pw", ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := keystore.New().Load(bytes.NewReader(ts), []byte("pw")); err != nil {
		t.Fatalf("JKS truststore: %v", err)
	}
	pts, err := PKCS12Truststore("pw", ca)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := pkcs12.DecodeTrustStore(pts, "pw"); err != nil || len(cs) != 1 {
		t.Fatalf("PKCS12 truststore: %d certs, %v", len(cs), err)
	}
}

func pool(cas ...*Authority) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.Cert)
	}
	return p
}
