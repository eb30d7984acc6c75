package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"github.com/youmark/pkcs8"
)

// pemPattern is Kafka's PemParser pattern for entries named name
// (DefaultSslEngineFactory.PemParser): any text around the entries, any
// BEGIN line that mentions the name, optional RFC 1421 header lines, and
// base64 with any whitespace, so that one-line values work. Java's "." is
// [^\r\n] here; Go's regexp picks the same leftmost-first match as Java's.
func pemPattern(name string) *regexp.Regexp {
	n := strings.ReplaceAll(name, " ", `\s+`)
	beginEnd := `-+%s\s*[^\r\n]*%s[^-]*-+\s+`
	headers := `(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*`
	return regexp.MustCompile(fmt.Sprintf(beginEnd, "BEGIN", n) + headers + `([a-zA-Z0-9/+=\s]*)` + fmt.Sprintf(beginEnd, "END", n))
}

var (
	certPattern = pemPattern("CERTIFICATE")
	keyPattern  = pemPattern("PRIVATE KEY")
	// certMarker finds every BEGIN line of a certificate, to tell how many
	// certificates Kafka's pattern passed over.
	certMarker = regexp.MustCompile(`-+BEGIN[^-\r\n]*CERTIFICATE[^-]*-+`)
)

// pemCertificates returns the certificates Kafka's pattern finds in text,
// how many more BEGIN CERTIFICATE lines the text has (Kafka's greedy
// pattern reads only the last certificate of several on one line, as a
// value continued with a bare backslash gives), and false on bad base64.
func pemCertificates(text string) (ders [][]byte, passed int, ok bool) {
	ders, ok = pemEntries(certPattern, text)
	return ders, len(certMarker.FindAllStringIndex(text, -1)) - len(ders), ok
}

// pemEntries returns the DER of every entry the pattern finds in text, and
// false when one is not valid base64.
func pemEntries(p *regexp.Regexp, text string) ([][]byte, bool) {
	var out [][]byte
	for _, m := range p.FindAllStringSubmatch(text+"\n", -1) {
		b64 := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
				return -1
			}
			return r
		}, m[1])
		// Java's basic decoder takes the padding as optional.
		der, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
		if err != nil {
			return nil, false
		}
		out = append(out, der)
	}
	return out, true
}

// keyFault is why a PEM private key cannot be used.
type keyFault int

const (
	keyOK                keyFault = iota
	keyNeedsPassword              // encrypted PKCS#8, but ssl.key.password is unset
	keyNotEncrypted               // plain PKCS#8, but ssl.key.password is set
	keyNotPKCS8                   // PKCS#1 (RSA) or SEC1 (EC) instead of PKCS#8
	keyWrongPassword              // ssl.key.password does not decrypt it
	keyUnsupportedScheme          // encrypted with something other than PBES2
	keyUnsupportedType            // DSA, X25519 or another key Go's TLS cannot sign with
	keyMalformed                  // not a key at all
)

// encryptedKeyInfo is PKCS#8's EncryptedPrivateKeyInfo.
type encryptedKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

var oidPBES2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}

// encryptedPKCS8 reports whether der is an EncryptedPrivateKeyInfo and
// whether its scheme is PBES2.
func encryptedPKCS8(der []byte) (encrypted, pbes2 bool) {
	var info encryptedKeyInfo
	rest, err := asn1.Unmarshal(der, &info)
	if err != nil || len(rest) > 0 {
		return false, false
	}
	return true, info.Algorithm.Algorithm.Equal(oidPBES2)
}

// legacyKey reports whether der is a PKCS#1 RSA or SEC1 EC private key,
// which Kafka's PKCS#8 reader does not take.
func legacyKey(der []byte) bool {
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParseECPrivateKey(der)
	return err == nil
}

// parseKey reads a PEM key's DER as Kafka does: encrypted PKCS#8 when the
// key password is set, plain PKCS#8 when it is not.
func parseKey(der []byte, password string, hasPassword bool) (crypto.Signer, keyFault) {
	encrypted, pbes2 := encryptedPKCS8(der)
	var key any
	switch {
	case !hasPassword:
		k, err := x509.ParsePKCS8PrivateKey(der)
		switch {
		case err == nil:
			key = k
		case encrypted:
			return nil, keyNeedsPassword
		case legacyKey(der):
			return nil, keyNotPKCS8
		case strings.Contains(err.Error(), "unknown algorithm"):
			return nil, keyUnsupportedType
		default:
			return nil, keyMalformed
		}
	case !encrypted:
		switch _, err := x509.ParsePKCS8PrivateKey(der); {
		case err == nil:
			return nil, keyNotEncrypted
		case legacyKey(der):
			return nil, keyNotPKCS8
		default:
			return nil, keyMalformed
		}
	case !pbes2:
		return nil, keyUnsupportedScheme
	default:
		k, err := pkcs8.ParsePKCS8PrivateKey(der, []byte(password))
		switch {
		case err == nil:
			key = k
		case strings.Contains(err.Error(), "unsupported"):
			return nil, keyUnsupportedScheme
		default:
			return nil, keyWrongPassword
		}
	}
	return signer(key)
}

// signer returns key as a signer Go's TLS client can use.
func signer(key any) (crypto.Signer, keyFault) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k, keyOK
	case *ecdsa.PrivateKey:
		return k, keyOK
	case ed25519.PrivateKey:
		return k, keyOK
	}
	return nil, keyUnsupportedType
}
