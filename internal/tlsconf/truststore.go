package tlsconf

import (
	"crypto/x509"
	"errors"
	"strings"

	"software.sslmate.com/src/go-pkcs12"

	"strait/internal/config"
)

// truststore reads the trust anchors the broker's chain is verified against,
// following Kafka's DefaultSslEngineFactory.createTruststore. It returns nil
// for the system roots (no truststore set) and when the truststore cannot be
// used (with problems recorded).
func (b *builder) truststore() *x509.CertPool {
	typ := b.value("ssl.truststore.type", "JKS")
	typeRef := b.ref("ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates")
	typD := b.shown("ssl.truststore.type", typ)
	path, locP, hasLoc := b.lookup("ssl.truststore.location")
	loc := b.shown("ssl.truststore.location", path) // for messages
	_, pwP, hasPw := b.lookup("ssl.truststore.password")
	inline, inlineP, hasInline := b.lookup("ssl.truststore.certificates")
	if b.blank("ssl.truststore.location", "ssl.truststore.certificates") {
		return nil
	}
	switch {
	case hasInline:
		ok := true
		if typ != "PEM" {
			b.problemf(inlineP, "ssl.truststore.certificates (inline PEM certificates) needs ssl.truststore.type=PEM, but the type is %s; set %s=PEM", typD, typeRef)
			ok = false
		}
		if hasLoc {
			b.problemf(locP, "ssl.truststore.location and ssl.truststore.certificates are both set: Kafka refuses a truststore file and inline certificates together; remove %s or %s",
				b.ref("ssl.truststore.location"), b.ref("ssl.truststore.certificates"))
			ok = false
		}
		if hasPw {
			b.problemf(pwP, "ssl.truststore.password cannot be used with a PEM truststore; remove %s", b.ref("ssl.truststore.password"))
			ok = false
		}
		if !ok {
			return nil
		}
		return b.pemTruststore(pemSource{text: inline, desc: "ssl.truststore.certificates", prop: inlineP})
	case typ == "PEM" && hasLoc:
		if hasPw {
			b.problemf(pwP, "ssl.truststore.password cannot be used with a PEM truststore; remove %s", b.ref("ssl.truststore.password"))
			return nil
		}
		data, ok := b.read(locP, "truststore", path)
		if !ok {
			return nil
		}
		if f := sniff(data); f != formatPEM {
			b.problemf(locP, "the truststore %s is not PEM but ssl.truststore.type is PEM%s; set %s to the file's type", loc, seemsHint(f), typeRef)
			return nil
		}
		return b.pemTruststore(pemSource{text: string(data), desc: "the truststore " + loc + " (PEM)", prop: locP})
	case !hasLoc && hasPw:
		b.problemf(pwP, "ssl.truststore.password is set but ssl.truststore.location is not: set %s to the truststore file, or remove %s",
			b.ref("ssl.truststore.location", "ssl.truststore.password"), b.ref("ssl.truststore.password"))
		return nil
	case !hasLoc:
		return nil // the system roots, as Java uses the JDK's cacerts
	}
	if !binaryType(typ) {
		_, typP, _ := b.lookup("ssl.truststore.type")
		b.problemf(typP, "ssl.truststore.type=%s is not supported: %s; then set %s", typD, typeHint(typD, loc), typeRef)
		return nil
	}
	data, ok := b.read(locP, "truststore", path)
	if !ok {
		return nil
	}
	var certs []*x509.Certificate
	switch f := sniff(data); f {
	case formatJKS:
		certs, ok = b.jksTruststore(locP, loc, data)
	case formatPKCS12:
		certs, ok = b.pkcs12Truststore(locP, loc, data)
	case formatJCEKS:
		b.problemf(locP, "the truststore %s is a JCEKS store, which Strait cannot read: %s; then set %s", loc, typeHint("JCEKS", loc), b.ref("ssl.truststore.location"))
		return nil
	case formatPEM:
		b.problemf(locP, "the truststore %s is a PEM file but ssl.truststore.type is %s; set %s=PEM", loc, typD, typeRef)
		return nil
	default:
		b.problemf(locP, "the truststore %s is neither a JKS nor a PKCS12 truststore; check %s and %s", loc, b.ref("ssl.truststore.location"), typeRef)
		return nil
	}
	if !ok {
		return nil
	}
	return b.pool(locP, "the truststore "+loc+" ("+sniff(data).String()+")", certs)
}

// pool makes the trust anchors, refusing an empty truststore as Java does
// ("the trustAnchors parameter must be non-empty").
func (b *builder) pool(p config.ClientProp, desc string, certs []*x509.Certificate) *x509.CertPool {
	if len(certs) == 0 {
		b.problemf(p, "%s holds no certificates, so no broker could be trusted (Java refuses an empty truststore too); put the CA certificates that signed the brokers' certificates in %s", desc, b.ref(p.Key))
		return nil
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// pemTruststore reads PEM trust anchors with Kafka's PEM pattern.
func (b *builder) pemTruststore(src pemSource) *x509.CertPool {
	ders, passed, ok := pemCertificates(src.text)
	if !ok {
		b.problemf(src.prop, "a certificate in %s is not valid base64 PEM; check %s", src.desc, b.ref(src.prop.Key))
		return nil
	}
	var certs []*x509.Certificate
	for i, der := range ders {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			b.problemf(src.prop, "certificate %d of %s cannot be parsed (%s); check %s", i+1, src.desc, certReason(err), b.ref(src.prop.Key))
			return nil
		}
		certs = append(certs, c)
	}
	if passed > 0 && len(certs) > 0 {
		b.warnf(src.prop, "%s holds %d certificates on one line, and Kafka's PEM parser then reads only the last (subject %q): MirrorMaker 2 trusted only it, and so does Strait; end each PEM line of %s with \\n\\ in the properties file to trust them all",
			src.desc, len(certs)+passed, certs[len(certs)-1].Subject.String(), b.ref(src.prop.Key))
	}
	return b.pool(src.prop, src.desc, certs)
}

// jksTruststore reads the trust anchors of a JKS store: its trusted
// certificate entries and the first certificate of each key entry, as the
// JDK's trust manager takes them. Without a password the integrity is not
// checked, as Java allows.
func (b *builder) jksTruststore(locP config.ClientProp, loc string, data []byte) ([]*x509.Certificate, bool) {
	pw, pwP, hasPw := b.lookup("ssl.truststore.password")
	ks, err := jksLoad(data)
	if err != nil {
		b.problemf(locP, "the truststore %s (JKS) is damaged and cannot be parsed; check %s", loc, b.ref("ssl.truststore.location"))
		return nil, false
	}
	if hasPw && !jksIntact(data, pw) {
		b.problemf(pwP, "ssl.truststore.password does not open the truststore %s (JKS): the password is wrong (or the file was altered)%s; check %s, or remove it to read the truststore without an integrity check as Java allows", loc, b.emptyNote("ssl.truststore.password"), b.ref("ssl.truststore.password"))
		return nil, false
	}
	var certs []*x509.Certificate
	for _, a := range ks.Aliases() {
		var der []byte
		if e, err := ks.GetTrustedCertificateEntry(a); err == nil {
			der = e.Certificate.Content
		} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(a); err == nil && len(chain) > 0 {
			der = chain[0].Content
		} else {
			continue
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			b.problemf(locP, "the certificate %q of the truststore %s (JKS) cannot be parsed (%s); check %s", a, loc, certReason(err), b.ref("ssl.truststore.location"))
			return nil, false
		}
		certs = append(certs, c)
	}
	return certs, true
}

// pkcs12Truststore reads the trust anchors of a PKCS12 store; without a
// password it tries the empty one.
func (b *builder) pkcs12Truststore(locP config.ClientProp, loc string, data []byte) ([]*x509.Certificate, bool) {
	pw, pwP, hasPw := b.lookup("ssl.truststore.password")
	certs, err := pkcs12.DecodeTrustStore(data, pw)
	if err != nil && hasPw && strings.Contains(err.Error(), "no MAC") {
		// A password-less PKCS12 file: Java reads it whatever the password.
		certs, err = pkcs12.DecodeTrustStore(data, "")
	}
	var notImpl pkcs12.NotImplementedError
	switch {
	case err == nil:
		return certs, true
	case errors.Is(err, pkcs12.ErrIncorrectPassword) && !hasPw:
		b.problemf(locP, "the truststore %s (PKCS12) is protected by a password, and ssl.truststore.password is not set; set %s", loc, b.ref("ssl.truststore.password", "ssl.truststore.location"))
	case errors.Is(err, pkcs12.ErrIncorrectPassword), errors.Is(err, pkcs12.ErrDecryption):
		b.problemf(pwP, "ssl.truststore.password does not open the truststore %s (PKCS12): the password is wrong; check %s", loc, b.ref("ssl.truststore.password"))
	case strings.Contains(err.Error(), "not marked as trusted"):
		b.problemf(locP, "the truststore %s (PKCS12) holds certificates without Java's trusted-certificate attribute, which Java does not trust either (openssl pkcs12 -export writes it only with -jdktrust anyExtendedKeyUsage); rebuild it with keytool -importcert -trustcacerts, or use the CA certificates as PEM with ssl.truststore.type=PEM, and check %s", loc, b.ref("ssl.truststore.location"))
	case strings.Contains(err.Error(), "only certificate bags"), errors.As(err, &notImpl) && strings.Contains(string(notImpl), "authenticated safe"):
		b.problemf(locP, "the truststore %s (PKCS12) holds more than trusted certificates (a private key?); Strait reads PKCS12 truststores of trusted certificates only; export the CA certificates to a truststore of their own and set %s", loc, b.ref("ssl.truststore.location"))
	case errors.As(err, &notImpl):
		b.problemf(locP, "the truststore %s (PKCS12) uses a PKCS12 feature Strait cannot read (%s); rebuild it with keytool -importcert -trustcacerts and check %s", loc, string(notImpl), b.ref("ssl.truststore.location"))
	default:
		b.problemf(locP, "the truststore %s is not a valid PKCS12 truststore (damaged, or of another format); check %s", loc, b.ref("ssl.truststore.location"))
	}
	return nil, false
}
