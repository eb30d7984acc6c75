//go:build integration

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/index"
	"strait/internal/kafkatest"
)

// TestGuideCommandLineReplicates runs `strait run` with the MM2 guide's
// command line,
//
//	--clusters SOURCE,TARGET --source-cluster-config source-cluster.properties
//	--target-cluster-config target-cluster.properties --whitelist REGEX --config mirror-maker.properties
//
// and the guide's three files from testdata/guide. Both clusters are on
// their SSL listener with client certificates, as the guide's files say.
// The per-cluster files change only in their bootstrap servers, store paths
// and passwords; mirror-maker.properties is used as written, its own
// SOURCE.* and TARGET.* placeholders (hosts that do not resolve, stores that
// do not exist) replaced by the per-cluster files. Records and group offsets
// arrive on the target; only the topic --whitelist names is taken up (the
// file says topics=.*); nothing fails; no store password shows.
//
// The guide's replication.factor=3 (and MM2's default of 3 for the internal
// topics) is more than the test bed's single broker holds, so the test
// creates those topics with one replica first, as an operator does where
// topics are not created automatically; the files stay as written.
func TestGuideCommandLineReplicates(t *testing.T) {
	sec := env.Security
	a, b := env.Clusters[0], env.Clusters[1]
	dir := t.TempDir()
	keyPassword := storePassword + "-key"
	for _, side := range []struct {
		name string
		c    *kafkatest.Cluster
		seed string // the guide's bootstrap servers
	}{
		{"source", a, "source-kafka-1:9093,source-kafka-2:9093"},
		{"target", b, "target-kafka-1:9093,target-kafka-2:9093"},
	} {
		text, err := os.ReadFile("testdata/guide/" + side.name + "-cluster.properties")
		if err != nil {
			t.Fatal(err)
		}
		keystore := sec.Keystore(t, sec.Client, kafkatest.StoreJKS, storePassword, keyPassword)
		truststore := sec.Truststore(t, kafkatest.StoreJKS, storePassword)
		out := strings.NewReplacer(
			side.seed, listener(t, side.c, kafkatest.ListenerSSL),
			"/etc/kafka/"+side.name+".truststore.jks", truststore,
			"/etc/kafka/"+side.name+".keystore.jks", keystore,
			"ssl.key.password=changeit", "ssl.key.password="+keyPassword,
			"changeit", storePassword,
		).Replace(string(text))
		if strings.Contains(out, "changeit") || strings.Contains(out, "/etc/kafka/") || strings.Contains(out, "kafka-1:9093") {
			t.Fatalf("testdata/guide/%s-cluster.properties is not the guide's any more:\n%s", side.name, out)
		}
		if err := os.WriteFile(filepath.Join(dir, side.name+"-cluster.properties"), []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mainFile, err := filepath.Abs("testdata/guide/mirror-maker.properties")
	if err != nil {
		t.Fatal(err)
	}

	topic := kafkatest.Name(t, "orders")
	skipped := kafkatest.Name(t, "audit")
	a.CreateTopic(t, topic, 3, nil)
	a.CreateTopic(t, skipped, 1, nil)
	policy := "compact"
	compact := map[string]*string{"cleanup.policy": &policy}
	ensureTopic(t, b, "SOURCE."+topic, 3, nil)
	ensureTopic(t, b, "heartbeats", 1, compact)
	ensureTopic(t, b, "SOURCE.heartbeats", 1, compact) // MM2 replicates heartbeats whatever topics says
	ensureTopic(t, b, "SOURCE.checkpoints.internal", 1, compact)
	ensureTopic(t, b, index.TopicName("SOURCE"), 1, compact)
	ensureTopic(t, a, "heartbeats", 1, compact) // TARGET->SOURCE heartbeats
	ensureTopic(t, a, "mm2-offset-syncs.TARGET.internal", 1, compact)

	w := &workload{topic: topic, partitions: 3}
	w.produce(t, producer(t, a), 3000)
	(&workload{topic: skipped, partitions: 1}).produce(t, producer(t, a), 10)
	group := topic + "-readers"
	commitGroup(t, a, group, topic, 400)

	p := startStrait(t, "run",
		"--clusters", "SOURCE,TARGET",
		"--source-cluster-config", filepath.Join(dir, "source-cluster.properties"),
		"--target-cluster-config", filepath.Join(dir, "target-cluster.properties"),
		"--whitelist", topic,
		"--config", mainFile)
	waitCopied(t, topic, "SOURCE."+topic, nil, 2*time.Minute)
	waitGroupSynced(t, b, group, "SOURCE."+topic, 400)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatalf("strait exited with %v after SIGTERM", err)
	}
	compare(t, topic, "SOURCE."+topic, kgo.ReadCommitted())

	out := p.out.String()
	if strings.Contains(out, skipped) {
		t.Errorf("Strait took up %s: --whitelist %s did not replace the file's topics=.*", skipped, topic)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("strait run logged an error")
	}
	for _, want := range []string{
		"flags read as keys of the configuration file", // the notice with the equivalent lines
		"SOURCE->TARGET.enabled = true",
		`key \"SOURCE.ssl.truststore.location\" (` + filepath.Join(dir, "source-cluster.properties") + `, line 7): replaces the value on line 12 of ` + mainFile,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("strait run output lacks %q", want)
		}
	}
	assertNoCanary(t, "strait run output", out, []string{storePassword, keyPassword})
}

// ensureTopic creates a topic unless it exists.
func ensureTopic(t *testing.T, c *kafkatest.Cluster, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := c.Admin(t).CreateTopic(t.Context(), partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("creating %s on %s: %v", name, c.Name, err)
	}
}
