package saslconf

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"strait/internal/config"
)

const canary = "CaNaRy-7f3e9d"

// TestNoSecretIsShown puts a distinctive secret into every secret field
// (passwords, client secrets, tokens, AWS keys, keytab keys), in good and
// bad configurations, and checks that it is in no error, warning, printed
// mechanism or log line.
func TestNoSecretIsShown(t *testing.T) {
	// Forms of the secret that could leak besides its text.
	forms := []string{canary, base64.StdEncoding.EncodeToString([]byte("strait:" + canary)), strings.ToLower(canary)}

	idpCanary := newIDP(t, func(n int) (int, string) {
		switch n {
		case 1:
			return 200, fmt.Sprintf(`{"access_token":"%s-token","expires_in":3600}`, canary)
		case 2:
			return 401, fmt.Sprintf(`{"error":"invalid_client","access_token":"%s","client_secret":"%s"}`, canary, canary)
		}
		return 200, fmt.Sprintf(`{"token":"%s"`, canary)
	})
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>ASIAROLE</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s-st</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`, canary, canary)
	}))
	t.Cleanup(sts.Close)
	awsEnv(t, "AWS_ACCESS_KEY_ID", "AKIAENVKEY", "AWS_SECRET_ACCESS_KEY", canary, "AWS_SESSION_TOKEN", canary+"-session", "AWS_ENDPOINT_URL_STS", sts.URL)

	// A keytab whose key is derived from the secret; its key bytes are
	// secret too.
	kw := kerberosWorld(t, closedPort(t))
	kt := keytab.New()
	if err := kt.AddEntry("kafka-client", "EXAMPLE.COM", canary, time.Now(), 1, 18); err != nil {
		t.Fatal(err)
	}
	ktBytes, _ := kt.Marshal()
	kw.setFile("/etc/security/client.keytab", ktBytes)
	forms = append(forms, hex.EncodeToString(kt.Entries[0].Key.KeyValue))

	plainLine := func(rest string) string {
		return plainModule + ` required username="strait" password="` + canary + `"` + rest
	}
	cases := []struct {
		name  string
		c     config.Client
		w     *world
		http  bool
		auths int // Authenticate calls
	}{
		{name: "plain", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainLine(";")), auths: 1},
		{name: "event hubs", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainModule+` required username="$ConnectionString" password="Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=`+canary+`";`), auths: 1},
		{name: "plain not terminated", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainLine(""))},
		{name: "unquoted password with a space", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainModule+` required password=`+canary+` `+canary+`;`)},
		{name: "unquoted password starting with a digit", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainModule+` required password=1`+canary+`;`)},
		{name: "password as the whole jaas config", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", canary)},
		{name: "password as the whole jaas config, with a semicolon", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", canary+" required; x.y.Z required;")},
		{name: "password in the flag", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", plainModule+" "+canary+";")},
		{name: "mechanism mismatch", c: newClient("sasl.mechanism", "GSSAPI", "sasl.jaas.config", plainLine(";"))},
		{name: "unknown module", c: newClient("sasl.mechanism", "PLAIN", "sasl.jaas.config", `com.example.Login required password="`+canary+`";`)},
		{name: "scram token", c: newClient("sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", scramModule+` required username="t" password="`+canary+`" tokenauth=true extra="`+canary+`";`), auths: 1},
		{name: "oauth jaas secret, token, 401, malformed", c: oauthClient(idpCanary.url()+"?key="+canary, "sasl.jaas.config", oauthModule+` required clientId="strait" clientSecret="`+canary+`" unsecuredLoginStringClaim_sub="`+canary+`";`,
			"sasl.login.retry.backoff.max.ms", "0"), http: true, auths: 4},
		{name: "oauth 4.1 secret", c: oauthClient("https://idp.invalid/token", "sasl.jaas.config", oauthModule+" required;", "sasl.oauthbearer.client.credentials.client.id", "strait",
			"sasl.oauthbearer.client.credentials.client.secret", canary, "sasl.oauthbearer.assertion.private.key.passphrase", canary)},
		{name: "oauth without handler", c: newClient("sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule+` required clientSecret="`+canary+`";`)},
		{name: "oauth token file", c: oauthClient("file:///t", "sasl.jaas.config", oauthModule+` required clientSecret="`+canary+`";`), auths: 1},
		{name: "aws from env, debug", c: iamClient(` awsDebugCreds=true`), auths: 1},
		{name: "aws role with static keys", c: iamClient(` awsRoleArn="arn:aws:iam::1:role/r" awsRoleAccessKeyId="AKIAJAAS" awsRoleSecretAccessKey="` + canary + `" awsRoleSessionToken="` + canary + `" awsDebugCreds=true`), auths: 1},
		{name: "aws half static keys", c: iamClient(` awsRoleArn="arn:aws:iam::1:role/r" awsRoleSecretAccessKey="` + canary + `"`)},
		{name: "kerberos keytab", c: newClient(krbClient(keytabJAAS)...), w: kw, auths: 1},
		{name: "kerberos without keytab", c: newClient(krbClient(krb5Module + ` required password="` + canary + `";`)...), w: kw},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			if w == nil {
				w = newWorld()
				w.setFile("/t", []byte(jwt(map[string]any{"exp": w.now.Add(time.Hour).Unix(), "secret": canary})))
			}
			o := w.options()
			if tc.http {
				o.HTTPClient = idpCanary.srv.Client()
			}
			var shown []string
			m, ws, err := Build(tc.c, o)
			shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err),
				fmt.Sprint(ws), fmt.Sprintf("%+v", ws), fmt.Sprintf("%#v", ws))
			for _, wn := range ws {
				shown = append(shown, wn.String())
			}
			if m != nil {
				defer m.(*mechanism).Close()
				shown = append(shown, fmt.Sprint(m), fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m), fmt.Sprintf("%s", m))
				for range tc.auths {
					_, _, aerr := m.Authenticate(t.Context(), mskHost)
					shown = append(shown, fmt.Sprint(aerr), fmt.Sprintf("%+v", aerr), fmt.Sprintf("%#v", aerr))
					w.advance(3000 * time.Second) // past the refresh time of an OAuth token
				}
			} else if tc.auths > 0 {
				t.Fatalf("Build: %v", err)
			}
			shown = append(shown, w.log.String())
			for _, s := range shown {
				for _, f := range forms {
					if strings.Contains(s, f) {
						t.Errorf("the secret is shown: %q", s)
					}
				}
			}
		})
	}
}
