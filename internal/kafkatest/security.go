package kafkatest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strait/internal/kafkatest/certs"
)

// The client listeners of a secure test bed (Options.Security): the keys of
// Cluster.Listeners. Every broker also keeps its PLAINTEXT listener (Cluster.Bootstrap),
// which the brokers replicate on.
const (
	// ListenerSSL is TLS that requires a client certificate issued by Security.CA.
	ListenerSSL = "SSL"
	// ListenerSASLSSL is TLS (no client certificate) with SCRAM-SHA-256 and SCRAM-SHA-512,
	// both knowing Security.SCRAM.
	ListenerSASLSSL = "SASL_SSL"
	// ListenerSASLPlaintext is PLAIN without TLS, knowing Security.Plain.
	ListenerSASLPlaintext = "SASL_PLAINTEXT"
	// ListenerOAuth is OAUTHBEARER without TLS: the broker accepts an RS256 JWT signed by
	// Security's signing key (Security.SignJWT, TokenEndpoint) that names Security.Issuer
	// and Security.Audience and has a sub, iat and exp. A session lasts until its token
	// expires; the client must re-authenticate before then.
	ListenerOAuth = "OAUTH"
	// ListenerExpired is TLS (no client certificate) whose broker certificate
	// (Security.ExpiredBroker) expired a day ago.
	ListenerExpired = "EXPIRED"
)

// The files of the dir `kafka.sh start --security DIR` reads; see the script's usage.
const (
	brokerPEMFile        = "broker.pem"
	expiredBrokerPEMFile = "broker-expired.pem"
	caPEMFile            = "ca.pem"
	jwksFile             = "jwks.json"
	oauthEnvFile         = "oauth.env"
	usersEnvFile         = "users.env"
)

// Credentials are a user name and its password.
type Credentials struct {
	User     string
	Password string
}

// Security holds the certificates, users and OAuth signing key of a secure test bed: what
// its brokers trust and know, so tests can build clients that pass (or fail) each listener.
// Passwords are random and distinctive ("canary-..."), so a test can check that they never
// appear in output.
type Security struct {
	// Dir is the dir the brokers read (the --security DIR of kafka.sh); empty until
	// WriteDir.
	Dir string
	// CA is the authority the brokers trust for client certificates and that issued
	// their certificates; clients trust it to verify the brokers.
	CA *certs.Authority
	// Broker is the certificate of the SSL and SASL_SSL listeners: SAN IP 127.0.0.1 only,
	// so that a client of "localhost:<port>" meets a hostname mismatch.
	Broker *certs.Leaf
	// ExpiredBroker is the certificate of the EXPIRED listener, issued by CA with the same
	// names as Broker, valid from 31 days ago until a day ago.
	ExpiredBroker *certs.Leaf
	// Client is a client certificate (CN strait-client) issued by CA: the SSL listener
	// accepts it.
	Client *certs.Leaf
	// OtherCA is an authority the brokers do not trust; OtherClient is a client
	// certificate it issued, which the SSL listener refuses. A client that trusts only
	// OtherCA refuses every broker.
	OtherCA     *certs.Authority
	OtherClient *certs.Leaf
	// SCRAM is the user of both SCRAM-SHA-256 and SCRAM-SHA-512 on SASL_SSL, created when
	// the clusters were formatted.
	SCRAM Credentials
	// Plain is the user of PLAIN on SASL_PLAINTEXT.
	Plain Credentials
	// Issuer and Audience are the iss and aud every JWT must carry on the OAUTH listener.
	Issuer   string
	Audience string
	// KeyID is the kid of the signing key in the brokers' JWKS.
	KeyID string

	signer *rsa.PrivateKey
}

// NewSecurity makes a fresh set of authorities, certificates, users and an RSA signing key.
// RunWith calls it for Options.Security; tests of their own (with kfake, say) may too.
func NewSecurity() (*Security, error) {
	s := &Security{
		SCRAM:    Credentials{User: "strait-scram", Password: canary("scram")},
		Plain:    Credentials{User: "strait-plain", Password: canary("plain")},
		Issuer:   "https://strait-kafkatest.invalid/issuer",
		Audience: "strait-kafkatest",
		KeyID:    "strait-kafkatest-" + randomHex(4),
	}
	var err error
	if s.CA, err = certs.NewAuthority("Strait test CA"); err != nil {
		return nil, fmt.Errorf("making the test bed CA: %w", err)
	}
	if s.OtherCA, err = certs.NewAuthority("Strait untrusted CA"); err != nil {
		return nil, fmt.Errorf("making the untrusted CA: %w", err)
	}
	names := certs.LeafOptions{CommonName: "strait-test-broker", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
	if s.Broker, err = s.CA.Issue(names); err != nil {
		return nil, fmt.Errorf("issuing the broker certificate: %w", err)
	}
	expired := names
	expired.NotBefore = time.Now().AddDate(0, 0, -31)
	expired.NotAfter = time.Now().AddDate(0, 0, -1)
	if s.ExpiredBroker, err = s.CA.Issue(expired); err != nil {
		return nil, fmt.Errorf("issuing the expired broker certificate: %w", err)
	}
	if s.Client, err = s.CA.Issue(certs.LeafOptions{CommonName: "strait-client"}); err != nil {
		return nil, fmt.Errorf("issuing the client certificate: %w", err)
	}
	if s.OtherClient, err = s.OtherCA.Issue(certs.LeafOptions{CommonName: "strait-untrusted-client"}); err != nil {
		return nil, fmt.Errorf("issuing the untrusted client certificate: %w", err)
	}
	// Kafka's JWT validation (jose4j) wants an RSA key of 2048 bits or more for RS256.
	if s.signer, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, fmt.Errorf("making the OAuth signing key: %w", err)
	}
	return s, nil
}

// canary returns a random password that is easy to search output for.
func canary(what string) string { return "canary-" + what + "-" + randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return hex.EncodeToString(b)
}

// WriteDir writes the files the brokers read (see `kafka.sh help`, --security) into dir,
// which it creates, and sets s.Dir.
func (s *Security) WriteDir(dir string) error {
	broker, err := s.Broker.PEMKeystore("")
	if err != nil {
		return fmt.Errorf("encoding the broker keystore: %w", err)
	}
	expired, err := s.ExpiredBroker.PEMKeystore("")
	if err != nil {
		return fmt.Errorf("encoding the expired broker keystore: %w", err)
	}
	users := fmt.Sprintf("# Users of the test bed's SASL listeners (kafkatest).\nscram:%s=%s\nplain:%s=%s\n",
		s.SCRAM.User, s.SCRAM.Password, s.Plain.User, s.Plain.Password)
	files := []struct {
		name string
		data []byte
	}{
		{brokerPEMFile, broker},
		{expiredBrokerPEMFile, expired},
		{caPEMFile, certs.PEMTruststore(s.CA)},
		{jwksFile, s.JWKS()},
		{oauthEnvFile, fmt.Appendf(nil, "ISSUER=%s\nAUDIENCE=%s\n", s.Issuer, s.Audience)},
		{usersEnvFile, []byte(users)},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the security dir %s: %w", dir, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	s.Dir = dir
	return nil
}

// JWKS returns the JSON Web Key Set of the signing key, as the brokers read it.
func (s *Security) JWKS() []byte {
	pub := s.signer.PublicKey
	key := map[string]string{
		"kty": "RSA",
		"use": "sig",
		"alg": "RS256",
		"kid": s.KeyID,
		"n":   b64(pub.N.Bytes()),
		"e":   b64(big.NewInt(int64(pub.E)).Bytes()),
	}
	b, _ := json.Marshal(map[string]any{"keys": []any{key}}) // strings only: cannot fail
	return b
}

// SignJWT returns claims as a JWT signed with RS256 by the key of the brokers' JWKS, for
// tests that need a token the OAUTH listener should refuse (wrong audience, expired, no
// sub). TokenEndpoint issues the good ones.
//
// RS256 is signed here with crypto/rsa rather than a JWT library: it is a dozen lines
// (RFC 7515: base64url(header) "." base64url(claims), PKCS #1 v1.5 over SHA-256), and the
// test bed then adds no module to go.mod for one signature.
func (s *Security) SignJWT(claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.KeyID})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encoding the JWT claims: %w", err)
	}
	input := b64(header) + "." + b64(payload)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.signer, crypto.SHA256, digest[:])
	if err != nil {
		return "", fmt.Errorf("signing the JWT: %w", err)
	}
	return input + "." + b64(sig), nil
}

// Claims returns the claims of a token the OAUTH listener accepts for subject, valid from
// now for lifetime.
func (s *Security) Claims(subject string, lifetime time.Duration) map[string]any {
	now := time.Now()
	return map[string]any{
		"sub": subject,
		"iss": s.Issuer,
		"aud": s.Audience,
		"iat": now.Unix(),
		"nbf": now.Add(-time.Minute).Unix(),
		"exp": now.Add(lifetime).Unix(),
		"jti": randomHex(8),
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// TLSConfig returns a Go client TLS config that trusts CA and, unless client is nil,
// presents client's certificate (Client, OtherClient, or one of a test's own).
func (s *Security) TLSConfig(client *certs.Leaf) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(s.CA.Cert)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if client != nil {
		var chain [][]byte
		for _, c := range client.Chain {
			chain = append(chain, c.Raw)
		}
		cfg.Certificates = []tls.Certificate{{Certificate: chain, PrivateKey: client.Key, Leaf: client.Cert}}
	}
	return cfg
}

// StoreFormat is the file format of a keystore or truststore; its value is what Kafka's
// ssl.keystore.type and ssl.truststore.type take.
type StoreFormat string

// The store formats Java clients use.
const (
	StoreJKS    StoreFormat = "JKS"
	StorePKCS12 StoreFormat = "PKCS12"
	StorePEM    StoreFormat = "PEM"
)

// Keystore writes leaf's key and chain as a keystore of format into a new file under the
// test's temp dir and returns its path. JKS protects the store with storePassword and the
// key with keyPassword; PKCS12 has one password, storePassword, for both; PEM (key, then
// chain) ignores storePassword and encrypts the PKCS#8 key with keyPassword unless it is
// empty.
func (s *Security) Keystore(t testing.TB, leaf *certs.Leaf, format StoreFormat, storePassword, keyPassword string) string {
	t.Helper()
	var data []byte
	var err error
	switch format {
	case StoreJKS:
		data, err = leaf.JKSKeystore(storePassword, keyPassword)
	case StorePKCS12:
		data, err = leaf.PKCS12Keystore(storePassword)
	case StorePEM:
		data, err = leaf.PEMKeystore(keyPassword)
	default:
		err = fmt.Errorf("unknown store format %q", format)
	}
	if err != nil {
		t.Fatalf("encoding the keystore of %q as %s: %v", leaf.Cert.Subject.CommonName, format, err)
		return ""
	}
	return writeTemp(t, "keystore", format, data)
}

// Truststore writes cas (CA if none are given) as a truststore of format into a new file
// under the test's temp dir and returns its path; PEM ignores password.
func (s *Security) Truststore(t testing.TB, format StoreFormat, password string, cas ...*certs.Authority) string {
	t.Helper()
	if len(cas) == 0 {
		cas = []*certs.Authority{s.CA}
	}
	var data []byte
	var err error
	switch format {
	case StoreJKS:
		data, err = certs.JKSTruststore(password, cas...)
	case StorePKCS12:
		data, err = certs.PKCS12Truststore(password, cas...)
	case StorePEM:
		data = certs.PEMTruststore(cas...)
	default:
		err = fmt.Errorf("unknown store format %q", format)
	}
	if err != nil {
		t.Fatalf("encoding a truststore as %s: %v", format, err)
		return ""
	}
	return writeTemp(t, "truststore", format, data)
}

func writeTemp(t testing.TB, kind string, format StoreFormat, data []byte) string {
	t.Helper()
	ext := map[StoreFormat]string{StoreJKS: ".jks", StorePKCS12: ".p12", StorePEM: ".pem"}[format]
	f, err := os.CreateTemp(t.TempDir(), kind+"-*"+ext)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("writing a %s: %v", kind, err)
		return ""
	}
	return f.Name()
}

// ClientStores are a client's keystore and truststore files in one format, with the
// passwords that open them.
type ClientStores struct {
	// Format is the type of both stores.
	Format StoreFormat
	// Keystore and Truststore are the files' paths.
	Keystore   string
	Truststore string
	// StorePassword opens both stores; empty for PEM, which has no store password.
	StorePassword string
	// KeyPassword opens the key: for PKCS12 it is StorePassword; for PEM it is empty when
	// the key is not encrypted.
	KeyPassword string
}

// ClientStores writes Client's keystore and a truststore of CA in format into the test's
// temp dir (see Keystore for what each format does with the passwords).
func (s *Security) ClientStores(t testing.TB, format StoreFormat, storePassword, keyPassword string) ClientStores {
	t.Helper()
	cs := ClientStores{Format: format, StorePassword: storePassword, KeyPassword: keyPassword}
	switch format {
	case StorePKCS12:
		cs.KeyPassword = storePassword
	case StorePEM:
		cs.StorePassword = ""
	}
	cs.Keystore = s.Keystore(t, s.Client, format, storePassword, keyPassword)
	cs.Truststore = s.Truststore(t, format, storePassword)
	return cs
}

// Properties returns the stores as Kafka client settings (ssl.keystore.*,
// ssl.truststore.*, ssl.key.password); empty passwords are left out.
func (cs ClientStores) Properties() map[string]string {
	p := map[string]string{
		"ssl.keystore.type":       string(cs.Format),
		"ssl.keystore.location":   cs.Keystore,
		"ssl.truststore.type":     string(cs.Format),
		"ssl.truststore.location": cs.Truststore,
	}
	if cs.StorePassword != "" {
		p["ssl.keystore.password"] = cs.StorePassword
		p["ssl.truststore.password"] = cs.StorePassword
	}
	if cs.KeyPassword != "" {
		p["ssl.key.password"] = cs.KeyPassword
	}
	return p
}
