package tlsconf

import (
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strait/internal/config"
	"strait/internal/kafkatest/certs"
)

// bed is a test bed: a CA that signs the brokers and clients, another CA
// nobody trusts, a client certificate and files under a temporary directory.
type bed struct {
	t      *testing.T
	dir    string
	ca     *certs.Authority
	other  *certs.Authority
	client *certs.Leaf
}

func newBed(t *testing.T) *bed {
	t.Helper()
	ca, err := certs.NewAuthority("bed CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewAuthority("untrusted CA")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(certs.LeafOptions{CommonName: "strait-client"})
	if err != nil {
		t.Fatal(err)
	}
	return &bed{t: t, dir: t.TempDir(), ca: ca, other: other, client: client}
}

// file writes data under the bed's directory and returns its path.
func (b *bed) file(name string, data []byte) string {
	b.t.Helper()
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// must takes a call's value and error and returns a check that fails the
// test on the error: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// client is cluster B's client with the given key/value pairs, each
// written at cluster scope on its own line.
func client(kv ...string) config.Client {
	c := config.Client{Cluster: "B"}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i]
		c.Props = append(c.Props, config.ClientProp{
			Key:    k,
			Value:  config.NewSecret(kv[i+1]),
			Secret: strings.HasSuffix(k, "password") || strings.HasSuffix(k, "keystore.key"),
			Origin: config.Origin{Key: "B." + k, Line: i/2 + 1},
		})
	}
	return c
}

// problems splits Build's joined error into its config.Problem values.
func problems(t *testing.T, err error) []config.Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []config.Problem
	for _, e := range errs {
		var p config.Problem
		if !errors.As(e, &p) {
			t.Fatalf("error %v (%T) is not a config.Problem", e, e)
		}
		out = append(out, p)
	}
	return out
}

// messages joins warning texts for matching.
func messages(ws []config.Warning) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return strings.Join(s, "\n")
}

// leafOf returns the client certificate of a built config, or nil.
func leafOf(t *testing.T, c config.Client, o Options) *x509.Certificate {
	t.Helper()
	cfg, ws, err := Build(c, o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(ws) > 0 {
		t.Fatalf("unexpected warnings:\n%s", messages(ws))
	}
	if len(cfg.Certificates) == 0 {
		return nil
	}
	return cfg.Certificates[0].Leaf
}

// at is an Options whose clock says t.
func at(t time.Time) Options { return Options{Now: func() time.Time { return t }} }

// pkcs8DER is the leaf's private key as unencrypted PKCS#8 DER.
func pkcs8DER(l *certs.Leaf) ([]byte, error) { return x509.MarshalPKCS8PrivateKey(l.Key) }
