//go:build integration

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// storePassword is the password of every client store these tests write:
// like the test bed's user passwords, a canary that must appear nowhere.
const storePassword = "canary-store-4d1c9e"

// secureSide is how Strait connects to one cluster of the test bed: the
// listener, and the MM2 properties of that cluster without its alias
// prefix (bootstrap.servers included). canaries are the secrets in them.
type secureSide struct {
	name     string
	listener string
	props    func(t *testing.T, c *kafkatest.Cluster) map[string]string
}

func (s secureSide) canaries() []string {
	sec := env.Security
	return []string{sec.SCRAM.Password, sec.Plain.Password, storePassword}
}

// block writes a side's properties under alias.
func block(t *testing.T, alias string, s secureSide, c *kafkatest.Cluster) string {
	t.Helper()
	var b strings.Builder
	for k, v := range s.props(t, c) {
		fmt.Fprintf(&b, "%s.%s = %s\n", alias, k, v)
	}
	return b.String()
}

func listener(t *testing.T, c *kafkatest.Cluster, name string) string {
	t.Helper()
	return strings.Join(c.ListenerSeeds(t, name), ",")
}

// jaasValue quotes a JAAS option value.
func jaasValue(v string) string { return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"` }

// userJAAS is the JAAS line of a username/password login module.
func userJAAS(module string, c kafkatest.Credentials) string {
	return module + " required username=" + jaasValue(c.User) + " password=" + jaasValue(c.Password) + ";"
}

const (
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
)

// propsPEM writes PEM as one properties value: continuation lines, as
// Kafka's documentation writes ssl.truststore.certificates.
func propsPEM(pem []byte) string {
	lines := strings.Split(strings.TrimSpace(string(pem)), "\n")
	return strings.Join(lines, " \\\n    ")
}

var (
	scram512JKS = secureSide{name: "SASL_SSL SCRAM-SHA-512, JKS truststore", listener: kafkatest.ListenerSASLSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			sec := env.Security
			return map[string]string{
				"bootstrap.servers":       listener(t, c, kafkatest.ListenerSASLSSL),
				"security.protocol":       "SASL_SSL",
				"sasl.mechanism":          "SCRAM-SHA-512",
				"sasl.jaas.config":        userJAAS(scramModule, sec.SCRAM),
				"ssl.truststore.location": sec.Truststore(t, kafkatest.StoreJKS, storePassword),
				"ssl.truststore.password": storePassword,
			}
		}}
	scram256InlinePEM = secureSide{name: "SASL_SSL SCRAM-SHA-256, inline PEM truststore", listener: kafkatest.ListenerSASLSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			sec := env.Security
			return map[string]string{
				"bootstrap.servers":           listener(t, c, kafkatest.ListenerSASLSSL),
				"security.protocol":           "SASL_SSL",
				"sasl.mechanism":              "SCRAM-SHA-256",
				"sasl.jaas.config":            userJAAS(scramModule, sec.SCRAM),
				"ssl.truststore.type":         "PEM",
				"ssl.truststore.certificates": propsPEM(sec.CA.PEM()),
			}
		}}
	mtlsPKCS12 = secureSide{name: "SSL with client certificate, PKCS12 stores", listener: kafkatest.ListenerSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			p := env.Security.ClientStores(t, kafkatest.StorePKCS12, storePassword, storePassword).Properties()
			p["bootstrap.servers"] = listener(t, c, kafkatest.ListenerSSL)
			p["security.protocol"] = "SSL"
			return p
		}}
	mtlsJKS = secureSide{name: "SSL with client certificate, JKS stores with a key password of its own", listener: kafkatest.ListenerSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			p := env.Security.ClientStores(t, kafkatest.StoreJKS, storePassword, storePassword+"-key").Properties()
			p["bootstrap.servers"] = listener(t, c, kafkatest.ListenerSSL)
			p["security.protocol"] = "SSL"
			return p
		}}
	mtlsPEMFiles = secureSide{name: "SSL with client certificate, PEM files with an encrypted key", listener: kafkatest.ListenerSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			p := env.Security.ClientStores(t, kafkatest.StorePEM, "", storePassword).Properties()
			p["bootstrap.servers"] = listener(t, c, kafkatest.ListenerSSL)
			p["security.protocol"] = "SSL"
			return p
		}}
	mtlsInlinePEM = secureSide{name: "SSL with client certificate, inline PEM key and chain", listener: kafkatest.ListenerSSL,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			sec := env.Security
			key, err := sec.Client.KeyPEM(storePassword)
			if err != nil {
				t.Fatal(err)
			}
			return map[string]string{
				"bootstrap.servers":              listener(t, c, kafkatest.ListenerSSL),
				"security.protocol":              "SSL",
				"ssl.keystore.type":              "PEM",
				"ssl.keystore.key":               propsPEM(key),
				"ssl.keystore.certificate.chain": propsPEM(sec.Client.ChainPEM()[:len(sec.Client.ChainPEM())-len(sec.CA.PEM())]),
				"ssl.key.password":               storePassword,
				"ssl.truststore.type":            "PEM",
				"ssl.truststore.certificates":    propsPEM(sec.CA.PEM()),
			}
		}}
	plain = secureSide{name: "SASL_PLAINTEXT PLAIN", listener: kafkatest.ListenerSASLPlaintext,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			sec := env.Security
			return map[string]string{
				"bootstrap.servers": listener(t, c, kafkatest.ListenerSASLPlaintext),
				"security.protocol": "SASL_PLAINTEXT",
				"sasl.mechanism":    "PLAIN",
				"sasl.jaas.config":  userJAAS(plainModule, sec.Plain),
			}
		}}
)

// gssapi connects with Kerberos from a keytab; the KDC's krb5.conf comes
// from KRB5_CONFIG, as for any Kerberos client.
var gssapi = secureSide{name: "SASL_PLAINTEXT GSSAPI, keytab", listener: kafkatest.ListenerGSSAPI,
	props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
		krb := env.Kerberos
		t.Setenv("KRB5_CONFIG", krb.Krb5Conf)
		return map[string]string{
			"bootstrap.servers":          listener(t, c, kafkatest.ListenerGSSAPI),
			"security.protocol":          "SASL_PLAINTEXT",
			"sasl.mechanism":             "GSSAPI",
			"sasl.kerberos.service.name": krb.ServiceName,
			"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=" +
				jaasValue(krb.ClientKeytab) + " principal=" + jaasValue(krb.ClientPrincipal) + ";",
		}
	}}

// oauth connects with OAUTHBEARER and the client-credentials flow against
// a token endpoint of the test's own.
func oauth(ep *kafkatest.TokenEndpoint) secureSide {
	return secureSide{name: "SASL_PLAINTEXT OAUTHBEARER, client credentials", listener: kafkatest.ListenerOAuth,
		props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			return map[string]string{
				"bootstrap.servers":                   listener(t, c, kafkatest.ListenerOAuth),
				"security.protocol":                   "SASL_PLAINTEXT",
				"sasl.mechanism":                      "OAUTHBEARER",
				"sasl.oauthbearer.token.endpoint.url": ep.URL,
				"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
				"sasl.jaas.config":                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=" + jaasValue(ep.ClientID) + " clientSecret=" + jaasValue(ep.ClientSecret) + ";",
			}
		}}
}

// secureConfig is an MM2 config for A->B with each side on its own
// listener, syncing group offsets every second.
func secureConfig(t *testing.T, src, dst secureSide, topic string) string {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	cfg := fmt.Sprintf(`clusters = A, B
%s%sA->B.enabled = true
A->B.topics = %s
A->B.groups = %s-.*
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
refresh.topics.interval.seconds = 1
refresh.groups.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 1
`, block(t, "A", src, a), block(t, "B", dst, b), topic, topic)
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// debugPages fetches what --debug-addr serves.
func debugPages(t *testing.T, addr string) string {
	t.Helper()
	var all strings.Builder
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/debug/pprof/heap?debug=1", "/debug/pprof/allocs?debug=1", "/debug/pprof/block?debug=1", "/debug/pprof/mutex?debug=1", "/debug/pprof/threadcreate?debug=1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		all.Write(body)
	}
	return all.String()
}

func assertNoCanary(t *testing.T, where, text string, canaries []string) {
	t.Helper()
	for _, c := range canaries {
		if c != "" && strings.Contains(text, c) {
			i := strings.Index(text, c)
			t.Errorf("%s contains the secret %q: ...%s...", where, c, text[max(0, i-200):min(len(text), i+len(c)+50)])
		}
	}
}

// TestSecureReplication replicates data and translates group offsets with
// each listener and each store format, the source and the target on
// different mechanisms; no secret appears in Strait's output, in `strait
// check` or on its debug pages.
func TestSecureReplication(t *testing.T) {
	ep := env.Security.NewTokenEndpoint(t, kafkatest.TokenEndpointOptions{})
	pairs := []struct{ src, dst secureSide }{
		{scram512JKS, mtlsPKCS12},
		{mtlsPEMFiles, plain},
		{oauth(ep), scram256InlinePEM},
		{mtlsJKS, oauth(ep)},
		{mtlsInlinePEM, scram512JKS},
		{gssapi, mtlsPKCS12},
		{plain, gssapi},
	}
	for i, pair := range pairs {
		t.Run(fmt.Sprintf("%d %s to %s", i, pair.src.name, pair.dst.name), func(t *testing.T) {
			a, b := env.Clusters[0], env.Clusters[1]
			topic := kafkatest.Name(t, "secure")
			a.CreateTopic(t, topic, 3, nil)
			w := &workload{topic: topic, partitions: 3}
			w.produce(t, producer(t, a), 3000)
			group := topic + "-readers"
			commitGroup(t, a, group, topic, 1000)

			cfg := secureConfig(t, pair.src, pair.dst, topic)
			canaries := append(pair.src.canaries(), ep.ClientSecret)
			// The secrets searched for are really in the file, so the
			// searches below can find a leak.
			written, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, c := range canaries {
				if strings.Contains(string(written), c) {
					found++
				}
			}
			if found == 0 {
				t.Fatal("none of the canary secrets is in the config: the leak checks would check nothing")
			}
			check := startStrait(t, "check", "-c", cfg)
			if err := check.wait(t, time.Minute); err != nil {
				t.Fatalf("strait check failed: %v\n%s", err, check.out.String())
			}
			assertNoCanary(t, "strait check output", check.out.String(), canaries)

			debug := kafkatest.FreeAddr(t)
			p := startStrait(t, "run", "--debug-addr", debug, cfg)
			waitCopied(t, topic, "A."+topic, nil, 2*time.Minute)
			waitGroupSynced(t, b, group, "A."+topic, 1000)
			assertNoCanary(t, "debug pages", debugPages(t, debug), canaries)
			if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
				t.Fatalf("strait exited with %v after SIGTERM", err)
			}
			assertNoCanary(t, "strait run output", p.out.String(), canaries)
			for _, rep := range compare(t, topic, "A."+topic, kgo.ReadCommitted()) {
				if rep.Duplicates != 0 || rep.Lost != 0 {
					t.Errorf("partition %d: %d lost, %d duplicates", rep.Partition, rep.Lost, rep.Duplicates)
				}
			}
		})
	}
}

// commitGroup commits offset at for every partition of topic for group.
func commitGroup(t *testing.T, c *kafkatest.Cluster, group, topic string, at int64) {
	t.Helper()
	offsets := kadm.Offsets{}
	for p := range endOffsets(t, c, topic) {
		offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	resp, err := c.Admin(t).CommitOffsets(t.Context(), group, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing offsets of %s: %v", group, err)
	}
}

// waitGroupSynced waits until group's offsets on the target are at for
// every partition of remote: checkpoints were written and translated
// exactly.
func waitGroupSynced(t *testing.T, c *kafkatest.Cluster, group, remote string, at int64) {
	t.Helper()
	adm := c.Admin(t)
	kafkatest.Eventually(t, time.Minute, func() error {
		fetched, err := adm.FetchOffsets(t.Context(), group)
		if err != nil {
			return err
		}
		n := 0
		for p, o := range fetched[remote] {
			if o.Err != nil || o.At != at {
				return fmt.Errorf("group %s on the target: %s[%d] at %d (%v), want %d", group, remote, p, o.At, o.Err, at)
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("group %s has no offsets for %s on the target yet", group, remote)
		}
		return nil
	})
}

// TestSecurityFailuresNameTheFix: each way a secure connection fails gives
// one error, in `strait check` and in `strait run`, that names the cluster
// alias and the setting that fixes it, and shows no secret.
func TestSecurityFailuresNameTheFix(t *testing.T) {
	sec := env.Security
	down := sec.NewTokenEndpoint(t, kafkatest.TokenEndpointOptions{})
	down.Stop()
	const wrongPassword = "canary-wrong-9b2e71"
	with := func(s secureSide, change func(t *testing.T, p map[string]string)) secureSide {
		return secureSide{name: s.name, listener: s.listener, props: func(t *testing.T, c *kafkatest.Cluster) map[string]string {
			p := s.props(t, c)
			change(t, p)
			return p
		}}
	}
	scramAs := func(user, password string) func(*testing.T, map[string]string) {
		return func(_ *testing.T, p map[string]string) {
			p["sasl.jaas.config"] = userJAAS(scramModule, kafkatest.Credentials{User: user, Password: password})
		}
	}
	tests := []struct {
		name string
		side secureSide
		want string
	}{
		{"wrong keystore password", with(mtlsPKCS12, func(_ *testing.T, p map[string]string) { p["ssl.keystore.password"] = wrongPassword }), "password"},
		{"wrong SCRAM password", with(scram512JKS, scramAs(sec.SCRAM.User, wrongPassword)), "refused Strait's credentials"},
		{"unknown SCRAM user", with(scram512JKS, scramAs("nobody-"+wrongPassword[7:], sec.SCRAM.Password)), "refused Strait's credentials"},
		{"expired broker certificate", with(mtlsPKCS12, func(t *testing.T, p map[string]string) {
			p["bootstrap.servers"] = listener(t, env.Clusters[0], kafkatest.ListenerExpired)
		}), "has expired"},
		{"untrusted CA", with(scram512JKS, func(t *testing.T, p map[string]string) {
			p["ssl.truststore.location"] = sec.Truststore(t, kafkatest.StoreJKS, storePassword, sec.OtherCA)
		}), "does not trust"},
		{"hostname mismatch", with(scram512JKS, func(t *testing.T, p map[string]string) {
			p["bootstrap.servers"] = strings.ReplaceAll(p["bootstrap.servers"], "127.0.0.1", "localhost")
		}), "does not name the host"},
		{"no client certificate", with(mtlsPKCS12, func(_ *testing.T, p map[string]string) {
			for _, k := range []string{"ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.key.password"} {
				delete(p, k)
			}
		}), "refused Strait's client certificate"},
		{"token endpoint down", oauth(down), "not reachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := kafkatest.Name(t, "secure-fail")
			cfg := secureConfig(t, tt.side, plain, topic)
			canaries := append(tt.side.canaries(), wrongPassword, down.ClientSecret)
			for _, args := range [][]string{{"check", "-c", cfg, "--timeout", "10s"}, {"run", cfg}} {
				p := startStrait(t, args...)
				err := p.wait(t, time.Minute)
				out := p.out.String()
				if err == nil {
					t.Fatalf("strait %s succeeded:\n%s", args[0], out)
				}
				if !strings.Contains(out, `cluster "A"`) || !strings.Contains(out, tt.want) {
					t.Errorf("strait %s does not name the cluster and %q:\n%s", args[0], tt.want, out)
				}
				assertNoCanary(t, "strait "+args[0]+" output", out, canaries)
			}
		})
	}
}

// TestOnPremSASLSSLConfigRunsUnchanged runs testdata/sasl-ssl-onprem.properties,
// an MM2 file with SASL_SSL, mutual TLS and config providers, as a
// deployment would: only the bootstrap servers and the secrets' mount point
// are its own. Data and group offsets are copied, and no secret shows.
func TestOnPremSASLSSLConfigRunsUnchanged(t *testing.T) {
	sec := env.Security
	a, b := env.Clusters[0], env.Clusters[1]
	original, err := os.ReadFile("testdata/sasl-ssl-onprem.properties")
	if err != nil {
		t.Fatal(err)
	}
	// The mounted secrets.
	mount := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(mount, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(name, from string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		write(name, data)
	}
	write("mm2-user.password", []byte(sec.SCRAM.Password))
	write("primary-ca.crt", sec.CA.PEM())
	copyFile("dr-user.p12", sec.Keystore(t, sec.Client, kafkatest.StorePKCS12, storePassword, storePassword))
	copyFile("dr-ca.p12", sec.Truststore(t, kafkatest.StorePKCS12, storePassword))
	write("stores.properties", []byte("dr.keystore.password = "+storePassword+"\ndr.truststore.password = "+storePassword+"\n"))

	text := strings.NewReplacer(
		"kafka-0.primary.example.com:9093,kafka-1.primary.example.com:9093", listener(t, a, kafkatest.ListenerSASLSSL),
		"kafka-0.dr.example.com:9093", listener(t, b, kafkatest.ListenerSSL),
		"/opt/kafka/mm2-secrets", mount,
	).Replace(string(original))
	cfg := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	canaries := []string{sec.SCRAM.Password, storePassword}

	topic := kafkatest.Name(t, "orders")
	a.CreateTopic(t, topic, 3, nil)
	w := &workload{topic: topic, partitions: 3}
	w.produce(t, producer(t, a), 3000)
	group := topic + "-readers"
	commitGroup(t, a, group, topic, 500)

	t.Setenv("MM2_SCRAM_USER", sec.SCRAM.User)
	check := startStrait(t, "check", "-c", cfg)
	if err := check.wait(t, time.Minute); err != nil {
		t.Fatalf("strait check failed: %v\n%s", err, check.out.String())
	}
	assertNoCanary(t, "strait check output", check.out.String(), canaries)
	p := startStrait(t, "run", cfg)
	waitCopied(t, topic, "primary."+topic, nil, 2*time.Minute)
	waitGroupSynced(t, b, group, "primary."+topic, 500)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatalf("strait exited with %v after SIGTERM", err)
	}
	assertNoCanary(t, "strait run output", p.out.String(), canaries)
}
