package saslconf

import (
	"strings"
	"testing"
)

type opt struct{ k, v string }

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		module string
		flag   string
		opts   []opt
	}{
		{
			name:   "plain",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr3t";`,
			module: plainModule, flag: "required",
			opts: []opt{{"username", "alice"}, {"password", "s3cr3t"}},
		},
		{
			name:   "scram with token auth and unquoted words",
			in:     `org.apache.kafka.common.security.scram.ScramLoginModule required username=alice password="p w" tokenauth=true;`,
			module: scramModule, flag: "required",
			opts: []opt{{"username", "alice"}, {"password", "p w"}, {"tokenauth", "true"}},
		},
		{
			name:   "oauth without options, flag in upper case",
			in:     `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule REQUIRED ;`,
			module: oauthModule, flag: "required",
		},
		{
			name:   "oauth kafka 3 options",
			in:     `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" clientSecret="sec" scope="kafka offline" extension_logicalCluster="lkc-1";`,
			module: oauthModule, flag: "required",
			opts: []opt{{"clientId", "id"}, {"clientSecret", "sec"}, {"scope", "kafka offline"}, {"extension_logicalCluster", "lkc-1"}},
		},
		{
			name:   "msk iam",
			in:     `software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="prod" awsRoleArn="arn:aws:iam::123456789012:role/kafka";`,
			module: iamModule, flag: "required",
			opts: []opt{{"awsProfileName", "prod"}, {"awsRoleArn", "arn:aws:iam::123456789012:role/kafka"}},
		},
		{
			name: "kerberos over several lines with comments",
			in: "com.sun.security.auth.module.Krb5LoginModule required // keytab login\n" +
				"  useKeyTab=true storeKey=true /* the keytab */ keyTab=\"/etc/security/keytabs/kafka.keytab\"\n" +
				"  principal=\"kafka-client@EXAMPLE.COM\";",
			module: krb5Module, flag: "required",
			opts: []opt{{"useKeyTab", "true"}, {"storeKey", "true"}, {"keyTab", "/etc/security/keytabs/kafka.keytab"}, {"principal", "kafka-client@EXAMPLE.COM"}},
		},
		{
			name:   "event hubs connection string",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username="$ConnectionString" password="Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Ab+c/d=";`,
			module: plainModule, flag: "required",
			opts: []opt{{"username", "$ConnectionString"}, {"password", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Ab+c/d="}},
		},
		{
			name:   "unquoted dollar word",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username=$ConnectionString password="x";`,
			module: plainModule, flag: "required",
			opts: []opt{{"username", "$ConnectionString"}, {"password", "x"}},
		},
		{
			name:   "escapes",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule optional username="a\"b" password="c\\d\te\101\7\q";`,
			module: plainModule, flag: "optional",
			opts: []opt{{"username", `a"b`}, {"password", "c\\d\teA\x07q"}},
		},
		{
			name:   "single quotes hold double quotes",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule sufficient username='a"b' password='it';`,
			module: plainModule, flag: "sufficient",
			opts: []opt{{"username", `a"b`}, {"password", "it"}},
		},
		{
			name:   "quoted module, flag and key",
			in:     `"org.apache.kafka.common.security.plain.PlainLoginModule" "requisite" "username"=u password=p;`,
			module: plainModule, flag: "requisite",
			opts: []opt{{"username", "u"}, {"password", "p"}},
		},
		{
			name:   "last of a repeated key wins",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username=a username=b;`,
			module: plainModule, flag: "required",
			opts: []opt{{"username", "a"}, {"username", "b"}},
		},
		{
			name:   "words take digits, dots and dashes after the first letter",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username=user-1.2_x password=p;`,
			module: plainModule, flag: "required",
			opts: []opt{{"username", "user-1.2_x"}, {"password", "p"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parseJAAS(tt.in)
			if err != nil {
				t.Fatalf("parseJAAS: %v", err)
			}
			if e.Module != tt.module || e.Flag != tt.flag {
				t.Errorf("module, flag = %q, %q; want %q, %q", e.Module, e.Flag, tt.module, tt.flag)
			}
			var got []opt
			for _, o := range e.Options {
				got = append(got, opt{o.Key, o.Value.Reveal()})
			}
			if len(got) != len(tt.opts) {
				t.Fatalf("options = %q, want %q", got, tt.opts)
			}
			for i := range got {
				if got[i] != tt.opts[i] {
					t.Errorf("option %d = %q, want %q", i, got[i], tt.opts[i])
				}
			}
		})
	}
	e, _ := parseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required username=a username=b;`)
	if v, _ := e.get("username"); v != "b" {
		t.Errorf("get(username) = %q, want the last one, b", v)
	}
}

// TestParseJAASErrors checks each syntax error's message and position, and
// that no message quotes an option value.
func TestParseJAASErrors(t *testing.T) {
	const secret = "Hunter2Secret"
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "  ", "no login module"},
		{"comment only", "// nothing", "no login module"},
		{"no flag", "org.example.Module", "syntax error at character 19: expected the control flag"},
		{"bad flag", "org.example.Module mandatory;", `syntax error at character 20: invalid control flag "mandatory"`},
		{"no semicolon", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `"`, "not terminated by ';' (after option password)"},
		{"missing equals", `org.apache.kafka.common.security.plain.PlainLoginModule required username "` + secret + `";`, "syntax error at character 75: expected '=' after the option name that follows the control flag, found a quoted string"},
		{"unquoted value with a space", `org.apache.kafka.common.security.plain.PlainLoginModule required password=Hunter2 Secret;`, "expected '=' after the option name that follows option password, found ';'"},
		{"missing value", `org.apache.kafka.common.security.plain.PlainLoginModule required username=;`, "syntax error at character 75: expected the value of option username, found ';'"},
		{"numeric value", `org.apache.kafka.common.security.plain.PlainLoginModule required password=12` + secret + `;`, "character 75: the value of option password must be quoted"},
		{"unterminated quote", `org.apache.kafka.common.security.plain.PlainLoginModule required password="` + secret + `;`, "syntax error at character 75: the quoted string that starts here is not closed"},
		{"quote ended by a new line", "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"" + secret + "\n\";", "is not closed by \" before the end of the line"},
		{"trailing backslash", `org.apache.kafka.common.security.plain.PlainLoginModule required password="` + secret + `\`, "ends in a lone backslash"},
		{"comma between options", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u", password="` + secret + `";`, `syntax error at character 78: expected an option name or ';' after option username, found ','`},
		{"two modules", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `"; org.apache.kafka.common.security.scram.ScramLoginModule required;`,
			"2 login modules (org.apache.kafka.common.security.plain.PlainLoginModule, org.apache.kafka.common.security.scram.ScramLoginModule); a Kafka client takes exactly one"},
		{"bare password", secret, "expected the control flag"},
		{"a bare password is not named as a class", secret + " required; org.example.Module required;", "2 login modules ((a first word that is not a Java class name), org.example.Module)"},
		{"module is a number", "123 required;", "syntax error at character 1: expected a login module class name, found a number"},
		{"unquoted path starts a comment", `com.sun.security.auth.module.Krb5LoginModule required keyTab=/etc/krb5.keytab;`, "expected the value of option keyTab, found the end of the value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseJAAS(tt.in)
			if err == nil {
				t.Fatal("parseJAAS: no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
			for _, leak := range []string{secret, "Hunter2", "Secret"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q quotes the value %q", err, leak)
				}
			}
		})
	}
}
