package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"time"
)

// identification applies ssl.endpoint.identification.algorithm: https (the
// default) keeps Go's verification with the host name; empty verifies the
// chain against roots in VerifyConnection and skips only the host name.
func (b *builder) identification(cfg *tls.Config, roots *x509.CertPool) {
	p, set := b.props["ssl.endpoint.identification.algorithm"]
	v := strings.TrimSpace(p.Value.Reveal())
	switch {
	case !set || strings.EqualFold(v, "https"):
		return
	case v == "":
		cfg.InsecureSkipVerify = true // only Go's host name check: VerifyConnection verifies the chain
		cfg.VerifyConnection = verifyChain(roots, b.now)
		b.warnf(p, "ssl.endpoint.identification.algorithm is empty, so the brokers' host names are not checked against their certificates (the chain is still verified against the truststore): any certificate the truststore trusts is accepted for any broker; set %s=https to check host names",
			b.ref(p.Key))
	default:
		b.problemf(p, "ssl.endpoint.identification.algorithm=%s is not supported: Strait checks host names as https does, or not at all; set %s=https, or to empty to skip the host name check",
			b.shown(p.Key, v), b.ref(p.Key))
	}
}

// verifyChain verifies the broker's chain against roots (nil: the system
// roots) at now, for server authentication, without a host name. It runs on
// full and resumed handshakes alike.
func verifyChain(roots *x509.CertPool, now func() time.Time) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the broker sent no certificate")
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			CurrentTime:   now(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		if err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
}
