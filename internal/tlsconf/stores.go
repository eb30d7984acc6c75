package tlsconf

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"errors"
	"io/fs"
	"strings"
	"unicode/utf16"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
)

// format is what a store file holds, told by its first bytes.
type format int

const (
	formatUnknown format = iota
	formatJKS
	formatJCEKS
	formatPKCS12
	formatPEM
)

func (f format) String() string {
	switch f {
	case formatJKS:
		return "JKS"
	case formatJCEKS:
		return "JCEKS"
	case formatPKCS12:
		return "PKCS12"
	case formatPEM:
		return "PEM"
	}
	return "unknown"
}

var (
	jksMagic   = []byte{0xfe, 0xed, 0xfe, 0xed}
	jceksMagic = []byte{0xce, 0xce, 0xce, 0xce}
)

// sniff tells a store's format by its content, as the JDK's
// keystore.type.compat does for JKS and PKCS12.
func sniff(data []byte) format {
	switch {
	case bytes.HasPrefix(data, jksMagic):
		return formatJKS
	case bytes.HasPrefix(data, jceksMagic):
		return formatJCEKS
	case len(data) > 0 && data[0] == 0x30: // ASN.1 SEQUENCE: a PKCS#12 PFX
		return formatPKCS12
	case bytes.Contains(data, []byte("-----BEGIN")):
		return formatPEM
	}
	return formatUnknown
}

// binaryType reports whether a store type names a format read by content
// (JKS or PKCS12, in any case as KeyStore.getInstance takes them).
func binaryType(typ string) bool {
	return strings.EqualFold(typ, "JKS") || strings.EqualFold(typ, "PKCS12")
}

// typeHint explains a refused store type: Kafka compares "PEM" exactly;
// other JDK types need converting.
func typeHint(typ, file string) string {
	if strings.EqualFold(typ, "PEM") {
		return "Kafka compares the type PEM case-sensitively, so write PEM"
	}
	if file == "" {
		file = "<store>"
	}
	return "Strait reads JKS, PKCS12 and PEM stores; convert it with keytool -importkeystore -srckeystore " +
		file + " -srcstoretype " + typ + " -destkeystore " + file + ".p12 -deststoretype PKCS12 and use the PKCS12 file"
}

// readReason is why a file could not be read, without repeating its path.
func readReason(err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "the file does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// jksWhitener is the constant the JDK mixes into a JKS store's digest.
var jksWhitener = []byte("Mighty Aphrodite")

// jksIntact reports whether password opens a JKS store: the digest at the
// end of the file is SHA-1 over the password as Java chars (big-endian
// UTF-16), the whitener and the rest of the file.
func jksIntact(data []byte, password string) bool {
	n := len(data) - sha1.Size
	if n < 0 {
		return false
	}
	h := sha1.New()
	for _, u := range utf16.Encode([]rune(password)) {
		h.Write([]byte{byte(u >> 8), byte(u)})
	}
	h.Write(jksWhitener)
	h.Write(data[:n])
	return subtle.ConstantTimeCompare(h.Sum(nil), data[n:]) == 1
}

// jksLoad parses a JKS store without checking its integrity (the caller
// checks the password with jksIntact first, or has none, as Java allows for
// truststores): it re-signs the data with the empty password, the only way
// keystore-go loads a store. Aliases come back in alphabetical order.
func jksLoad(data []byte) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases(), keystore.WithCaseExactAliases())
	n := len(data) - sha1.Size
	if n < 0 {
		return ks, errors.New("truncated")
	}
	signed := make([]byte, len(data))
	copy(signed, data)
	h := sha1.New()
	h.Write(jksWhitener)
	h.Write(data[:n])
	copy(signed[n:], h.Sum(nil))
	if err := ks.Load(bytes.NewReader(signed), nil); err != nil {
		return ks, err
	}
	return ks, nil
}

// latin1 returns password as keystore-go hashes key passwords (one byte per
// character), and false when a character does not fit in one byte, where
// keystore-go would differ from Java.
func latin1(password string) ([]byte, bool) {
	out := make([]byte, 0, len(password))
	for _, r := range password {
		if r > 0xff {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}
