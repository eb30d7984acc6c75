package saslconf

import (
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/test/testdata"
)

const keytabPassword = "kt-password-derives-the-key"

// keytabFile is a keytab with an AES256 key of principal@realm.
func keytabFile(t *testing.T, principal, realm string) []byte {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(principal, realm, keytabPassword, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func krb5Conf(kdc string) []byte {
	return fmt.Appendf(nil, `[libdefaults]
  default_realm = EXAMPLE.COM
  dns_lookup_kdc = false
  dns_lookup_realm = false

[realms]
  EXAMPLE.COM = {
    kdc = %s
  }
`, kdc)
}

// kerberosWorld has a krb5.conf at /etc/krb5.conf whose KDC is kdc and a
// keytab of kafka-client@EXAMPLE.COM at /etc/security/client.keytab.
func kerberosWorld(t *testing.T, kdc string) *world {
	w := newWorld()
	w.setFile("/etc/krb5.conf", krb5Conf(kdc))
	w.setFile("/etc/security/client.keytab", keytabFile(t, "kafka-client", "EXAMPLE.COM"))
	return w
}

const keytabJAAS = krb5Module + ` required useKeyTab=true storeKey=true doNotPrompt=true keyTab="/etc/security/client.keytab" principal="kafka-client@EXAMPLE.COM";`

func krbClient(jaas string, extra ...string) []string {
	return append([]string{"sasl.mechanism", "GSSAPI", "sasl.jaas.config", jaas, "sasl.kerberos.service.name", "kafka"}, extra...)
}

func TestKerberosKeytab(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		env   map[string]string
	}{
		{"principal with realm", krbClient(keytabJAAS), nil},
		{"principal in the default realm, krb5.conf from KRB5_CONFIG", krbClient(strings.Replace(keytabJAAS, "kafka-client@EXAMPLE.COM", "kafka-client", 1)),
			map[string]string{"KRB5_CONFIG": "/opt/krb5.conf"}},
		{"default mechanism, service name in the JAAS line", []string{"sasl.jaas.config", strings.Replace(keytabJAAS, "required", `required serviceName="kafka"`, 1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := kerberosWorld(t, closedPort(t))
			for k, v := range tt.env {
				w.env[k] = v
				w.setFile(v, w.files["/etc/krb5.conf"])
				delete(w.files, "/etc/krb5.conf")
			}
			m, ws := build(t, newClient(tt.props...), w.options())
			if len(ws) != 0 {
				t.Errorf("warnings = %q", warnings(ws))
			}
			if m.Name() != GSSAPI {
				t.Errorf("Name() = %q", m.Name())
			}
			// No KDC listens: the login fails, and says where.
			_, _, err := m.Authenticate(t.Context(), "broker1.example.com:9092")
			if err == nil {
				t.Fatal("Authenticate against no KDC: no error")
			}
			want := []string{`SASL GSSAPI for cluster "A" (broker broker1.example.com:9092): kerberos login of kafka-client@EXAMPLE.COM with keyTab /etc/security/client.keytab`,
				"check the KDC in krb5.conf, the principal and the keytab"}
			if miss := missing(err.Error(), want...); len(miss) > 0 {
				t.Errorf("error %q lacks %q", err, miss)
			}
		})
	}
}

// ccacheWorld has a krb5.conf and, at path, the ticket cache of gokrb5's
// tests: testuser1@TEST.GOKRB5 with a TGT that expired in 2017.
func ccacheWorld(t *testing.T, path string) *world {
	t.Helper()
	w := kerberosWorld(t, closedPort(t))
	b, err := hex.DecodeString(testdata.CCACHE_TEST)
	if err != nil {
		t.Fatal(err)
	}
	w.setFile(path, b)
	return w
}

func TestKerberosTicketCache(t *testing.T) {
	tests := []struct {
		name string
		jaas string
		env  map[string]string
		path string
	}{
		{"ticketCache option", krb5Module + ` required useTicketCache=true ticketCache="/tmp/cc-strait";`, nil, "/tmp/cc-strait"},
		{"KRB5CCNAME with FILE:", krb5Module + ` required useTicketCache=true principal="testuser1@TEST.GOKRB5";`, map[string]string{"KRB5CCNAME": "FILE:/run/cc"}, "/run/cc"},
		{"KRB5CCNAME path", krb5Module + ` required useTicketCache=true;`, map[string]string{"KRB5CCNAME": "/run/cc2"}, "/run/cc2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ccacheWorld(t, tt.path)
			for k, v := range tt.env {
				w.env[k] = v
			}
			m, ws := build(t, newClient(krbClient(tt.jaas)...), w.options())
			got := warnings(ws)
			if len(got) != 1 || !strings.Contains(got[0], "GSSAPI: the ticket in the ticket cache "+tt.path+" expired at 2017-") {
				t.Errorf("warnings = %q, want the expired ticket", got)
			}
			// The cache is read again for the connection; its ticket has
			// expired and there is no keytab to log in with again.
			_, _, err := m.Authenticate(t.Context(), "broker1.example.com:9092")
			if err == nil || !strings.Contains(err.Error(), `SASL GSSAPI for cluster "A"`) || !strings.Contains(err.Error(), "no valid existing session") {
				t.Errorf("Authenticate = %v, want the expired session", err)
			}
		})
	}
}

func TestKerberosProblems(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		setup func(*world)
		want  []string
	}{
		{"no service name", []string{"sasl.mechanism", "GSSAPI", "sasl.jaas.config", keytabJAAS}, nil,
			[]string{`key "A.security.protocol"`, `cluster "A": GSSAPI needs the Kerberos service name of the brokers: set A.sasl.kerberos.service.name=kafka`}},
		{"two service names", krbClient(strings.Replace(keytabJAAS, "required", `required serviceName="kafka2"`, 1)), nil,
			[]string{`key "A.sasl.kerberos.service.name"`, "sasl.kerberos.service.name=kafka and the JAAS option serviceName=kafka2 differ"}},
		{"no keytab and no ticket cache", krbClient(krb5Module + ` required principal="a@EXAMPLE.COM";`), nil,
			[]string{`key "A.sasl.jaas.config"`, `Krb5LoginModule needs useKeyTab=true keyTab="/path/client.keytab" principal="client@REALM", or useTicketCache=true`}},
		{"no keyTab option", krbClient(krb5Module + ` required useKeyTab=true principal="a@EXAMPLE.COM";`), nil,
			[]string{`useKeyTab=true needs keyTab="/path/client.keytab"`}},
		{"no principal", krbClient(krb5Module + ` required useKeyTab=true keyTab="/etc/security/client.keytab";`), nil,
			[]string{`useKeyTab=true needs principal="client@REALM"`}},
		{"keytab missing", krbClient(strings.Replace(keytabJAAS, "client.keytab", "other.keytab", 1)), nil,
			[]string{"reading keyTab /etc/security/other.keytab: file does not exist; check the path"}},
		{"not a keytab", krbClient(keytabJAAS), func(w *world) { w.setFile("/etc/security/client.keytab", []byte("not a keytab")) },
			[]string{"keyTab /etc/security/client.keytab is not a Kerberos keytab"}},
		{"keytab of another principal", krbClient(strings.Replace(keytabJAAS, "kafka-client@", "other@", 1)), nil,
			[]string{"keyTab /etc/security/client.keytab has no key for principal other@EXAMPLE.COM; check principal or list the keytab with klist -k"}},
		{"no krb5.conf", krbClient(keytabJAAS), func(w *world) { delete(w.files, "/etc/krb5.conf") },
			[]string{"GSSAPI: reading the Kerberos configuration /etc/krb5.conf: file does not exist; Strait reads KRB5_CONFIG or /etc/krb5.conf (a JVM's -Djava.security.krb5.conf is not seen): set KRB5_CONFIG"}},
		{"krb5.conf from KRB5_CONFIG missing", krbClient(keytabJAAS), func(w *world) { w.env["KRB5_CONFIG"] = "/nowhere/krb5.conf" },
			[]string{"reading the Kerberos configuration /nowhere/krb5.conf"}},
		{"invalid krb5.conf", krbClient(keytabJAAS), func(w *world) {
			w.setFile("/etc/krb5.conf", []byte("[libdefaults]\n  ticket_lifetime = forever\n"))
		}, []string{"GSSAPI: the Kerberos configuration /etc/krb5.conf is not valid"}},
		{"no realm", krbClient(strings.Replace(keytabJAAS, "kafka-client@EXAMPLE.COM", "kafka-client", 1)), func(w *world) {
			w.setFile("/etc/krb5.conf", []byte("[libdefaults]\n  dns_lookup_kdc = false\n"))
		}, []string{`principal "kafka-client" has no realm and krb5.conf sets no default_realm`}},
		{"ticket cache missing", krbClient(krb5Module + ` required useTicketCache=true ticketCache="/tmp/none";`), nil,
			[]string{"GSSAPI: reading the ticket cache /tmp/none: file does not exist; run kinit, or set ticketCache or KRB5CCNAME"}},
		{"ticket cache in the kernel keyring", krbClient(krb5Module + ` required useTicketCache=true;`), func(w *world) { w.env["KRB5CCNAME"] = "KEYRING:persistent:1000" },
			[]string{"the ticket cache KEYRING:persistent:1000 is of type KEYRING; Strait reads only FILE caches"}},
		{"ticket cache of another principal", krbClient(krb5Module + ` required useTicketCache=true ticketCache="/tmp/cc" principal="other@TEST.GOKRB5";`), func(w *world) {
			b, _ := hex.DecodeString(testdata.CCACHE_TEST)
			w.setFile("/tmp/cc", b)
		}, []string{"the ticket cache /tmp/cc holds testuser1@TEST.GOKRB5, not principal other@TEST.GOKRB5"}},
		{"not a ticket cache", krbClient(krb5Module + ` required useTicketCache=true ticketCache="/tmp/cc";`), func(w *world) { w.setFile("/tmp/cc", []byte{5, 4, 0}) },
			[]string{"the ticket cache /tmp/cc is not a Kerberos credentials cache"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := kerberosWorld(t, "127.0.0.1:88")
			if tt.setup != nil {
				tt.setup(w)
			}
			wantOneProblem(t, tt.props, w.options(), tt.want...)
		})
	}
}

func TestKerberosWarnings(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		want  []string
	}{
		{"kafka's kerberos keys", krbClient(keytabJAAS, "sasl.kerberos.kinit.cmd", "/usr/bin/kinit", "sasl.kerberos.ticket.renew.window.factor", "0.8"),
			[]string{"sasl.kerberos.kinit.cmd has no effect: Strait does not run kinit", "sasl.kerberos.ticket.renew.window.factor has no effect"}},
		{"login module options", krbClient(strings.Replace(keytabJAAS, "required", "required debug=true renewTGT=true isInitiator=false refreshKrb5Config=true", 1)),
			[]string{"option debug of Krb5LoginModule has no effect", "option renewTGT has no effect without useTicketCache",
				"isInitiator=false has no effect: a Kafka client is always the initiator", "option refreshKrb5Config of Krb5LoginModule has no effect"}},
		{"keytab and ticket cache", krbClient(strings.Replace(keytabJAAS, "required", "required useTicketCache=true", 1)),
			[]string{"useKeyTab and useTicketCache are both true: Strait logs in with the keytab"}},
		{"unknown option", krbClient(strings.Replace(keytabJAAS, "required", `required krb5Conf="/x"`, 1)),
			[]string{"option krb5Conf of Krb5LoginModule has no effect in Strait"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ws := build(t, newClient(tt.props...), kerberosWorld(t, "127.0.0.1:88").options())
			got := warnings(ws)
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
