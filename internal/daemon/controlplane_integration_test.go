//go:build integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/config"
	"strait/internal/kafkatest"
)

var env *kafkatest.Env

// This package's clusters run KRaft's StandardAuthorizer with SASL users (kafkatest.Authorized).
func TestMain(m *testing.M) { os.Exit(kafkatest.RunWith(m, kafkatest.Authorized(2), &env)) }

// A target that refuses Strait three single items: growing one topic (no ALTER on it),
// changing another's config (no ALTER_CONFIGS on it) and creating any ACL (no ALTER on the
// cluster). Each refusal is a control problem in the status, naming its item, and a line
// in the log, while the rest keeps syncing: the third topic is created, grown and gets its
// config change, and records copy into its new partitions.
func TestTargetRefusalsAreProblemsWhileTheRestSyncs(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	base := kafkatest.Name(t, "cp")
	ok, fixed, cfg := base+"-ok", base+"-fixed", base+"-cfg"
	for _, topic := range []string{ok, fixed, cfg} {
		a.CreateTopic(t, topic, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")})
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = srcAdm.DeleteTopics(ctx, ok, fixed, cfg)
		_, _ = dstAdm.DeleteTopics(ctx, "A."+ok, "A."+fixed, "A."+cfg)
	})

	sec := env.Security
	strait := "User:" + sec.Plain.User
	grant(t, dstAdm, kadm.NewACLs().Topics("*").Operations(kadm.OpAll).Allow(strait).AllowHosts())
	grant(t, dstAdm, kadm.NewACLs().Groups("*").Operations(kadm.OpAll).Allow(strait).AllowHosts())
	grant(t, dstAdm, kadm.NewACLs().Clusters().
		Operations(kadm.OpDescribe, kadm.OpCreate, kadm.OpIdempotentWrite, kadm.OpDescribeConfigs).
		Allow(strait).AllowHosts())
	grant(t, dstAdm, kadm.NewACLs().Topics("A."+fixed).Operations(kadm.OpAlter).Deny(strait).DenyHosts())
	grant(t, dstAdm, kadm.NewACLs().Topics("A."+cfg).Operations(kadm.OpAlterConfigs).Deny(strait).DenyHosts())
	reader := "User:reader-" + base
	grant(t, srcAdm, kadm.NewACLs().Topics(ok).Operations(kadm.OpRead).Allow(reader).AllowHosts())

	props := fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
B.security.protocol = SASL_PLAINTEXT
B.sasl.mechanism = PLAIN
B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s";
A->B.enabled = true
A->B.topics = %s-.*
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
sync.topic.configs.interval.seconds = 1
sync.topic.acls.interval.seconds = 1
`, a.Bootstrap, strings.Join(b.ListenerSeeds(t, kafkatest.ListenerSASLPlaintext), ","),
		sec.Plain.User, sec.Plain.Password, base)
	conf, err := config.Parse("controlplane.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &kafkatest.SyncBuffer{}
	d, stop := runDaemonWith(t, conf, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})

	src := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTo(t, src, ok, 0, 100)
	waitFor(t, "the copy of the first records", func() error {
		return endsAtLeast(t, dstAdm, "A."+ok, map[int32]int64{0: 100})
	})

	// The source grows two topics and changes two topics' retention.
	if _, err := srcAdm.CreatePartitions(t.Context(), 2, ok, fixed); err != nil {
		t.Fatal(err)
	}
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("7200000")}}
	if _, err := srcAdm.AlterTopicConfigs(t.Context(), alter, ok, cfg); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the allowed changes on the target", func() error {
		if err := partitionsOf(t, dstAdm, "A."+ok, 3); err != nil {
			return err
		}
		return retentionOf(t, dstAdm, "A."+ok, "7200000")
	})
	src = a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())) // knows the new partitions
	produceTo(t, src, ok, 1, 50)
	produceTo(t, src, ok, 2, 50)
	waitFor(t, "the copy into the grown partitions", func() error {
		return endsAtLeast(t, dstAdm, "A."+ok, map[int32]int64{0: 100, 1: 50, 2: 50})
	})

	type want struct{ kind, item, err string }
	wants := []want{
		{"topic", "A." + fixed, "TOPIC_AUTHORIZATION_FAILED"},
		{"config", "A." + cfg, "TOPIC_AUTHORIZATION_FAILED"},
		{"acl", "A." + ok, "CLUSTER_AUTHORIZATION_FAILED"},
	}
	waitFor(t, "a problem per refused item", func() error {
		st := d.Status()
		if len(st.Flows) == 0 {
			return errors.New("no flow in the status")
		}
		var flow *FlowStatus
		for i := range st.Flows {
			if st.Flows[i].Name == "A->B" {
				flow = &st.Flows[i]
			}
		}
		if flow == nil {
			return fmt.Errorf("no flow A->B in %+v", st.Flows)
		}
		for _, w := range wants {
			if !slices.ContainsFunc(flow.Problems, func(p ControlProblem) bool {
				return p.Kind == w.kind && strings.Contains(p.Item, w.item) && strings.Contains(p.Error, w.err)
			}) {
				return fmt.Errorf("no %s problem for %s with %s in %+v", w.kind, w.item, w.err, flow.Problems)
			}
		}
		for _, p := range flow.Problems {
			if strings.Contains(p.Item, "A."+ok) && p.Kind != "acl" {
				return fmt.Errorf("a problem for the topic that syncs: %+v", p)
			}
		}
		for _, p := range flow.Problems {
			t.Logf("problem: %+v", p)
		}
		return nil
	})
	for _, line := range []string{"A." + fixed, "A." + cfg, "ACL not copied to the target"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log does not name %q:\n%s", line, logs)
		}
	}

	// What was refused stayed as it was.
	if err := partitionsOf(t, dstAdm, "A."+fixed, 1); err != nil {
		t.Error(err)
	}
	if err := retentionOf(t, dstAdm, "A."+cfg, "3600000"); err != nil {
		t.Error(err)
	}
	if acl, err := dstAdm.DescribeACLs(t.Context(), kadm.NewACLs().Topics("A."+ok).
		Operations(kadm.OpAny).Allow(reader).AllowHosts()); err != nil || len(acl[0].Described) != 0 {
		t.Errorf("the target's ACLs for %s: %+v, %v; want none", reader, acl, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// grant creates the bindings b builds on adm's cluster and deletes them when the test ends.
func grant(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	b.ResourcePatternType(kadm.ACLPatternLiteral)
	results, err := adm.CreateACLs(t.Context(), b)
	if err == nil {
		for _, r := range results {
			err = errors.Join(err, r.Err)
		}
	}
	if err != nil {
		t.Fatalf("creating ACLs: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := adm.DeleteACLs(ctx, b); err != nil {
			t.Logf("deleting ACLs: %v", err)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	t.Logf("waiting for %s", what)
	kafkatest.Eventually(t, 60*time.Second, cond)
}

func produceTo(t *testing.T, cl *kgo.Client, topic string, partition int32, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: fmt.Appendf(nil, "%d-%d", partition, i)}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func endsAtLeast(t *testing.T, adm *kadm.Client, topic string, want map[int32]int64) error {
	ends, err := adm.ListEndOffsets(t.Context(), topic)
	if err != nil {
		return err
	}
	for p, n := range want {
		o, found := ends.Lookup(topic, p)
		if !found || o.Err != nil || o.Offset < n {
			return fmt.Errorf("%s[%d] ends at %+v, want at least %d", topic, p, o, n)
		}
	}
	return nil
}

func partitionsOf(t *testing.T, adm *kadm.Client, topic string, want int) error {
	td, err := adm.ListTopics(t.Context(), topic)
	if err != nil {
		return err
	}
	if got := len(td[topic].Partitions); got != want {
		return fmt.Errorf("%s has %d partitions, want %d", topic, got, want)
	}
	return nil
}

func retentionOf(t *testing.T, adm *kadm.Client, topic, want string) error {
	rc, err := adm.DescribeTopicConfigs(t.Context(), topic)
	if err != nil {
		return err
	}
	c, err := rc.On(topic, nil)
	if err != nil {
		return err
	}
	for _, e := range c.Configs {
		if e.Key == "retention.ms" {
			if e.MaybeValue() != want || e.Source != kmsg.ConfigSourceDynamicTopicConfig {
				return fmt.Errorf("%s has retention.ms %s (%v), want %s", topic, e.MaybeValue(), e.Source, want)
			}
			return nil
		}
	}
	return fmt.Errorf("%s has no retention.ms", topic)
}
