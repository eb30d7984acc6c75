package saslconf

import (
	"fmt"
	"strings"
	"testing"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`
const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`

func TestBuildPlainAndScram(t *testing.T) {
	tests := []struct {
		name      string
		props     []string
		mech      string
		wantFirst string // the first client message, or a prefix of it for SCRAM
	}{
		{"plain", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS}, Plain, "\x00alice\x00alice-secret"},
		{"plain with spaces around the values", []string{"sasl.mechanism", " PLAIN ", "sasl.jaas.config", "  " + plainJAAS + "\n"}, Plain, "\x00alice\x00alice-secret"},
		{"scram-sha-256", []string{"sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramJAAS}, ScramSHA256, "n,,n=alice,r="},
		{"scram-sha-512", []string{"sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", scramJAAS}, ScramSHA512, "n,,n=alice,r="},
		{"scram delegation token", []string{"sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config",
			`org.apache.kafka.common.security.scram.ScramLoginModule required username="tokenid" password="hmac" tokenauth="TRUE";`}, ScramSHA256, "n,,n=tokenid,r="},
		{"scram user name with , and = is escaped", []string{"sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config",
			`org.apache.kafka.common.security.scram.ScramLoginModule required username="a,b=c" password="p";`}, ScramSHA512, "n,,n=a=2Cb=3Dc,r="},
		{"event hubs: PLAIN with the connection string as password", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required username="$ConnectionString" password="Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Ab+c/d=";`},
			Plain, "\x00$ConnectionString\x00Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Ab+c/d="},
		{"plain module with scram, as Java allows", []string{"sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", plainJAAS}, ScramSHA256, "n,,n=alice,r="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := build(t, newClient(tt.props...), newWorld().options())
			if m.Name() != tt.mech {
				t.Errorf("Name() = %q, want %q", m.Name(), tt.mech)
			}
			msg := string(first(t, m, "broker:9092"))
			if !strings.HasPrefix(msg, tt.wantFirst) {
				t.Errorf("first message = %q, want it to start with %q", msg, tt.wantFirst)
			}
			if tt.mech == Plain && msg != tt.wantFirst {
				t.Errorf("first message = %q, want %q", msg, tt.wantFirst)
			}
			if strings.Contains(tt.name, "delegation") && !strings.HasSuffix(msg, ",tokenauth=true") {
				t.Errorf("first message = %q, want the tokenauth=true extension", msg)
			}
		})
	}
}

// TestBuildProblems checks every problem Build reports outside the OAuth,
// AWS and Kerberos specifics: each names the key, its line, the cluster
// and the fix.
func TestBuildProblems(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		want  []string // fragments of the one problem
	}{
		{"unknown mechanism", []string{"sasl.mechanism", "DIGEST-MD5", "sasl.jaas.config", plainJAAS},
			[]string{`key "A.sasl.mechanism" (line 1)`, `cluster "A"`, `sasl.mechanism="DIGEST-MD5" is not supported; use one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM, GSSAPI`}},
		{"mechanism in the wrong case", []string{"sasl.mechanism", "plain", "sasl.jaas.config", plainJAAS},
			[]string{`key "A.sasl.mechanism"`, "mechanism names are case-sensitive", "set sasl.mechanism=PLAIN"}},
		{"no jaas config", []string{"sasl.mechanism", "PLAIN"},
			[]string{`key "A.security.protocol"`, "SASL needs A.sasl.jaas.config", "java.security.auth.login.config", "PlainLoginModule required"}},
		{"empty jaas config", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", " "},
			[]string{`key "A.sasl.jaas.config"`, "SASL needs A.sasl.jaas.config"}},
		{"jaas syntax error", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p"`},
			[]string{`key "A.sasl.jaas.config" (line 2)`, `cluster "A": sasl.jaas.config: syntax error at character 91: the login module entry is not terminated by ';'`}},
		{"two login modules", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS + " " + scramJAAS},
			[]string{"2 login modules", "a Kafka client takes exactly one"}},
		{"unknown login module", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", `com.example.CustomLoginModule required user="x";`},
			[]string{`key "A.sasl.jaas.config"`, "login module com.example.CustomLoginModule is not supported (custom Java classes cannot be loaded); use one of org.apache.kafka.common.security.plain.PlainLoginModule"}},
		{"default mechanism with the plain module", []string{"sasl.jaas.config", plainJAAS},
			[]string{`key "A.security.protocol"`, "sasl.mechanism=GSSAPI (Kafka's default when sasl.mechanism is not set) does not match the login module org.apache.kafka.common.security.plain.PlainLoginModule in sasl.jaas.config, which provides PLAIN; set sasl.mechanism=PLAIN, or use com.sun.security.auth.module.Krb5LoginModule for GSSAPI"}},
		{"oauth mechanism with the scram module", []string{"sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", scramJAAS},
			[]string{`key "A.sasl.mechanism"`, "sasl.mechanism=OAUTHBEARER does not match the login module org.apache.kafka.common.security.scram.ScramLoginModule in sasl.jaas.config, which provides SCRAM-SHA-256 or SCRAM-SHA-512; set sasl.mechanism=SCRAM-SHA-256, or use org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule for OAUTHBEARER"}},
		{"plain mechanism with the iam module", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", "software.amazon.msk.auth.iam.IAMLoginModule required;"},
			[]string{"sasl.mechanism=PLAIN does not match the login module software.amazon.msk.auth.iam.IAMLoginModule", "which provides AWS_MSK_IAM"}},
		{"plain without password", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u";`},
			[]string{"PlainLoginModule needs a non-empty password; add password=\"...\""}},
		{"scram with empty user and password", []string{"sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="" password="";`},
			[]string{"ScramLoginModule needs a non-empty username and password"}},
		{"custom login class", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.login.class", "com.example.Login"},
			[]string{`key "A.sasl.login.class"`, "sasl.login.class=com.example.Login: custom Java classes cannot be loaded"}},
		{"custom client callback handler", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.client.callback.handler.class", "com.example.Handler"},
			[]string{`key "A.sasl.client.callback.handler.class"`, "sasl.client.callback.handler.class=com.example.Handler: custom Java classes cannot be loaded"}},
		{"iam handler for plain", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.client.callback.handler.class", iamClientHandler},
			[]string{"serves only sasl.mechanism=AWS_MSK_IAM, not PLAIN"}},
		{"custom login callback handler", []string{"sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramJAAS, "sasl.login.callback.handler.class", "com.example.LoginHandler"},
			[]string{`key "A.sasl.login.callback.handler.class"`, "sasl.login.callback.handler.class=com.example.LoginHandler: custom Java classes cannot be loaded"}},
		{"bad refresh factor", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.login.refresh.window.factor", "0.2"},
			[]string{`key "A.sasl.login.refresh.window.factor"`, "must be between 0.5 and 1, got 0.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOneProblem(t, tt.props, newWorld().options(), tt.want...)
		})
	}
}

// TestBuildWarnings checks the settings Strait accepts without honouring.
func TestBuildWarnings(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		want  []string // one fragment per warning, in order
	}{
		{"none", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.login.class", defaultLoginClass[Plain],
			"sasl.client.callback.handler.class", defaultClientHandler, "sasl.login.callback.handler.class", defaultLoginHandler}, nil},
		{"broker-side keys", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS,
			"sasl.oauthbearer.jwks.endpoint.url", "https://idp/jwks", "sasl.oauthbearer.expected.audience", "kafka"},
			[]string{`key "A.sasl.oauthbearer.expected.audience" (line 4): cluster "A": sasl.oauthbearer.expected.audience is a broker-side setting with no effect on a client`,
				`sasl.oauthbearer.jwks.endpoint.url is a broker-side setting with no effect on a client`}},
		{"keys of other mechanisms", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS,
			"sasl.kerberos.service.name", "kafka", "sasl.oauthbearer.token.endpoint.url", "https://idp/token", "sasl.login.refresh.buffer.seconds", "100"},
			[]string{"sasl.kerberos.service.name has no effect with sasl.mechanism=PLAIN", "sasl.login.refresh.buffer.seconds has no effect with sasl.mechanism=PLAIN",
				"sasl.oauthbearer.token.endpoint.url has no effect with sasl.mechanism=PLAIN"}},
		{"jwt bearer keys", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.oauthbearer.assertion.file", "/a.jwt"},
			[]string{"sasl.oauthbearer.assertion.file configures the JWT bearer grant, which Strait does not support"}},
		{"unknown key", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS, "sasl.username", "x"},
			[]string{"sasl.username is not a Kafka client setting; it has no effect"}},
		{"unused options", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p" user_admin="x" user_admin="y";`},
			[]string{"option user_admin is given more than once; the last one is used, as in Java", "sasl.jaas.config: option user_admin of PlainLoginModule has no effect in Strait"}},
		{"scram module with plain", []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config",
			`org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p" tokenauth=true;`},
			[]string{"sasl.mechanism=PLAIN is used with the login module org.apache.kafka.common.security.scram.ScramLoginModule, which is meant for SCRAM-SHA-256 or SCRAM-SHA-512; Java clients accept the mix",
				"tokenauth=true has no effect with sasl.mechanism=PLAIN"}},
		{"oauth handler with scram", []string{"sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramJAAS, "sasl.login.callback.handler.class", oauthHandler},
			[]string{"sasl.login.callback.handler.class=" + oauthHandler + " has no effect with sasl.mechanism=SCRAM-SHA-256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ws := build(t, newClient(tt.props...), newWorld().options())
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

// TestMechanismPrintsNoSecret: the mechanism prints as what it is under
// every fmt verb and in logs.
func TestMechanismPrintsNoSecret(t *testing.T) {
	m, _ := build(t, newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS), newWorld().options())
	for _, s := range []string{m.String(), m.GoString(), fmt.Sprintf("%v", m), fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m), fmt.Sprintf("%s", m), m.LogValue().String()} {
		if s != `SASL PLAIN for cluster "A"` {
			t.Errorf("printed as %q", s)
		}
	}
	m.Close()
	m.Close() // idempotent
}

func TestBuildResultIsClosing(t *testing.T) {
	m, _, err := Build(newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainJAAS), newWorld().options())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(interface{ Close() }); !ok {
		t.Error("the mechanism is not a sasl.ClosingMechanism")
	}

}
