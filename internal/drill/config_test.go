package drill

import (
	"strings"
	"testing"

	"strait/internal/config"
)

func TestConfigureKeepsConnectionsAndOwnsItsFlows(t *testing.T) {
	in := `clusters = A, B, C
config.providers = env
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
A.bootstrap.servers = a:9092
A.security.protocol = SASL_SSL
A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${env:PW}";
B.bootstrap.servers = b:9092
C.bootstrap.servers = c:9092
A->B.enabled = true
A->B.topics = orders.*
topics = .*
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
`
	got, err := Configure([]byte(in), "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{
		"drill-A.bootstrap.servers = a:9092", "drill-A.security.protocol = SASL_SSL", `password="${env:PW}"`,
		"drill-B.bootstrap.servers = b:9092", "drill-A->drill-B.enabled = true", "drill-B->drill-A.enabled = true",
		"topics = strait-drill-.*", "replication.factor = 1",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	for _, unwanted := range []string{"C.bootstrap", "A->B", "orders"} {
		if strings.Contains(s, unwanted) {
			t.Errorf("%q kept in\n%s", unwanted, s)
		}
	}
	cfg, err := config.Parse("drill.properties", got, config.LoadOptions{Env: func(string) (string, bool) { return "pw", true }})
	if err != nil {
		t.Fatalf("the drill's configuration does not parse: %v\n%s", err, s)
	}
	if len(cfg.EnabledFlows()) != 2 {
		t.Fatalf("flows %v", cfg.EnabledFlows())
	}
	if _, err := Configure([]byte(in), "A", "D"); err == nil || !strings.Contains(err.Error(), "do not include D") {
		t.Fatalf("an unknown alias: %v", err)
	}
}
