package config

import (
	"strings"
)

// Node settings are Strait's own keys for the process as a whole (its API
// and metrics), read at the top level only.
const (
	keyAPIListen       = "strait.api.listen"
	keyAPIToken        = "strait.api.token"
	keyAPITLSCert      = "strait.api.tls.cert.file"
	keyAPITLSKey       = "strait.api.tls.key.file"
	keyPartitionLabels = "strait.metrics.partition.labels"
)

var nodeKeys = set([]string{keyAPIListen, keyAPIToken, keyAPITLSCert, keyAPITLSKey, keyPartitionLabels})

// DefaultAPIListen is where the API listens unless strait.api.listen says
// otherwise: loopback, on the port MM2 users curl.
const DefaultAPIListen = "127.0.0.1:8083"

// Node is the process-wide configuration.
type Node struct {
	// APIListen is strait.api.listen: the API's host:port, or empty for no
	// API. APIListenSet says the file set it (an address in use is then an
	// error; the default only a warning).
	APIListen    string
	APIListenSet bool
	// APIToken is strait.api.token: the bearer token every API request
	// but the health probes must carry; empty asks for none.
	APIToken Secret
	// APITLSCertFile and APITLSKeyFile are PEM files the API serves TLS
	// with (strait.api.tls.cert.file, strait.api.tls.key.file).
	APITLSCertFile, APITLSKeyFile string
	// MetricsPartitionLabels is strait.metrics.partition.labels: Strait's
	// per-topic series get a partition label.
	MetricsPartitionLabels bool
}

// readNode reads the node settings from the top level.
func (l *loader) readNode() {
	n := Node{APIListen: DefaultAPIListen}
	if e := l.raw[keyAPIListen]; e != nil {
		n.APIListen, n.APIListenSet = strings.TrimSpace(e.trimmed()), true
	}
	if e := l.raw[keyAPIToken]; e != nil {
		n.APIToken = NewSecret(strings.TrimSpace(e.value))
	}
	if e := l.raw[keyAPITLSCert]; e != nil {
		n.APITLSCertFile = e.trimmed()
	}
	if e := l.raw[keyAPITLSKey]; e != nil {
		n.APITLSKeyFile = e.trimmed()
	}
	if e := l.raw[keyPartitionLabels]; e != nil {
		v, ok := parseBool(e.trimmed())
		if !ok {
			l.rep.errorf(e.origin(), "%s must be true or false, not %q", keyPartitionLabels, e.trimmed())
		}
		n.MetricsPartitionLabels = v
	}
	if (n.APITLSCertFile == "") != (n.APITLSKeyFile == "") {
		k := keyAPITLSKey
		if n.APITLSCertFile == "" {
			k = keyAPITLSCert
		}
		l.rep.errorf(Origin{Key: k}, "%s and %s go together: set %s too, or neither for plain HTTP", keyAPITLSCert, keyAPITLSKey, k)
	}
	l.cfg.Node = n // checkFiles checks the TLS files exist
}
