//go:build integration

package saslconf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"strait/internal/config"
	"strait/internal/kafkatest"
	"strait/internal/saslconf"
)

var env *kafkatest.Env

// TestMain starts one broker with the security listeners and a GSSAPI listener that trusts
// a real MIT Kerberos KDC (scripts/kdc.sh).
func TestMain(m *testing.M) {
	os.Exit(kafkatest.RunWith(m, kafkatest.Options{Clusters: 1, Security: true, Kerberos: true}, &env))
}

// refusedWithin bounds how long a client takes to give up on a login the KDC refuses.
const refusedWithin = 15 * time.Second

// gssapiClient is cluster A's client settings for the GSSAPI listener, as a Java client
// would write them, logging in as principal with keyTab.
func gssapiClient(serviceName, keyTab, principal string) config.Client {
	jaas := fmt.Sprintf(`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" principal="%s";`, keyTab, principal)
	kv := [][2]string{
		{"sasl.jaas.config", jaas},
		{"sasl.kerberos.service.name", serviceName},
		{"sasl.mechanism", "GSSAPI"},
		{"security.protocol", "SASL_PLAINTEXT"},
	}
	c := config.Client{Cluster: "A"}
	for i, p := range kv {
		c.Props = append(c.Props, config.ClientProp{
			Key: p[0], Value: config.NewSecret(p[1]), Secret: p[0] == "sasl.jaas.config",
			Origin: config.Origin{Key: "A." + p[0], Line: i + 1},
		})
	}
	slices.SortFunc(c.Props, func(a, b config.ClientProp) int { return strings.Compare(a.Key, b.Key) })
	return c
}

// build runs saslconf.Build on c with the test bed's krb5.conf as KRB5_CONFIG (and no
// other variable: no ticket cache of the machine is read).
func build(c config.Client) (sasl.Mechanism, []config.Warning, error) {
	krb := env.Kerberos
	return saslconf.Build(c, saslconf.Options{Getenv: func(k string) string {
		if k == "KRB5_CONFIG" {
			return krb.Krb5Conf
		}
		return ""
	}})
}

// gssapiKgo returns a franz-go client of the GSSAPI listener that authenticates with a
// mechanism of its own, built by saslconf from c; it is closed when the test ends.
func gssapiKgo(t *testing.T, c config.Client, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	mech, warnings, err := build(c)
	if err != nil {
		t.Fatalf("saslconf.Build: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("saslconf.Build warned: %v", warnings)
	}
	a := env.Clusters[0]
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(a.ListenerSeeds(t, kafkatest.ListenerGSSAPI)...),
		kgo.SASL(mech),
		kgo.RetryTimeout(5 * time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatalf("creating a client of the GSSAPI listener: %v", err)
	}
	t.Cleanup(cl.Close) // closes the mechanism too: its Kerberos client's renewal ends
	return cl
}

// TestGSSAPIRoundTrip logs in to the KDC with the client's keytab, as a Java client's
// Krb5LoginModule line says, and creates a topic, produces and fetches a record over the
// GSSAPI listener.
func TestGSSAPIRoundTrip(t *testing.T) {
	krb := env.Kerberos
	c := gssapiClient(krb.ServiceName, krb.ClientKeytab, krb.ClientPrincipal)
	topic := kafkatest.Name(t, "gssapi-")
	value := "over GSSAPI as " + krb.ClientPrincipal

	producer := gssapiKgo(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(producer).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("creating topic %q over GSSAPI: %v", topic, err)
	}
	// The metadata of a new topic may lag its creation by a moment; the producer retries.
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("producing to %q over GSSAPI: %v", topic, err)
	}

	// A second client, with a mechanism (and a KDC login) of its own, fetches it back.
	consumer := gssapiKgo(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fetches := consumer.PollFetches(ctx)
	if err := fetches.Err(); err != nil {
		t.Fatalf("fetching from %q over GSSAPI: %v", topic, err)
	}
	got := fetches.Records()
	if len(got) != 1 || string(got[0].Value) != value {
		t.Fatalf("fetched %d record(s) from %q over GSSAPI, want one with value %q", len(got), topic, value)
	}
}

// TestGSSAPIRefused checks that a login the KDC refuses, or a service it does not know,
// fails with an error that says so, and that a keytab without the principal's key fails
// Build before any connection.
func TestGSSAPIRefused(t *testing.T) {
	krb := env.Kerberos
	dir := t.TempDir()
	// A keytab of a principal the KDC has never heard of.
	ghost := writeKeytab(t, dir, "ghost", krb.Realm, 1)
	// A keytab of the client's principal with a key the KDC does not hold (as after the
	// KDC's key was changed): kdc.sh made the key at random as kvno 2.
	stale := writeKeytab(t, dir, strings.TrimSuffix(krb.ClientPrincipal, "@"+krb.Realm), krb.Realm, 2)

	refused := []struct {
		name, service, keyTab, principal string
		want                             []string // in the error, besides the cluster and the SASL mechanism
	}{
		{name: "principal unknown to the KDC", service: krb.ServiceName, keyTab: ghost, principal: "ghost@" + krb.Realm,
			want: []string{"kerberos login of ghost@" + krb.Realm, "KDC_ERR_C_PRINCIPAL_UNKNOWN"}},
		{name: "stale key in the keytab", service: krb.ServiceName, keyTab: stale, principal: krb.ClientPrincipal,
			want: []string{"kerberos login of " + krb.ClientPrincipal, "KDC_ERR_PREAUTH_FAILED"}},
		{name: "service name the brokers do not use", service: "not-kafka", keyTab: krb.ClientKeytab, principal: krb.ClientPrincipal,
			want: []string{"not-kafka/127.0.0.1", "KDC_ERR_S_PRINCIPAL_UNKNOWN"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			cl := gssapiKgo(t, gssapiClient(tc.service, tc.keyTab, tc.principal))
			ctx, cancel := context.WithTimeout(t.Context(), refusedWithin)
			defer cancel()
			err := cl.Ping(ctx)
			if err == nil {
				t.Fatalf("the broker accepted %s", tc.principal)
			}
			t.Logf("refused: %v", err)
			var login *saslconf.LoginError
			if !errors.As(err, &login) {
				t.Fatalf("want a *saslconf.LoginError, got %T: %v", err, err)
			}
			for _, w := range append([]string{`SASL GSSAPI for cluster "A"`}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	t.Run("ticket for a service principal the broker does not hold", func(t *testing.T) {
		// A client of localhost:<port> asks for kafka/localhost, which the KDC knows and
		// the broker has no key of: the KDC issues the ticket and the broker refuses it.
		var seeds []string
		for _, s := range env.Clusters[0].ListenerSeeds(t, kafkatest.ListenerGSSAPI) {
			seeds = append(seeds, strings.Replace(s, "127.0.0.1:", "localhost:", 1))
		}
		cl := gssapiKgo(t, gssapiClient(krb.ServiceName, krb.ClientKeytab, krb.ClientPrincipal), kgo.SeedBrokers(seeds...))
		ctx, cancel := context.WithTimeout(t.Context(), refusedWithin)
		defer cancel()
		err := cl.Ping(ctx)
		t.Logf("refused: %v", err)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("want SASL_AUTHENTICATION_FAILED from the broker, got %v", err)
		}
	})

	t.Run("keytab of another principal", func(t *testing.T) {
		// The brokers' keytab holds kafka/127.0.0.1's key, not the client's.
		_, _, err := build(gssapiClient(krb.ServiceName, krb.BrokerKeytab, krb.ClientPrincipal))
		want := fmt.Sprintf("keyTab %s has no key for principal %s", krb.BrokerKeytab, krb.ClientPrincipal)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Build: got %v, want an error saying %q", err, want)
		}
	})
}

// writeKeytab writes a keytab with an AES256 key of name@realm, derived from a password
// the KDC never saw, and returns its path.
func writeKeytab(t *testing.T, dir, name, realm string, kvno uint8) string {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(name, realm, "not-the-kdc-key", time.Now(), kvno, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".keytab")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
