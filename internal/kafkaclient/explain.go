package kafkaclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Explain turns a failure to connect to or authenticate with cluster alias
// into one error that says what went wrong in the operator's terms and which
// setting fixes it. The cause stays wrapped (errors.Is/As still see it).
// Errors it does not recognise come back as they are.
func Explain(alias string, err error) error {
	if err == nil {
		return nil
	}
	if hint := hint(alias, err); hint != "" {
		return &explained{msg: hint, err: err}
	}
	return err
}

type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg + " (" + e.err.Error() + ")" }
func (e *explained) Unwrap() error { return e.err }

func hint(alias string, err error) string {
	var (
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		recHeader tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("cluster %q: the broker's certificate is signed by an authority Strait does not trust: set %s.ssl.truststore.location (or %s.ssl.truststore.certificates) to the CA that signed the brokers' certificates",
			alias, alias, alias)
	case errors.As(err, &hostErr):
		return fmt.Sprintf("cluster %q: the broker's certificate does not name the host Strait connected to, %s: use a host name the certificate names (%s) in %s.bootstrap.servers and the brokers' advertised.listeners, or fix the certificate (an empty %s.ssl.endpoint.identification.algorithm turns the check off)",
			alias, hostErr.Host, certNames(hostErr.Certificate), alias, alias)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("cluster %q: the broker's certificate (%s) has expired or is not valid yet: renew the brokers' certificate, or check this machine's clock",
			alias, invalid.Cert.Subject)
	case errors.As(err, &invalid):
		return fmt.Sprintf("cluster %q: the broker's certificate is not valid (%s): fix the brokers' certificate", alias, invalid.Error())
	case remoteAlert(err, "bad certificate", "certificate required", "unknown certificate authority", "certificate unknown", "certificate expired", "certificate revoked"):
		return fmt.Sprintf("cluster %q: the broker refused Strait's client certificate: set %s.ssl.keystore.location to a keystore whose certificate the brokers trust, or check that it has not expired",
			alias, alias)
	case remoteAlert(err, "handshake failure", "protocol version not supported", "insufficient security level"):
		return fmt.Sprintf("cluster %q: the broker and Strait share no TLS version or cipher suite: check %s.ssl.enabled.protocols and %s.ssl.cipher.suites",
			alias, alias, alias)
	case errors.As(err, &recHeader):
		return fmt.Sprintf("cluster %q: the broker's listener does not speak TLS: set %s.security.protocol to PLAINTEXT or SASL_PLAINTEXT to match the listener, or use its TLS port",
			alias, alias)
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return fmt.Sprintf("cluster %q: the broker refused Strait's credentials (an unknown user or a wrong password or token): check the user and password in %s.sasl.jaas.config, that the user exists for %s.sasl.mechanism on the brokers, and that it is allowed on this listener",
			alias, alias, alias)
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Sprintf("cluster %q: the broker's listener does not enable %s.sasl.mechanism: use a mechanism its sasl.enabled.mechanisms lists", alias, alias)
	case errors.Is(err, kerr.IllegalSaslState):
		return fmt.Sprintf("cluster %q: the broker's listener does not expect SASL: set %s.security.protocol to PLAINTEXT or SSL to match the listener", alias, alias)
	case isPeerClose(err):
		return fmt.Sprintf("cluster %q: the broker closed the connection at once: if its listener uses TLS or SASL, set %s.security.protocol (SSL, SASL_SSL or SASL_PLAINTEXT) to match it",
			alias, alias)
	}
	return ""
}

// remoteAlert reports whether err is a TLS alert the broker sent that says
// one of what (crypto/tls keeps its alert type unexported: a remote alert
// is a *net.OpError with Op "remote error").
func remoteAlert(err error, what ...string) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	msg := op.Err.Error()
	for _, w := range what {
		if strings.HasSuffix(msg, w) {
			return true
		}
	}
	return false
}

// isPeerClose reports a connection the broker closed before answering,
// which is what a TLS or SASL listener does to a client that speaks
// PLAINTEXT to it.
func isPeerClose(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &op) && op.Op == "read"
}

func certNames(c *x509.Certificate) string {
	if c == nil {
		return "none"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
