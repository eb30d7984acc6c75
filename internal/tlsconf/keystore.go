package tlsconf

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strconv"
	"strings"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"strait/internal/config"
)

// keystore reads the client certificate (for mutual TLS), following the
// rules of Kafka's DefaultSslEngineFactory.createKeystore. It returns false
// when there is none or it cannot be used (with problems recorded).
func (b *builder) keystore() (tls.Certificate, bool) {
	typ := b.value("ssl.keystore.type", "JKS")
	typD := b.shown("ssl.keystore.type", typ)
	path, locP, hasLoc := b.lookup("ssl.keystore.location")
	loc := b.shown("ssl.keystore.location", path) // for messages
	_, pwP, hasPw := b.lookup("ssl.keystore.password")
	key, keyP, hasKey := b.lookup("ssl.keystore.key")
	chain, chainP, hasChain := b.lookup("ssl.keystore.certificate.chain")
	typeRef := b.ref("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.key")
	if b.blank("ssl.keystore.location", "ssl.keystore.key", "ssl.keystore.certificate.chain") {
		return tls.Certificate{}, false
	}
	switch {
	case hasKey:
		ok := true
		if typ != "PEM" {
			b.problemf(keyP, "ssl.keystore.key (an inline PEM key) needs ssl.keystore.type=PEM, but the type is %s; set %s=PEM", typD, typeRef)
			ok = false
		}
		if !hasChain {
			b.problemf(keyP, "ssl.keystore.key is set but ssl.keystore.certificate.chain is not: Kafka needs the client's certificate chain with its key; set %s to the PEM chain",
				b.ref("ssl.keystore.certificate.chain", "ssl.keystore.key"))
			ok = false
		}
		if hasLoc {
			b.problemf(locP, "ssl.keystore.location and ssl.keystore.key are both set: Kafka refuses a keystore file and an inline key together; remove %s or %s",
				b.ref("ssl.keystore.location"), b.ref("ssl.keystore.key"))
			ok = false
		}
		if hasPw {
			b.problemf(pwP, "ssl.keystore.password cannot be used with an inline PEM key (Kafka takes only ssl.key.password, the password of an encrypted key); remove %s", b.ref("ssl.keystore.password"))
			ok = false
		}
		if !ok {
			return tls.Certificate{}, false
		}
		return b.pemKeystore(pemSource{text: key, desc: "ssl.keystore.key", prop: keyP}, pemSource{text: chain, desc: "ssl.keystore.certificate.chain", prop: chainP})
	case hasChain:
		b.problemf(chainP, "ssl.keystore.certificate.chain is set but ssl.keystore.key is not: set %s to the client's PEM private key, or remove %s",
			b.ref("ssl.keystore.key", "ssl.keystore.certificate.chain"), b.ref("ssl.keystore.certificate.chain"))
		return tls.Certificate{}, false
	case typ == "PEM" && hasLoc:
		if hasPw {
			b.problemf(pwP, "ssl.keystore.password cannot be used with a PEM keystore (Kafka takes only ssl.key.password, the password of an encrypted key); remove %s", b.ref("ssl.keystore.password"))
			return tls.Certificate{}, false
		}
		data, ok := b.read(locP, "keystore", path)
		if !ok {
			return tls.Certificate{}, false
		}
		if f := sniff(data); f != formatPEM {
			b.problemf(locP, "the keystore %s is not PEM but ssl.keystore.type is PEM%s; set %s to the file's type", loc, seemsHint(f), typeRef)
			return tls.Certificate{}, false
		}
		desc := "the keystore " + loc + " (PEM)"
		return b.pemKeystore(pemSource{text: string(data), desc: desc, prop: locP}, pemSource{text: string(data), desc: desc, prop: locP})
	case !hasLoc && hasPw:
		b.problemf(pwP, "ssl.keystore.password is set but ssl.keystore.location is not: set %s to the keystore file, or remove %s",
			b.ref("ssl.keystore.location", "ssl.keystore.password"), b.ref("ssl.keystore.password"))
		return tls.Certificate{}, false
	case hasLoc && !hasPw:
		b.problemf(locP, "the keystore %s needs its password, but ssl.keystore.password is not set; set %s", loc, b.ref("ssl.keystore.password", "ssl.keystore.location"))
		return tls.Certificate{}, false
	case !hasLoc:
		return tls.Certificate{}, false // no client certificate: fine unless the broker requires one
	}
	if !binaryType(typ) {
		_, typP, _ := b.lookup("ssl.keystore.type")
		b.problemf(typP, "ssl.keystore.type=%s is not supported: %s; then set %s", typD, typeHint(typD, loc), typeRef)
		return tls.Certificate{}, false
	}
	data, ok := b.read(locP, "keystore", path)
	if !ok {
		return tls.Certificate{}, false
	}
	switch f := sniff(data); f {
	case formatJKS:
		return b.jksKeystore(locP, loc, data)
	case formatPKCS12:
		return b.pkcs12Keystore(locP, loc, data)
	case formatJCEKS:
		b.problemf(locP, "the keystore %s is a JCEKS store, which Strait cannot read: %s; then set %s", loc, typeHint("JCEKS", loc), b.ref("ssl.keystore.location"))
	case formatPEM:
		b.problemf(locP, "the keystore %s is a PEM file but ssl.keystore.type is %s; set %s=PEM", loc, typD, typeRef)
	default:
		b.problemf(locP, "the keystore %s is neither a JKS nor a PKCS12 keystore; check %s and %s", loc, b.ref("ssl.keystore.location"), typeRef)
	}
	return tls.Certificate{}, false
}

// seemsHint names the binary format a file that should be PEM seems to be.
func seemsHint(f format) string {
	switch f {
	case formatJKS, formatPKCS12, formatJCEKS:
		return " (the file looks like " + f.String() + ")"
	}
	return ""
}

// read reads a store file named by p; what is "keystore" or "truststore".
func (b *builder) read(p config.ClientProp, what, path string) ([]byte, bool) {
	data, err := b.readFile(path)
	if err != nil {
		b.problemf(p, "cannot read the %s file %s: %s; check %s", what, b.shown(p.Key, path), readReason(err), b.ref(p.Key))
		return nil, false
	}
	if len(data) == 0 {
		b.problemf(p, "the %s file %s is empty; check %s", what, b.shown(p.Key, path), b.ref(p.Key))
		return nil, false
	}
	return data, true
}

// keyPassword returns the password of a JKS key entry, the ssl.* key it
// comes from, and its property: ssl.key.password, else the store password
// (Kafka's FileBasedStore.keyPassword).
func (b *builder) keyPassword() (string, string, config.ClientProp) {
	if v, p, ok := b.lookup("ssl.key.password"); ok {
		return v, "ssl.key.password", p
	}
	v, p, _ := b.lookup("ssl.keystore.password")
	return v, "ssl.keystore.password", p
}

// jksKeystore reads the client key and chain from a JKS keystore.
func (b *builder) jksKeystore(locP config.ClientProp, loc string, data []byte) (tls.Certificate, bool) {
	pw, pwP, _ := b.lookup("ssl.keystore.password")
	ks, err := jksLoad(data)
	if err != nil {
		b.problemf(locP, "the keystore %s (JKS) is damaged and cannot be parsed; check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	}
	if !jksIntact(data, pw) {
		b.problemf(pwP, "ssl.keystore.password does not open the keystore %s (JKS): the password is wrong (or the file was altered)%s; check %s", loc, b.emptyNote("ssl.keystore.password"), b.ref("ssl.keystore.password"))
		return tls.Certificate{}, false
	}
	var aliases []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			aliases = append(aliases, a)
		}
	}
	if len(aliases) == 0 {
		b.problemf(locP, "the keystore %s (JKS) holds no private key entry, only trusted certificates: a keystore needs the client's key and certificate (is this the truststore?); check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	}
	keyPw, keyKey, keyPwP := b.keyPassword()
	pwBytes, ok := latin1(keyPw)
	if !ok {
		b.problemf(keyPwP, "%s has characters beyond Latin-1, which Strait's JKS reader cannot use for key entries; convert %s to PKCS12 with keytool -importkeystore -deststoretype PKCS12", keyKey, loc)
		return tls.Certificate{}, false
	}
	// Java's SunX509 key manager opens every key entry with the one key
	// password when it starts; an entry it cannot open fails the client.
	var chosen *tls.Certificate
	for _, a := range aliases {
		e, err := ks.GetPrivateKeyEntry(a, pwBytes)
		if err != nil {
			if keyKey == "ssl.key.password" {
				b.problemf(keyPwP, "ssl.key.password does not open the key %q in the keystore %s (JKS): the password is wrong%s; check %s", a, loc, b.emptyNote("ssl.key.password"), b.ref("ssl.key.password"))
			} else {
				b.problemf(pwP, "the key %q in the keystore %s (JKS) has its own password, not ssl.keystore.password (Java's key manager opens every key with one password); set %s to the key's password",
					a, loc, b.ref("ssl.key.password", "ssl.keystore.password", "ssl.keystore.location"))
			}
			return tls.Certificate{}, false
		}
		if chosen != nil {
			continue
		}
		k, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			b.problemf(locP, "the key %q in the keystore %s (JKS) is of a type Strait cannot read; check %s", a, loc, b.ref("ssl.keystore.location"))
			return tls.Certificate{}, false
		}
		signer, fault := signer(k)
		if fault != keyOK {
			b.problemf(locP, "the key %q in the keystore %s (JKS) is of a type Go's TLS cannot sign with (it takes RSA, ECDSA and Ed25519); check %s", a, loc, b.ref("ssl.keystore.location"))
			return tls.Certificate{}, false
		}
		var ders [][]byte
		for _, c := range e.CertificateChain {
			ders = append(ders, c.Content)
		}
		desc := "the key " + strconv.Quote(a) + " of the keystore " + loc + " (JKS)"
		cert, ok := b.certificate(locP, desc, ders, signer)
		if !ok {
			return tls.Certificate{}, false
		}
		chosen = &cert
	}
	if len(aliases) > 1 {
		b.warnf(locP, "the keystore %s (JKS) holds %d private keys (%s); Strait uses the first, %q, for every broker, where Java's key manager may pick another by the broker's accepted issuers; keep one key in the keystore to be sure",
			loc, len(aliases), strings.Join(aliases, ", "), aliases[0])
	}
	return *chosen, true
}

// pkcs12Keystore reads the client key and chain from a PKCS12 keystore.
func (b *builder) pkcs12Keystore(locP config.ClientProp, loc string, data []byte) (tls.Certificate, bool) {
	pw, pwP, _ := b.lookup("ssl.keystore.password")
	key, leaf, cas, err := pkcs12.DecodeChain(data, pw)
	var notImpl pkcs12.NotImplementedError
	switch {
	case err == nil:
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		b.problemf(pwP, "ssl.keystore.password does not open the keystore %s (PKCS12): the password is wrong%s; check %s", loc, b.emptyNote("ssl.keystore.password"), b.ref("ssl.keystore.password"))
		return tls.Certificate{}, false
	case errors.Is(err, pkcs12.ErrDecryption):
		b.problemf(pwP, "ssl.keystore.password does not decrypt the contents of the keystore %s (PKCS12): the password is wrong%s; check %s", loc, b.emptyNote("ssl.keystore.password"), b.ref("ssl.keystore.password"))
		return tls.Certificate{}, false
	case strings.Contains(err.Error(), "private key missing"):
		b.problemf(locP, "the keystore %s (PKCS12) holds no private key, only certificates: a keystore needs the client's key and certificate (is this the truststore?); check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	case strings.Contains(err.Error(), "exactly one key bag"):
		b.problemf(locP, "the keystore %s (PKCS12) holds several private keys, and Strait reads PKCS12 keystores with one key only; export the client's key alone (keytool -importkeystore -srcalias <alias> -deststoretype PKCS12) and set %s to the new file", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	case strings.Contains(err.Error(), "certificate missing"):
		b.problemf(locP, "the keystore %s (PKCS12) holds a private key without its certificate; rebuild it with the client's certificate chain and check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	case errors.As(err, &notImpl):
		b.problemf(locP, "the keystore %s (PKCS12) uses a PKCS12 feature Strait cannot read (%s); re-export it with openssl pkcs12 -export or keytool -importkeystore -deststoretype PKCS12 and check %s", loc, string(notImpl), b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	default:
		b.problemf(locP, "the keystore %s is not a valid PKCS12 keystore (damaged, or of another format); check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	}
	if keyPw, keyPwP, ok := b.lookup("ssl.key.password"); ok && keyPw != pw {
		b.problemf(keyPwP, "ssl.key.password does not open the key of the keystore %s (PKCS12): a PKCS12 key has the store's password (keytool ignores -keypass for PKCS12), so Java fails with it too; remove %s or set it to the keystore password", loc, b.ref("ssl.key.password"))
		return tls.Certificate{}, false
	}
	s, fault := signer(key)
	if fault != keyOK {
		b.problemf(locP, "the key of the keystore %s (PKCS12) is of a type Go's TLS cannot sign with (it takes RSA, ECDSA and Ed25519); check %s", loc, b.ref("ssl.keystore.location"))
		return tls.Certificate{}, false
	}
	ders := [][]byte{leaf.Raw}
	for _, c := range cas {
		ders = append(ders, c.Raw)
	}
	return b.certificate(locP, "the keystore "+loc+" (PKCS12)", ders, s)
}

// pemSource is PEM text with how to name it and the key it came from.
type pemSource struct {
	text string
	desc string // "ssl.keystore.key" or "the keystore /path (PEM)"
	prop config.ClientProp
}

// pemKeystore reads a PEM key and certificate chain as Kafka's PemStore
// does: one PKCS#8 key, encrypted exactly when ssl.key.password is set.
func (b *builder) pemKeystore(keySrc, chainSrc pemSource) (tls.Certificate, bool) {
	keyPw, keyPwP, hasKeyPw := b.lookup("ssl.key.password")
	keyPwRef := b.ref("ssl.key.password", keySrc.prop.Key)
	keys, ok := pemEntries(keyPattern, keySrc.text)
	switch {
	case !ok:
		b.problemf(keySrc.prop, "the private key in %s is not valid base64 PEM; check %s", keySrc.desc, b.ref(keySrc.prop.Key))
		return tls.Certificate{}, false
	case len(keys) == 0:
		b.problemf(keySrc.prop, "%s holds no PEM private key (a -----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY----- block); check %s", keySrc.desc, b.ref(keySrc.prop.Key))
		return tls.Certificate{}, false
	case len(keys) > 1:
		b.problemf(keySrc.prop, "%s holds %d private keys, and Kafka takes exactly one; keep only the client's key in %s", keySrc.desc, len(keys), b.ref(keySrc.prop.Key))
		return tls.Certificate{}, false
	}
	key, fault := parseKey(keys[0], keyPw, hasKeyPw)
	switch fault {
	case keyNeedsPassword:
		b.problemf(keySrc.prop, "the private key in %s is encrypted, but ssl.key.password is not set; set %s to the key's password", keySrc.desc, keyPwRef)
	case keyNotEncrypted:
		b.problemf(keyPwP, "ssl.key.password is set, but the private key in %s is not encrypted (Kafka reads the key as encrypted PKCS#8 exactly when ssl.key.password is set)%s; remove %s, or encrypt the key with openssl pkcs8 -topk8 -v2 aes-256-cbc", keySrc.desc, b.emptyNote("ssl.key.password"), keyPwRef)
	case keyNotPKCS8:
		b.problemf(keySrc.prop, "the private key in %s is in PKCS#1 or SEC1 form (BEGIN RSA/EC PRIVATE KEY), and Kafka reads only PKCS#8; convert it with openssl pkcs8 -topk8 (add -nocrypt for no password) and update %s", keySrc.desc, b.ref(keySrc.prop.Key))
	case keyWrongPassword:
		b.problemf(keyPwP, "ssl.key.password does not decrypt the private key in %s: the password is wrong; check %s", keySrc.desc, keyPwRef)
	case keyUnsupportedScheme:
		b.problemf(keySrc.prop, "the private key in %s is encrypted with a scheme Strait cannot read (it reads PKCS#8 PBES2, e.g. AES-256-CBC with PBKDF2); re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc and update %s", keySrc.desc, b.ref(keySrc.prop.Key))
	case keyUnsupportedType:
		b.problemf(keySrc.prop, "the private key in %s is of a type Go's TLS cannot sign with (it takes RSA, ECDSA and Ed25519); check %s", keySrc.desc, b.ref(keySrc.prop.Key))
	case keyMalformed:
		b.problemf(keySrc.prop, "the private key in %s is not a PKCS#8 private key (OpenSSL's legacy encrypted PEM with Proc-Type headers is not PKCS#8: convert it with openssl pkcs8 -topk8); check %s", keySrc.desc, b.ref(keySrc.prop.Key))
	}
	if fault != keyOK {
		return tls.Certificate{}, false
	}
	ders, passed, ok := pemCertificates(chainSrc.text)
	switch {
	case !ok:
		b.problemf(chainSrc.prop, "a certificate in %s is not valid base64 PEM; check %s", chainSrc.desc, b.ref(chainSrc.prop.Key))
		return tls.Certificate{}, false
	case len(ders) == 0:
		b.problemf(chainSrc.prop, "%s holds no PEM certificate (-----BEGIN CERTIFICATE-----); put the client's certificate chain in %s", chainSrc.desc, b.ref(chainSrc.prop.Key))
		return tls.Certificate{}, false
	}
	if passed > 0 {
		// Kafka reads the last certificate of a one-line chain only.
		last, err := x509.ParseCertificate(ders[len(ders)-1])
		if err == nil && !publicKeyOf(key, last) {
			b.problemf(chainSrc.prop, "%s holds %d certificates on one line, and Kafka's PEM parser then reads only the last (subject %q), which is not the client's: MirrorMaker 2 fails with this value too; end each PEM line of %s with \\n\\ in the properties file, or use a PEM file",
				chainSrc.desc, len(ders)+passed, last.Subject.String(), b.ref(chainSrc.prop.Key))
			return tls.Certificate{}, false
		}
		b.warnf(chainSrc.prop, "%s holds %d certificates on one line, and Kafka's PEM parser then reads only the last, so the client sends its certificate without the rest of the chain, as MirrorMaker 2 did; end each PEM line of %s with \\n\\ in the properties file to send the whole chain",
			chainSrc.desc, len(ders)+passed, b.ref(chainSrc.prop.Key))
	}
	return b.certificate(chainSrc.prop, chainSrc.desc, ders, key)
}

// publicKeyOf reports whether cert holds key's public key.
func publicKeyOf(key crypto.Signer, cert *x509.Certificate) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}

// certificate checks a client chain and key and makes the tls.Certificate:
// every certificate parses, the first is the key's, and it is valid now.
func (b *builder) certificate(p config.ClientProp, desc string, ders [][]byte, key crypto.Signer) (tls.Certificate, bool) {
	if len(ders) == 0 {
		b.problemf(p, "%s has no certificate; rebuild the keystore with the client's certificate chain and check %s", desc, b.ref(p.Key))
		return tls.Certificate{}, false
	}
	var chain []*x509.Certificate
	for i, der := range ders {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			b.problemf(p, "certificate %d of %s cannot be parsed (%s); check %s", i+1, desc, certReason(err), b.ref(p.Key))
			return tls.Certificate{}, false
		}
		chain = append(chain, c)
	}
	leaf := chain[0]
	if !publicKeyOf(key, leaf) {
		b.problemf(p, "the private key of %s does not belong to its first certificate (subject %q); the chain must start with the client's own certificate; check %s", desc, leaf.Subject.String(), b.ref(p.Key))
		return tls.Certificate{}, false
	}
	now := b.now()
	switch {
	case now.After(leaf.NotAfter):
		b.problemf(p, "the client certificate of %s (subject %q, named by %s) expired at %s; renew it and update %s", desc, leaf.Subject.String(), p.Key, leaf.NotAfter.UTC().Format(time.RFC3339), b.ref(p.Key))
		return tls.Certificate{}, false
	case now.Before(leaf.NotBefore):
		b.problemf(p, "the client certificate of %s (subject %q, named by %s) is not valid before %s; check this host's clock or renew it with a validity that has begun, and update %s", desc, leaf.Subject.String(), p.Key, leaf.NotBefore.UTC().Format(time.RFC3339), b.ref(p.Key))
		return tls.Certificate{}, false
	}
	return tls.Certificate{Certificate: ders, PrivateKey: key, Leaf: leaf}, true
}

// certReason is a parse error's text: x509's errors name the fault, never
// the bytes.
func certReason(err error) string { return strings.TrimPrefix(err.Error(), "x509: ") }
