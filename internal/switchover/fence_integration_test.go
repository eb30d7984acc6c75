//go:build integration

package switchover_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/dr"
	"strait/internal/flowconn"
	"strait/internal/kafkaclient"
	"strait/internal/kafkatest"
	"strait/internal/switchover"
)

var env *kafkatest.Env

// The clusters run KRaft's StandardAuthorizer: the fence is ACLs.
func TestMain(m *testing.M) { os.Exit(kafkatest.RunWith(m, kafkatest.Authorized(2), &env)) }

// TestFencedFailoverAndFailback is the drill of a planned switch, with the
// source reachable and fenced, and Apache Kafka's Java consumer as the
// application: it reads A, --fence-source stops the application's
// producer (a SASL user) from writing to A, the gate waits for the copy,
// the group moves exactly, and the consumer reads on B exactly what is
// written there; a failback from a cluster with another id is refused,
// changing nothing; the real failback lifts the fence, and the consumer
// reads on A exactly what the producer writes there again.
func TestFencedFailoverAndFailback(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "fenced")
	group := topic + "-g"
	a.CreateTopic(t, topic, 1, nil)
	sec := env.Security
	user := "User:" + sec.Plain.User
	acl := kadm.NewACLs().Topics(topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite, kadm.OpDescribe).Allow(user).AllowHosts()
	if _, err := a.Admin(t).CreateACLs(t.Context(), acl); err != nil {
		t.Fatal(err)
	}
	app := a.Client(t, kgo.SeedBrokers(a.ListenerSeeds(t, kafkatest.ListenerSASLPlaintext)...),
		kgo.SASL(plain.Auth{User: sec.Plain.User, Pass: sec.Plain.Password}.AsMechanism()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(2), kgo.RecordDeliveryTimeout(10*time.Second))
	write := func(n int) error {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v-%d", i)})
		}
		return app.ProduceSync(t.Context(), recs...).FirstErr()
	}
	if err := write(100); err != nil {
		t.Fatalf("the application writes to A before the fence: %v", err)
	}
	onA := env.StartDrillConsumer(t, a, group, topic, 5*time.Second)
	onA.Wait(t, 2*time.Minute)
	if n := len(onA.Records()); n != 100 {
		t.Fatalf("the consumer read %d records on A, want 100", n)
	}

	props := env.MM2Properties(fmt.Sprintf("B->A.enabled = true\nreplication.policy.class = IdentityReplicationPolicy\ntopics = %s\ngroups = %s\nemit.checkpoints.interval.seconds = 1", topic, group))
	cfg, err := config.Parse("fenced.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &kafkatest.SyncBuffer{}
	node := daemon.New(cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), ShutdownTimeout: 10 * time.Second})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("node: %v\n%s", err, logs)
		}
	}()
	kafkatest.Eventually(t, time.Minute, func() error {
		if n := b.EndOffsets(t, topic, kgo.ReadCommitted())[0]; n < 100 {
			return fmt.Errorf("B holds %d of 100", n)
		}
		return nil
	})

	plan, err := kafkaclient.NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	open := func(from, to string) *flowconn.Conn {
		c, err := flowconn.Open(t.Context(), cfg, plan.Flow(from, to), "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	var out bytes.Buffer
	only := regexp.MustCompile("^" + regexp.QuoteMeta(group) + "$")
	err = switchover.Failover(t.Context(), open("A", "B"), switchover.Options{
		Groups: only, Fence: true, Execute: true, Report: t.TempDir() + "/failover.json",
		GateTimeout: time.Minute, StopTimeout: time.Minute, SourceTimeout: 10 * time.Second, Out: &out, Log: &out,
	})
	if err != nil {
		t.Fatalf("failover: %v\n%s", err, out.String())
	}
	t.Logf("failover:\n%s", out.String())
	if err := write(1); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("the application wrote to A after the fence: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if got := groupAt(t, b, group, topic); got != 100 {
		t.Errorf("group on B at %d, want 100", got)
	}
	// The consumer on B reads exactly what is written there.
	onB := env.StartDrillConsumer(t, b, group, topic, 8*time.Second)
	bApp := b.Client(t)
	for i := range 20 {
		if err := bApp.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "b-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	onB.Wait(t, 2*time.Minute)
	if got := values(onB.Records()); got != "b-0..b-19" {
		t.Errorf("the consumer read on B: %s, want b-0..b-19", got)
	}

	// A failback from a cluster with another id changes nothing.
	states, _, err := dr.Read(t.Context(), b.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()))
	if err != nil {
		t.Fatal(err)
	}
	st := states["A->B"]
	real := st.SourceClusterID
	st.SourceClusterID = "another-cluster"
	manual := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := dr.Write(t.Context(), manual, st); err != nil {
		t.Fatal(err)
	}
	err = switchover.Failback(t.Context(), open("A", "B"), open("B", "A"), switchover.FailbackOptions{
		Groups: only, Execute: true, GateTimeout: time.Minute, SourceTimeout: 10 * time.Second, Out: &out, Log: &out,
	})
	var refused switchover.Refusal
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "came back with cluster id "+real) {
		t.Fatalf("failback from another cluster: %v", err)
	}
	if err := write(1); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("the refused failback lifted the fence: %v", err)
	}
	st.SourceClusterID = real
	if err := dr.Write(t.Context(), manual, st); err != nil {
		t.Fatal(err)
	}

	out.Reset()
	err = switchover.Failback(t.Context(), open("A", "B"), open("B", "A"), switchover.FailbackOptions{
		Groups: only, Execute: true, Report: t.TempDir() + "/failback.json", GateTimeout: time.Minute, SourceTimeout: 10 * time.Second, Out: &out, Log: &out,
	})
	if err != nil {
		t.Fatalf("failback: %v\n%s", err, out.String())
	}
	// On A, after the 100 records read there (the fence refused the
	// writes tried since) and the copies of B's 20 that B->A made: 120.
	if got := groupAt(t, a, group, topic); got != 120 {
		t.Errorf("group on A at %d after the failback, want 120", got)
	}
	onA2 := env.StartDrillConsumer(t, a, group, topic, 8*time.Second)
	if err := write(10); err != nil {
		t.Errorf("the application cannot write to A after the failback: %v", err)
	}
	onA2.Wait(t, 2*time.Minute)
	if got := values(onA2.Records()); got != "v-0..v-9" {
		t.Errorf("the consumer read on A after the failback: %s, want v-0..v-9", got)
	}
	// A second failback has no failover to undo.
	err = switchover.Failback(t.Context(), open("A", "B"), open("B", "A"), switchover.FailbackOptions{Execute: true, SourceTimeout: 10 * time.Second, Out: &out, Log: &out})
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "failback before failover") {
		t.Errorf("failback without a failover: %v", err)
	}
}

func groupAt(t *testing.T, c *kafkatest.Cluster, group, topic string) int64 {
	t.Helper()
	resps, err := c.Admin(t).FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := resps.Lookup(topic, 0)
	if !ok {
		return -1
	}
	return o.At
}

// values summarises what a consumer read as "first..last" when it is one
// run of a prefix's numbers in order, and lists it otherwise.
func values(recs []kafkatest.Consumed) string {
	var vs []string
	for _, r := range recs {
		vs = append(vs, r.Value)
	}
	if len(vs) == 0 {
		return "nothing"
	}
	prefix, _, _ := strings.Cut(vs[0], "-")
	for i, v := range vs {
		if v != fmt.Sprintf("%s-%d", prefix, i) {
			return strings.Join(vs, ",")
		}
	}
	return vs[0] + ".." + vs[len(vs)-1]
}
