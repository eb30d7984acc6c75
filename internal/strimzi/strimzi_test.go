package strimzi

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strait/internal/config"
	"strait/internal/kafkaclient"
	"strait/internal/kafkatest/certs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// expectation is what a testdata resource must convert to, beyond its golden
// files: the golden files show the text, these say what it must mean.
type expectation struct {
	complete bool     // no unmapped field
	flows    []string // the enabled flows Strait loads
	unmapped []string // paths (or path prefixes) that must be reported unmapped
	check    func(t *testing.T, cfg *config.Config)
}

var expectations = map[string]expectation{
	"active-passive-v1beta2": {complete: true, flows: []string{"eu-west1->eu-north1"}, check: func(t *testing.T, cfg *config.Config) {
		f := flowOf(t, cfg, "eu-west1->eu-north1")
		wantList(t, "topics", f.Topics, ".*")
		wantList(t, "groups", f.Groups, ".*")
		want(t, "sync.group.offsets.enabled", f.SyncGroupOffsetsEnabled, true)
		want(t, "offset-syncs.topic.location", f.OffsetSyncsTopicLocation, "target")
		want(t, "replication.factor", f.ReplicationFactor, -1)
		want(t, "heartbeats (a heartbeatConnector)", f.EmitHeartbeatsEnabled, true)
		want(t, "tasks.max (not written: Strait has no tasks)", f.TasksMax, 1)
		want(t, "source protocol", cfg.Cluster["eu-west1"].SecurityProtocol, "SSL")
		wantProp(t, f.SourceConsumer, "ssl.truststore.type", "PEM")
		wantProp(t, f.TargetProducer, "ssl.truststore.type", "PEM")
	}},
	"active-passive-v1": {complete: true, flows: []string{"eu-west1->eu-north1"}, check: func(t *testing.T, cfg *config.Config) {
		f := flowOf(t, cfg, "eu-west1->eu-north1")
		want(t, "sync.group.offsets.enabled", f.SyncGroupOffsetsEnabled, true)
		want(t, "heartbeats (v1 has no heartbeat connector)", f.EmitHeartbeatsEnabled, false)
		want(t, "target protocol", cfg.Cluster["eu-north1"].SecurityProtocol, "SSL")
	}},
	"active-active-v1beta2": {complete: true, flows: []string{"eu-west1->eu-north1", "eu-north1->eu-west1"}, check: activeActive},
	"active-active-v1":      {complete: true, flows: []string{"eu-west1->eu-north1", "eu-north1->eu-west1"}, check: activeActive},
	"tls-scram-v1": {complete: true, flows: []string{"primary->dr"}, check: func(t *testing.T, cfg *config.Config) {
		f := flowOf(t, cfg, "primary->dr")
		wantList(t, "topics", f.Topics, `orders\..*|payments`)
		wantList(t, "topics.exclude", f.TopicsExclude, `orders\.internal-.*`)
		wantList(t, "groups", f.Groups, "billing-.*")
		wantList(t, "groups.exclude", f.GroupsExclude, "billing-test-.*")
		want(t, "policy", f.Policy.Class, config.IdentityPolicyClass)
		want(t, "source protocol", cfg.Cluster["primary"].SecurityProtocol, "SASL_SSL")
		want(t, "target protocol", cfg.Cluster["dr"].SecurityProtocol, "SASL_SSL")
		wantProp(t, f.SourceConsumer, "sasl.mechanism", "SCRAM-SHA-512")
		wantProp(t, f.SourceConsumer, "fetch.max.bytes", "52428800")
		wantProp(t, f.TargetProducer, "sasl.mechanism", "SCRAM-SHA-256")
		wantProp(t, f.TargetProducer, "compression.type", "zstd")
		wantProp(t, f.TargetProducer, "ssl.endpoint.identification.algorithm", "")
		// Two trusted CAs: both files' contents, in order.
		p, _ := f.SourceConsumer.Prop("ssl.truststore.certificates")
		if got := p.Value.Reveal(); got != strings.TrimSpace(secretContent("primary-cluster-ca-cert", "ca.crt")+"\n"+secretContent("primary-next-ca", "ca.crt")) {
			t.Errorf("ssl.truststore.certificates resolves to %q", got)
		}
		p, _ = f.SourceConsumer.Prop("sasl.jaas.config")
		if got := p.Value.Reveal(); !strings.Contains(got, `username="mm2-primary"`) || !strings.Contains(got, `password="`+secretContent("mm2-primary", "password")+`"`) {
			t.Errorf("sasl.jaas.config resolves to %q", got)
		}
	}},
	"oauth-plain-mtls-v1beta2": {complete: true, flows: []string{"cloud->central", "edge->central"}, check: func(t *testing.T, cfg *config.Config) {
		cloud := flowOf(t, cfg, "cloud->central")
		want(t, "cloud protocol", cfg.Cluster["cloud"].SecurityProtocol, "SASL_SSL")
		wantProp(t, cloud.SourceConsumer, "sasl.mechanism", "OAUTHBEARER")
		wantProp(t, cloud.SourceConsumer, "sasl.oauthbearer.token.endpoint.url", "https://sso.example.com/realms/kafka/protocol/openid-connect/token")
		wantList(t, "cloud groups", cloud.Groups, ".*")
		edge := flowOf(t, cfg, "edge->central")
		want(t, "edge protocol", cfg.Cluster["edge"].SecurityProtocol, "SASL_PLAINTEXT")
		wantProp(t, edge.SourceConsumer, "sasl.mechanism", "PLAIN")
		// No checkpointConnector: no group is checkpointed.
		wantList(t, "edge groups", edge.Groups)
		want(t, "central protocol", cfg.Cluster["central"].SecurityProtocol, "SSL")
		wantProp(t, edge.TargetProducer, "ssl.keystore.type", "PEM")
		p, _ := edge.TargetProducer.Prop("ssl.keystore.key")
		if strings.TrimSpace(p.Value.Reveal()) != strings.TrimSpace(secretFileContent(t, "mm2-central", "user.key")) {
			t.Error("ssl.keystore.key does not resolve to the Secret's user.key")
		}
	}},
	"unmappable-v1beta2": {flows: []string{"a->b"}, unmapped: []string{
		"spec.resources", "spec.livenessProbe", "spec.readinessProbe", "spec.jvmOptions",
		"spec.jmxOptions", "spec.logging", "spec.metricsConfig", "spec.tracing", "spec.template", "spec.rack",
		"spec.externalConfiguration",
		"spec.clusters[0].authentication.audience", "spec.clusters[0].authentication.tlsTrustedCertificates",
		"spec.clusters[0].authentication.maxTokenExpirySeconds", "spec.clusters[0].config.ssl.truststore.location",
		"spec.clusters[1].confg",
		"spec.mirrors[0].sourceConnector.state", "spec.mirrors[0].sourceConnector.autoRestart",
		"spec.mirrors[0].sourceConnector.listOffsets", "spec.mirrors[0].sourceConnector.config.tasks.max",
		"spec.mirrors[0].checkpointConnector.pause", "spec.mirrors[0].checkpointConnector.config.offset-syncs.topic.location",
		"spec.mirrors[0].groupsPatern", "spec.mirrors[1].targetCluster",
	}, check: func(t *testing.T, cfg *config.Config) {
		f := flowOf(t, cfg, "a->b")
		want(t, "offset-syncs.topic.location (the source connector's)", f.OffsetSyncsTopicLocation, "source")
		want(t, "separator", f.Policy.Separator, "-")
		wantList(t, "topics.exclude (from topicsBlacklistPattern)", f.TopicsExclude, "test.*")
		wantProp(t, f.SourceConsumer, "max.poll.records", "1000")
	}},
	"unmappable-v1": {flows: []string{"source->target"}, unmapped: []string{
		"spec.target.authentication.config.sasl.login.callback.handler.class",
		"spec.mirrors[0].sourceCluster", "spec.mirrors[0].heartbeatConnector",
		"spec.mirrors[1].source.authentication.type", "spec.mirrors[1].checkpointConnector",
	}},
	"strimzi-v1beta2-kafka-mirror-maker-2":                           {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziExample},
	"strimzi-v1beta2-kafka-mirror-maker-2-tls":                       {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziTLS},
	"strimzi-v1beta2-kafka-mirror-maker-2-sync-groups":               {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziSyncGroups},
	"strimzi-v1beta2-kafka-mirror-maker-2-custom-replication-policy": {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziIdentity},
	"strimzi-v1beta2-security-scram-sha-512-auth":                    {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziSCRAM},
	"strimzi-v1beta2-security-tls-auth":                              {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziMTLS},
	"strimzi-v1-kafka-mirror-maker-2":                                {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziExample},
	"strimzi-v1-kafka-mirror-maker-2-tls":                            {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziTLS},
	"strimzi-v1-kafka-mirror-maker-2-sync-groups":                    {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziSyncGroups},
	"strimzi-v1-kafka-mirror-maker-2-custom-replication-policy":      {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziIdentity},
	"strimzi-v1-security-scram-sha-512-auth":                         {complete: true, flows: []string{"cluster-a->cluster-b"}, check: strimziSCRAM},
	// Strimzi's own v1 example has a checkpoint connector and no source
	// connector, so it replicates nothing: there is no flow to convert.
	"strimzi-v1-security-tls-auth": {unmapped: []string{"spec.mirrors[0].checkpointConnector"}},
}

func activeActive(t *testing.T, cfg *config.Config) {
	for _, pair := range [][2]string{{"eu-west1", "eu-north1"}, {"eu-north1", "eu-west1"}} {
		f := flowOf(t, cfg, pair[0]+"->"+pair[1])
		wantList(t, f.Name()+" topics", f.Topics, "orders.*", "payments.*")
		// A backslash in the YAML pattern survives the properties escaping.
		wantList(t, f.Name()+" topics.exclude", f.TopicsExclude, pair[1]+`\..*`)
		want(t, f.Name()+" replication.factor", f.ReplicationFactor, 3)
		want(t, f.Name()+" sync.group.offsets.enabled", f.SyncGroupOffsetsEnabled, true)
		want(t, f.Name()+" policy", f.Policy.Class, config.DefaultPolicyClass)
	}
}

func strimziExample(t *testing.T, cfg *config.Config) {
	f := flowOf(t, cfg, "cluster-a->cluster-b")
	wantList(t, "topics", f.Topics, ".*")
	want(t, "replication.factor", f.ReplicationFactor, -1)
	want(t, "sync.topic.acls.enabled", f.SyncTopicACLsEnabled, false)
	want(t, "heartbeats", f.EmitHeartbeatsEnabled, false)
	want(t, "target protocol", cfg.Cluster["cluster-b"].SecurityProtocol, "PLAINTEXT")
}

func strimziTLS(t *testing.T, cfg *config.Config) {
	f := flowOf(t, cfg, "cluster-a->cluster-b")
	want(t, "source protocol", cfg.Cluster["cluster-a"].SecurityProtocol, "SSL")
	want(t, "target protocol", cfg.Cluster["cluster-b"].SecurityProtocol, "SSL")
	wantProp(t, f.SourceConsumer, "ssl.truststore.type", "PEM")
	wantProp(t, f.TargetProducer, "ssl.truststore.type", "PEM")
}

func strimziSyncGroups(t *testing.T, cfg *config.Config) {
	f := flowOf(t, cfg, "cluster-a->cluster-b")
	want(t, "sync.group.offsets.enabled", f.SyncGroupOffsetsEnabled, true)
	want(t, "offset.lag.max", f.OffsetLagMax, int64(100))
}

func strimziIdentity(t *testing.T, cfg *config.Config) {
	want(t, "policy", flowOf(t, cfg, "cluster-a->cluster-b").Policy.Class, config.IdentityPolicyClass)
}

func strimziSCRAM(t *testing.T, cfg *config.Config) {
	f := flowOf(t, cfg, "cluster-a->cluster-b")
	want(t, "source protocol", cfg.Cluster["cluster-a"].SecurityProtocol, "SASL_SSL")
	wantProp(t, f.SourceConsumer, "sasl.mechanism", "SCRAM-SHA-512")
	wantProp(t, f.TargetProducer, "sasl.mechanism", "SCRAM-SHA-512")
}

func strimziMTLS(t *testing.T, cfg *config.Config) {
	f := flowOf(t, cfg, "cluster-a->cluster-b")
	want(t, "source protocol", cfg.Cluster["cluster-a"].SecurityProtocol, "SSL")
	wantProp(t, f.SourceConsumer, "ssl.keystore.type", "PEM")
}

// TestGolden converts every testdata/*.yaml, compares the properties and the
// findings with the golden files, and loads the properties with Strait's
// own config loader and client planner: the output is a configuration
// `strait run` accepts, and it means what the resource meant.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	seen := map[string]bool{}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			exp, ok := expectations[name]
			if !ok {
				t.Fatalf("no expectation for testdata/%s.yaml: add one", name)
			}
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(filepath.Base(in), data, Options{})
			findings := strings.Join(res.Lines(), "\n") + "\n"
			golden(t, "testdata/"+name+".unmapped.txt", findings)
			if len(exp.flows) == 0 {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("Convert = %v, want an input error (nothing to convert)", err)
				}
				golden(t, "testdata/"+name+".properties", "# not converted: "+err.Error()+"\n")
			} else {
				if err != nil {
					t.Fatal(err)
				}
				golden(t, "testdata/"+name+".properties", res.Properties)
			}
			if res.Complete() != exp.complete {
				t.Errorf("Complete() = %v, want %v; findings:\n%s", res.Complete(), exp.complete, findings)
			}
			for _, p := range exp.unmapped {
				if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Kind == Unmapped && strings.HasPrefix(f.Path, p) }) {
					t.Errorf("%s is not reported unmapped; findings:\n%s", p, findings)
				}
			}
			if len(exp.flows) == 0 {
				return
			}
			cfg := loadWithSecrets(t, data)
			// What the import writes, check accepts without a warning
			// about a key the import chose (tasks.max had one).
			for _, w := range cfg.Warnings {
				if strings.Contains(w.String(), "tasks.max") {
					t.Errorf("the imported file gets a warning: %s", w)
				}
			}
			var flows []string
			for _, f := range cfg.Flows {
				if f.Enabled {
					flows = append(flows, f.Name())
				}
			}
			if !slices.Equal(flows, exp.flows) {
				t.Errorf("enabled flows %v, want %v", flows, exp.flows)
			}
			if exp.check != nil {
				exp.check(t, cfg)
			}
		})
	}
	for name := range expectations {
		if !seen[name] {
			t.Errorf("expectation %s has no testdata/%s.yaml", name, name)
		}
	}
}

// loadWithSecrets converts data again with the Secrets in a directory of
// the test's own, filled with real certificates, keys and passwords, and
// loads the result as `strait run` does (config.Load and kafkaclient.NewPlan,
// which reads the stores).
func loadWithSecrets(t *testing.T, data []byte) *config.Config {
	t.Helper()
	dir := t.TempDir()
	res, err := Convert("resource.yaml", data, Options{SecretsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Secrets {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, k := range s.Keys {
			if err := os.WriteFile(filepath.Join(s.Dir, k), []byte(secretFileContent(t, s.Name, k)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(res.Properties), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.LoadOptions{})
	if err != nil {
		t.Fatalf("Strait does not accept the converted properties:\n%v\n%s", err, res.Properties)
	}
	if _, err := kafkaclient.NewPlan(cfg); err != nil {
		t.Fatalf("Strait cannot build clients from the converted properties:\n%v\n%s", err, res.Properties)
	}
	return cfg
}

var testCA, testLeaf = func() (*certs.Authority, *certs.Leaf) {
	ca, err := certs.NewAuthority("strimzi test CA")
	if err != nil {
		panic(err)
	}
	leaf, err := ca.Issue(certs.LeafOptions{CommonName: "mm2"})
	if err != nil {
		panic(err)
	}
	return ca, leaf
}()

// secretContent is what a test Secret's key holds that is not a
// certificate or key: a value unique to the Secret and key.
func secretContent(secret, key string) string {
	if strings.HasSuffix(key, ".crt") && strings.Contains(secret, "ca") {
		return string(testCA.PEM())
	}
	return "value-of-" + secret + "-" + key
}

func secretFileContent(t *testing.T, secret, key string) string {
	switch {
	case key == "user.crt":
		return string(testLeaf.ChainPEM())
	case key == "user.key":
		k, err := testLeaf.KeyPEM("")
		if err != nil {
			t.Fatal(err)
		}
		return string(k)
	}
	return secretContent(secret, key)
}

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func flowOf(t *testing.T, cfg *config.Config, name string) *config.Flow {
	t.Helper()
	for _, f := range cfg.Flows {
		if f.Name() == name {
			return f
		}
	}
	t.Fatalf("no flow %s", name)
	return nil
}

func want[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantProp(t *testing.T, c config.Client, key, value string) {
	t.Helper()
	p, ok := c.Prop(key)
	if !ok {
		t.Errorf("%s is not set", key)
		return
	}
	if got := p.Value.Reveal(); got != value {
		t.Errorf("%s = %q, want %q", key, got, value)
	}
}
