package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// secretsConfig holds secrets written inline and resolved through every
// provider.
const secretsConfig = base + providers + `A.security.protocol = SASL_SSL
A.sasl.mechanism = PLAIN
A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + plainSecret + `";
A.ssl.truststore.location = /etc/kafka/truststore.jks
A.ssl.truststore.password = ${file:/etc/strait/secrets.properties:truststore.password}
B.ssl.keystore.location = /etc/kafka/keystore.jks
B.ssl.keystore.password = ${dir:/run/secrets:keystore-password}
B.ssl.key.password = ${env:KAFKA_PASSWORD}
A->B.producer.override.sasl.oauthbearer.client.credentials.client.secret = ` + plainSecret + `
`

var allSecrets = []string{envSecret, fileSecret, dirSecret, plainSecret}

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range allSecrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s contains the secret %q:\n%s", what, sec, s)
		}
	}
}

// TestSecretRedaction checks that no secret value reaches fmt output,
// JSON, Describe or warnings.
func TestSecretRedaction(t *testing.T) {
	c := mustParse(t, secretsConfig)
	f := flowOf(t, c, "A->B")

	// The secrets are there, for the client builder.
	want := map[string]string{
		"sasl.jaas.config": plainSecret, "ssl.truststore.password": fileSecret,
	}
	for k, v := range want {
		if got, _ := f.SourceConsumer.Get(k); !strings.Contains(got, v) {
			t.Errorf("source consumer %s = %q, want it to contain %q", k, got, v)
		}
	}
	if got, _ := f.TargetProducer.Get("ssl.key.password"); got != envSecret {
		t.Errorf("target producer ssl.key.password = %q", got)
	}

	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for name, v := range map[string]any{
			"flow": *f, "source consumer": f.SourceConsumer, "target producer": f.TargetProducer,
			"cluster": *c.Cluster["A"], "props": f.SourceConsumer.Props,
		} {
			assertNoSecret(t, fmt.Sprintf("fmt %s of %s", verb, name), fmt.Sprintf(verb, v))
		}
	}
	j, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "JSON", string(j))

	var b bytes.Buffer
	c.Describe(&b)
	assertNoSecret(t, "Describe", b.String())
	if !strings.Contains(b.String(), "[redacted]") {
		t.Error("Describe shows no [redacted] value")
	}
	assertNoSecret(t, "warnings", warningsText(c))
}

// TestSecretsNotInErrors checks that error messages about a value resolved
// through a provider never show it.
func TestSecretsNotInErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"bad regex", "topics = ${env:STRAIT_BAD_REGEX}"},
		{"bad isolation level", "A.consumer.isolation.level = ${env:STRAIT_BAD_ISOLATION}"},
		{"bad bootstrap", "A.bootstrap.servers = ${env:STRAIT_BAD_BOOTSTRAP}"},
		{"bad integer", "replication.factor = ${env:KAFKA_PASSWORD}"},
		{"bad boolean", "A->B.sync.group.offsets.enabled = ${env:KAFKA_PASSWORD}"},
		{"bad enum", "offset-syncs.topic.location = ${env:KAFKA_PASSWORD}"},
		{"bad policy", "replication.policy.class = ${env:KAFKA_PASSWORD}"},
		{"bad security protocol", "B.security.protocol = ${env:KAFKA_PASSWORD}"},
		{"missing trust store", "A.ssl.truststore.location = ${env:KAFKA_PASSWORD}"},
		{"bad throttle", "strait.throttle.bytes.per.second = ${env:KAFKA_PASSWORD}"},
		{"separator with spaces", "replication.policy.separator = ${env:KAFKA_PASSWORD} "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, base+providers+tt.line+"\n")
			if err == nil && !strings.Contains(warningsText(c), "line 9") {
				t.Fatal("no error and no warning; the test checks nothing")
			}
			if err != nil {
				assertNoSecret(t, "error", err.Error())
			}
			assertNoSecret(t, "warnings", warningsText(c))
			var b bytes.Buffer
			c.Describe(&b)
			assertNoSecret(t, "Describe", b.String())
		})
	}
}
