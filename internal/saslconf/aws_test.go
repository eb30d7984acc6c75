package saslconf

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"strait/internal/config"
)

const mskHost = "b-1.strait.abc123.c2.kafka.us-east-1.amazonaws.com:9098"

// awsEnv points the AWS SDK at empty shared config files in a temporary
// directory and clears every variable it reads, so no test sees this
// machine's AWS setup or reaches an instance metadata service; vars are
// set on top. It returns the directory.
func awsEnv(t *testing.T, vars ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config", "credentials"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		"AWS_STS_REGIONAL_ENDPOINTS", "AWS_CA_BUNDLE", "AWS_SDK_LOAD_CONFIG"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	for i := 0; i+1 < len(vars); i += 2 {
		t.Setenv(vars[i], vars[i+1])
	}
	return dir
}

func iamClient(jaasOpts string, extra ...string) config.Client {
	kv := append([]string{"sasl.mechanism", "AWS_MSK_IAM", "sasl.jaas.config", iamModule + " required" + jaasOpts + ";",
		"sasl.client.callback.handler.class", iamClientHandler}, extra...)
	return newClient(kv...)
}

// mskPayload decodes the first AWS_MSK_IAM message, a JSON object of the
// signed request.
func mskPayload(t *testing.T, msg []byte) map[string]string {
	t.Helper()
	var p map[string]string
	if err := json.Unmarshal(msg, &p); err != nil {
		t.Fatalf("first message %q is not JSON: %v", msg, err)
	}
	return p
}

var credentialScope = regexp.MustCompile(`^(\w+)/\d{8}/([a-z0-9-]+)/kafka-cluster/aws4_request$`)

// checkSigned checks that p is a signed MSK IAM payload for host, with
// access key key in region region and session token token.
func checkSigned(t *testing.T, p map[string]string, host, key, region, token string) {
	t.Helper()
	if p["version"] != "2020_10_22" || p["action"] != "kafka-cluster:Connect" || p["x-amz-algorithm"] != "AWS4-HMAC-SHA256" ||
		p["x-amz-expires"] != "900" || p["x-amz-signedheaders"] != "host" || p["host"] != host {
		t.Errorf("payload %v is not a signed kafka-cluster:Connect request for %s", p, host)
	}
	m := credentialScope.FindStringSubmatch(p["x-amz-credential"])
	if m == nil || m[1] != key || m[2] != region {
		t.Errorf("x-amz-credential = %q, want key %s in region %s", p["x-amz-credential"], key, region)
	}
	if p["x-amz-security-token"] != token {
		t.Errorf("x-amz-security-token = %q, want %q", p["x-amz-security-token"], token)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p["x-amz-signature"]) {
		t.Errorf("x-amz-signature = %q", p["x-amz-signature"])
	}
}

func TestAWSCredentialsFromEnv(t *testing.T) {
	awsEnv(t, "AWS_ACCESS_KEY_ID", "AKIAENVKEY", "AWS_SECRET_ACCESS_KEY", "env-secret", "AWS_SESSION_TOKEN", "env-token")
	m, ws := build(t, iamClient(""), newWorld().options())
	if len(ws) != 0 {
		t.Errorf("warnings = %q", warnings(ws))
	}
	if m.Name() != AWSMSKIAM {
		t.Errorf("Name() = %q", m.Name())
	}
	checkSigned(t, mskPayload(t, first(t, m, mskHost)), strings.TrimSuffix(mskHost, ":9098"), "AKIAENVKEY", "us-east-1", "env-token")
}

func TestAWSProfile(t *testing.T) {
	dir := awsEnv(t, "AWS_ACCESS_KEY_ID", "AKIAENVKEY", "AWS_SECRET_ACCESS_KEY", "env-secret")
	creds := "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n\n[prod]\naws_access_key_id = AKIAPROD\naws_secret_access_key = prod-secret\n"
	if err := os.WriteFile(filepath.Join(dir, "credentials"), []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	m, _ := build(t, iamClient(` awsProfileName="prod"`), newWorld().options())
	checkSigned(t, mskPayload(t, first(t, m, mskHost)), strings.TrimSuffix(mskHost, ":9098"), "AKIAPROD", "us-east-1", "")

	_, _, err := Build(iamClient(` awsProfileName="nope"`), newWorld().options())
	ps := problems(t, err)
	if len(ps) != 1 || len(missing(ps[0], `key "A.sasl.jaas.config"`, `cluster "A"`, `loading the AWS shared config profile "nope" (awsProfileName)`, "AWS_CONFIG_FILE")) > 0 {
		t.Errorf("problems = %q", ps)
	}
}

// TestAWSRegion: the request is signed for the region in the broker's host
// name, else AWS_REGION.
func TestAWSRegion(t *testing.T) {
	awsEnv(t, "AWS_ACCESS_KEY_ID", "AKIAENVKEY", "AWS_SECRET_ACCESS_KEY", "env-secret")
	m, _ := build(t, iamClient(""), newWorld().options())
	_, _, err := m.Authenticate(t.Context(), "kafka.internal.example:9098")
	if err == nil || len(missing(err.Error(), `SASL AWS_MSK_IAM for cluster "A" (broker kafka.internal.example:9098)`, "cannot determine the region", "set AWS_REGION")) > 0 {
		t.Errorf("error = %v", err)
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	checkSigned(t, mskPayload(t, first(t, m, "kafka.internal.example:9098")), "kafka.internal.example", "AKIAENVKEY", "eu-west-1", "")
}

func TestAWSNoCredentials(t *testing.T) {
	awsEnv(t)
	m, _ := build(t, iamClient(""), newWorld().options())
	_, _, err := m.Authenticate(t.Context(), mskHost)
	if err == nil || len(missing(err.Error(), `SASL AWS_MSK_IAM for cluster "A"`, "getting AWS credentials", "check the AWS credential chain")) > 0 {
		t.Errorf("error = %v", err)
	}
}

// TestAWSAssumeRole assumes a role through a fake STS endpoint on this
// machine (AWS_ENDPOINT_URL_STS), never the real one.
func TestAWSAssumeRole(t *testing.T) {
	var mu sync.Mutex
	var forms []url.Values
	var auths []string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f, _ := url.ParseQuery(string(body))
		mu.Lock()
		forms, auths = append(forms, f), append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/kafka/s</Arn><AssumedRoleId>AROAX:s</AssumedRoleId></AssumedRoleUser>
<Credentials><AccessKeyId>ASIAROLE</AccessKeyId><SecretAccessKey>role-secret</SecretAccessKey><SessionToken>role-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>
</AssumeRoleResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></AssumeRoleResponse>`)
	}))
	t.Cleanup(sts.Close)
	tests := []struct {
		name      string
		opts      string
		env       []string
		session   string
		external  string
		signedKey string // the key that signed the AssumeRole request
	}{
		{"default chain", ` awsRoleArn="arn:aws:iam::123456789012:role/kafka"`,
			[]string{"AWS_ACCESS_KEY_ID", "AKIABASE", "AWS_SECRET_ACCESS_KEY", "base-secret"}, "aws-msk-iam-auth", "", "AKIABASE"},
		{"session name, external id and region", ` awsRoleArn="arn:aws:iam::123456789012:role/kafka" awsRoleSessionName="strait" awsRoleExternalId="ext-1" awsStsRegion="eu-west-1"`,
			[]string{"AWS_ACCESS_KEY_ID", "AKIABASE", "AWS_SECRET_ACCESS_KEY", "base-secret"}, "strait", "ext-1", "AKIABASE"},
		{"static keys for the role", ` awsRoleArn="arn:aws:iam::123456789012:role/kafka" awsRoleAccessKeyId="AKIAJAAS" awsRoleSecretAccessKey="jaas-secret"`,
			nil, "aws-msk-iam-auth", "", "AKIAJAAS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			awsEnv(t, append([]string{"AWS_ENDPOINT_URL_STS", sts.URL}, tt.env...)...)
			mu.Lock()
			forms, auths = nil, nil
			mu.Unlock()
			m, _ := build(t, iamClient(tt.opts), newWorld().options())
			checkSigned(t, mskPayload(t, first(t, m, mskHost)), strings.TrimSuffix(mskHost, ":9098"), "ASIAROLE", "us-east-1", "role-token")
			first(t, m, mskHost) // cached: no second AssumeRole
			mu.Lock()
			defer mu.Unlock()
			if len(forms) != 1 {
				t.Fatalf("%d AssumeRole calls, want 1", len(forms))
			}
			f := forms[0]
			if f.Get("Action") != "AssumeRole" || f.Get("RoleArn") != "arn:aws:iam::123456789012:role/kafka" || f.Get("RoleSessionName") != tt.session || f.Get("ExternalId") != tt.external {
				t.Errorf("AssumeRole form = %v", f)
			}
			if !strings.Contains(auths[0], "Credential="+tt.signedKey+"/") {
				t.Errorf("AssumeRole signed with %q, want key %s", auths[0], tt.signedKey)
			}
		})
	}
}

func TestAWSProblemsAndWarnings(t *testing.T) {
	awsEnv(t, "AWS_ACCESS_KEY_ID", "AKIAENVKEY", "AWS_SECRET_ACCESS_KEY", "env-secret")
	_, _, err := Build(iamClient(` awsRoleArn="arn:aws:iam::1:role/r" awsRoleAccessKeyId="AKIA"`), newWorld().options())
	if ps := problems(t, err); len(ps) != 1 || !strings.Contains(ps[0], "awsRoleAccessKeyId and awsRoleSecretAccessKey go together") {
		t.Errorf("problems = %q", ps)
	}
	_, _, err = Build(iamClient("", "sasl.client.callback.handler.class", "com.example.Handler"), newWorld().options())
	if ps := problems(t, err); len(ps) != 1 || !strings.Contains(ps[0], `key "A.sasl.client.callback.handler.class" (line 4): cluster "A": sasl.client.callback.handler.class=com.example.Handler: custom Java classes cannot be loaded`) {
		t.Errorf("problems = %q", ps)
	}

	w := newWorld()
	c := newClient("sasl.mechanism", "AWS_MSK_IAM", "sasl.jaas.config", iamModule+` required awsDebugCreds=true awsMaxRetries="7" awsRoleSessionName="s";`)
	m, ws := build(t, c, w.options())
	want := []string{
		"sasl.client.callback.handler.class is not set: Java clients need " + iamClientHandler,
		"option awsMaxRetries has no effect: the AWS SDK retries credential requests itself",
		"the awsRole*/awsStsRegion options have no effect without awsRoleArn",
		"awsDebugCreds=true logs where each authentication's credentials came from (never the keys)",
	}
	got := warnings(ws)
	if len(got) != len(want) {
		t.Fatalf("warnings = %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want %q", i, got[i], want[i])
		}
	}
	first(t, m, mskHost)
	if log := w.log.String(); !strings.Contains(log, `msg="AWS credentials for AWS_MSK_IAM" component=saslconf cluster=A mechanism=AWS_MSK_IAM source=EnvConfigCredentials temporary=false`) || strings.Contains(log, "AKIAENVKEY") || strings.Contains(log, "env-secret") {
		t.Errorf("log = %q", log)
	}
}
