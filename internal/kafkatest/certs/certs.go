// Package certs makes the certificates of the TLS test bed with Go's crypto:
// certificate authorities, broker and client certificates (valid, expired or
// for another host), and writes them as the stores Java users have: JKS,
// PKCS12 and PEM files. It is for tests only; keys are ECDSA P-256 for speed.
package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Authority is a self-signed certificate authority.
type Authority struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewAuthority makes a CA valid from an hour ago for ten years.
func NewAuthority(name string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Strait test bed"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// PEM returns the CA certificate as PEM, as a truststore file holds it.
func (a *Authority) PEM() []byte { return certPEM(a.Cert) }

// LeafOptions describe a certificate to issue.
type LeafOptions struct {
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	// NotBefore and NotAfter default to an hour ago and a year from now.
	NotBefore, NotAfter time.Time
}

// Leaf is an issued certificate with its private key.
type Leaf struct {
	Cert  *x509.Certificate
	Key   crypto.Signer
	Chain []*x509.Certificate // Cert, then its issuer
}

// Issue signs a certificate for both server and client use.
func (a *Authority) Issue(o LeafOptions) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().AddDate(1, 0, 0)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: o.CommonName, Organization: []string{"Strait test bed"}},
		DNSNames:     o.DNSNames,
		IPAddresses:  o.IPs,
		NotBefore:    o.NotBefore,
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, key.Public(), a.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key, Chain: []*x509.Certificate{cert, a.Cert}}, nil
}

// ChainPEM is the certificate chain as PEM (ssl.keystore.certificate.chain).
func (l *Leaf) ChainPEM() []byte {
	var b bytes.Buffer
	for _, c := range l.Chain {
		b.Write(certPEM(c))
	}
	return b.Bytes()
}

// KeyPEM is the private key as PKCS#8 PEM, encrypted with password unless
// it is empty (ssl.keystore.key; Kafka needs PKCS#8, encrypted exactly when
// ssl.key.password is set).
func (l *Leaf) KeyPEM(password string) ([]byte, error) {
	if password == "" {
		der, err := x509.MarshalPKCS8PrivateKey(l.Key)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	der, err := pkcs8.MarshalPrivateKey(l.Key, []byte(password), nil)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der}), nil
}

// PEMKeystore is a PEM keystore file (ssl.keystore.type=PEM): the key, then
// the chain.
func (l *Leaf) PEMKeystore(keyPassword string) ([]byte, error) {
	k, err := l.KeyPEM(keyPassword)
	if err != nil {
		return nil, err
	}
	return append(k, l.ChainPEM()...), nil
}

// JKSKeystore is a JKS keystore holding the key under alias "strait",
// protected by keyPassword, in a store protected by storePassword.
func (l *Leaf) JKSKeystore(storePassword, keyPassword string) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		return nil, err
	}
	ks := keystore.New()
	entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der}
	for _, c := range l.Chain {
		entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X509", Content: c.Raw})
	}
	if err := ks.SetPrivateKeyEntry("strait", entry, []byte(keyPassword)); err != nil {
		return nil, err
	}
	return storeBytes(ks, storePassword)
}

// PKCS12Keystore is a PKCS12 keystore; PKCS12 has one password for the
// store and its key.
func (l *Leaf) PKCS12Keystore(password string) ([]byte, error) {
	return pkcs12.Modern.Encode(l.Key, l.Cert, l.Chain[1:], password)
}

// JKSTruststore is a JKS truststore of the given CAs.
func JKSTruststore(password string, cas ...*Authority) ([]byte, error) {
	ks := keystore.New()
	for i, ca := range cas {
		entry := keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw}}
		if err := ks.SetTrustedCertificateEntry(fmt.Sprintf("ca%d", i), entry); err != nil {
			return nil, err
		}
	}
	return storeBytes(ks, password)
}

// PKCS12Truststore is a PKCS12 truststore of the given CAs, readable by Java.
func PKCS12Truststore(password string, cas ...*Authority) ([]byte, error) {
	var certs []*x509.Certificate
	for _, ca := range cas {
		certs = append(certs, ca.Cert)
	}
	return pkcs12.Modern.EncodeTrustStore(certs, password)
}

// PEMTruststore is a PEM truststore of the given CAs.
func PEMTruststore(cas ...*Authority) []byte {
	var b bytes.Buffer
	for _, ca := range cas {
		b.Write(ca.PEM())
	}
	return b.Bytes()
}

func storeBytes(ks keystore.KeyStore, password string) ([]byte, error) {
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 96))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
