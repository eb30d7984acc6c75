package config

import "testing"

// TestSharedSettings: the digest changes with what nodes of a flow must
// agree on, and not with how a node connects.
func TestSharedSettings(t *testing.T) {
	base := "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n"
	digest := func(extra string) string {
		t.Helper()
		cfg, err := Parse("t.properties", []byte(base+extra), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Flows[0].SharedSettings()
	}
	same := digest("")
	if got := digest("A.bootstrap.servers = a2:9092\nA.security.protocol = PLAINTEXT\n"); got != same {
		t.Errorf("connection settings changed the digest: %s, want %s", got, same)
	}
	for _, extra := range []string{
		"topics = orders\n",
		"topics.exclude = tmp.*\n",
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n",
		"replication.policy.separator = _\n",
		"B.exactly.once.source.support = enabled\n",
	} {
		if digest(extra) == same {
			t.Errorf("%q left the digest as it was", extra)
		}
	}
}
