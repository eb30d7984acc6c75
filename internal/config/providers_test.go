package config

import (
	"strings"
	"testing"
)

const providers = `config.providers = file, env, dir
config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider
`

// TestProviders resolves ${env:...}, ${file:...} and ${dir:...} through the
// injected environment and file system.
func TestProviders(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		role        func(*Flow) Client
		key         string
		want        string
		wantSecret  bool
		wantWarning string
	}{
		{
			name: "env",
			src:  base + providers + "A.ssl.truststore.password = ${env:KAFKA_PASSWORD}\n",
			role: sourceConsumer, key: "ssl.truststore.password", want: envSecret, wantSecret: true,
		},
		{
			name: "env value that is not a secret key is still secret",
			src:  base + providers + "A.consumer.client.rack = ${env:STRAIT_TOPICS}\n",
			role: sourceConsumer, key: "client.rack", want: "orders.*", wantSecret: true,
		},
		{
			name: "env set to the empty string",
			src:  base + providers + "A.consumer.client.rack = ${env:STRAIT_EMPTY}\n",
			role: sourceConsumer, key: "client.rack", want: "", wantSecret: true,
		},
		{
			name: "file key",
			src:  base + providers + "B.ssl.truststore.password = ${file:/etc/strait/secrets.properties:truststore.password}\n",
			role: targetAdmin, key: "ssl.truststore.password", want: fileSecret, wantSecret: true,
		},
		{
			name: "file key with a continued line",
			src:  base + providers + "B.sasl.jaas.config = ${file:/etc/strait/secrets.properties:sasl.jaas.config}\n",
			role: targetProducer, key: "sasl.jaas.config",
			want:       `org.apache.kafka.common.security.plain.PlainLoginModule required username="strait" password="` + fileSecret + `";`,
			wantSecret: true,
		},
		{
			name: "directory file, trimmed like any client value",
			src:  base + providers + "A.ssl.keystore.password = ${dir:/run/secrets:keystore-password}\n",
			role: sourceAdmin, key: "ssl.keystore.password", want: dirSecret, wantSecret: true,
		},
		{
			name: "references inside a longer value",
			src:  base + providers + "A.sasl.jaas.config = PlainLoginModule required username=\"u\" password=\"${env:KAFKA_PASSWORD}\";\n",
			role: sourceConsumer, key: "sasl.jaas.config", want: `PlainLoginModule required username="u" password="` + envSecret + `";`, wantSecret: true,
		},
		{
			name: "allowed.paths lets the file through",
			src: base + providers + "config.providers.file.param.allowed.paths = /etc/strait, /run/secrets\n" +
				"A.ssl.truststore.password = ${file:/etc/strait/secrets.properties:truststore.password}\n",
			role: sourceConsumer, key: "ssl.truststore.password", want: fileSecret, wantSecret: true,
		},
		{
			name: "allowlist.pattern lets the variable through",
			src:  base + providers + "config.providers.env.param.allowlist.pattern = KAFKA_.*\nA.ssl.truststore.password = ${env:KAFKA_PASSWORD}\n",
			role: sourceConsumer, key: "ssl.truststore.password", want: envSecret, wantSecret: true,
		},
		{
			name: "a provider location resolves before the file check",
			src:  base + providers + "A.ssl.truststore.location = ${env:STRAIT_TRUSTSTORE_LOC}\n",
			role: sourceConsumer, key: "ssl.truststore.location", want: "/etc/kafka/truststore.jks", wantSecret: true,
		},
		{
			name: "an unknown provider parameter",
			src:  base + providers + "config.providers.env.param.allowed.paths = /etc\nA.ssl.truststore.password = ${env:KAFKA_PASSWORD}\n",
			role: sourceConsumer, key: "ssl.truststore.password", want: envSecret, wantSecret: true,
			wantWarning: `key "config.providers.env.param.allowed.paths" (line 9): EnvVarConfigProvider does not take the parameter "allowed.paths"; it is ignored`,
		},
		{
			name: "keys of an undeclared provider",
			src:  base + providers + "config.providers.vault.class = com.example.Vault\nA.ssl.truststore.password = ${env:KAFKA_PASSWORD}\n",
			role: sourceConsumer, key: "ssl.truststore.password", want: envSecret, wantSecret: true,
			wantWarning: `key "config.providers.vault.class" (line 9): config provider "vault" is not listed in config.providers, so this key has no effect: add it to config.providers`,
		},
		{
			name: "text that only looks like a reference is kept",
			src:  base + providers + "A.consumer.client.id = ${no-colon}\n",
			role: sourceConsumer, key: "client.id", want: "${no-colon}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			p, ok := tt.role(flowOf(t, c, "A->B")).Prop(tt.key)
			if !ok {
				t.Fatalf("%s is not set", tt.key)
			}
			if p.Value.Reveal() != tt.want || p.Secret != tt.wantSecret {
				t.Errorf("%s = %q (secret %v), want %q (secret %v)", tt.key, p.Value.Reveal(), p.Secret, tt.want, tt.wantSecret)
			}
			if tt.wantWarning != "" && !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant one containing:\n%s", warningsText(c), tt.wantWarning)
			}
		})
	}
}

// TestProviderErrorsContinue checks that one bad reference does not hide the
// other problems of the file.
func TestProviderErrorsContinue(t *testing.T) {
	src := base + providers + "A.ssl.truststore.password = ${env:NOT_SET}\nB.ssl.truststore.password = ${file:/nope:x}\nreplication.factor = 0\n"
	_, err := parse(t, src)
	errs := asErrors(t, err)
	if len(errs) != 3 {
		t.Fatalf("got %d errors, want 3:\n%v", len(errs), err)
	}
	for i, line := range []int{9, 10, 11} {
		if errs[i].Origin.Line != line {
			t.Errorf("error %d on line %d, want %d: %v", i, errs[i].Origin.Line, line, errs[i])
		}
	}
}
