//go:build integration

package topics

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/policy"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 2, &env)) }

// requestCounter counts the requests of one key a client writes.
type requestCounter struct {
	key int16
	mu  sync.Mutex
	n   int
}

func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == c.key && err == nil {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
}

func (c *requestCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// onlyPrefix selects the source topics of this test only.
func onlyPrefix(t *testing.T, prefix string) func(*Config) {
	return func(c *Config) {
		f, err := policy.NewFilter([]string{prefix + ".*"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Topics = f
	}
}

// deleteTopics deletes the test's topics on both clusters when it ends.
func deleteTopics(t *testing.T, src, dst *kadm.Client, prefix string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, adm := range []*kadm.Client{src, dst} {
			ts, err := adm.ListTopics(ctx)
			if err != nil {
				t.Logf("listing topics to delete: %v", err)
				continue
			}
			var names []string
			for _, n := range ts.Names() {
				if strings.HasPrefix(n, prefix) || strings.HasPrefix(n, "A."+prefix) {
					names = append(names, n)
				}
			}
			if _, err := adm.DeleteTopics(ctx, names...); err != nil {
				t.Logf("deleting topics: %v", err)
			}
		}
	})
}

// TestReconcileCreatesTopicsInBatchesOnKafka: Apache Kafka creates a pass's
// topics from few CreateTopics requests, each with its own partitions and
// configs, and fails one topic of a request (a name that collides with an
// existing topic) without failing the others.
func TestReconcileCreatesTopicsInBatchesOnKafka(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	ctx := t.Context()
	p := kafkatest.Name(t, "batch")
	deleteTopics(t, srcAdm, dstAdm, p)

	const plain = 250
	names := make([]string, plain)
	for i := range names {
		names[i] = fmt.Sprintf("%s-t%03d", p, i)
	}
	created, err := srcAdm.CreateTopics(ctx, 1, 1, nil, names...)
	if err == nil {
		err = created.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	hourly, compacted, collides := p+"-hourly", p+"-compacted", p+"-col_1"
	a.CreateTopic(t, hourly, 2, map[string]*string{"retention.ms": kadm.StringPtr("3600000")})
	a.CreateTopic(t, compacted, 3, map[string]*string{"retention.ms": kadm.StringPtr("7200000"), "cleanup.policy": kadm.StringPtr("compact")})
	a.CreateTopic(t, collides, 1, nil)
	// A.<p>-col.1 makes A.<p>-col_1 collide on the target ('.' and '_'
	// are the same to Kafka's metric names). Named like the remote topic
	// of a source topic <p>-col.1 that the source does not have, it is
	// also reported as the remote topic of a deleted source topic.
	b.CreateTopic(t, "A."+p+"-col.1", 1, nil)

	creates := &requestCounter{key: int16(kmsg.CreateTopics)}
	dst := b.Client(t, kgo.WithHooks(creates))
	r, logs := newReconciler(t, a.Client(t), dst, nil, onlyPrefix(t, p))
	start := time.Now()
	results, err := r.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one pass of %d topics took %v in %d CreateTopics requests", len(results), time.Since(start), creates.count())
	if n, want := creates.count(), (plain+3+99)/100; n > want {
		t.Errorf("sent %d CreateTopics requests, want at most %d", n, want)
	}
	if len(results) != plain+4 {
		t.Fatalf("got %d results, want %d", len(results), plain+4)
	}
	for _, res := range results {
		switch res.Source {
		case p + "-col.1":
			if res.Action != SourceDeleted || res.Err != nil || res.Remote != "A."+p+"-col.1" {
				t.Errorf("%s: %q (%v), want source-deleted", res.Source, res.Action, res.Err)
			}
		case collides:
			if res.Action != Failed || res.Err == nil || !strings.Contains(res.Err.Error(), `creating remote topic "A.`+collides+`" on the target: INVALID_TOPIC_EXCEPTION`) {
				t.Errorf("%s: %q (%v), want a failed creation", res.Source, res.Action, res.Err)
			}
		default:
			if res.Action != Created || res.Err != nil {
				t.Errorf("%s: %q (%v), want created", res.Source, res.Action, res.Err)
			}
		}
	}
	if n := strings.Count(logs.String(), `msg="created remote topic"`); n != plain+2 {
		t.Errorf("logged %d created topics, want %d", n, plain+2)
	}

	// The broker's metadata may trail the controller's for a moment.
	kafkatest.Eventually(t, 10*time.Second, func() error {
		ts, err := dstAdm.ListTopics(ctx)
		if err != nil {
			return err
		}
		for src, want := range map[string]int{names[0]: 1, names[plain-1]: 1, hourly: 2, compacted: 3} {
			if got := len(ts["A."+src].Partitions); got != want {
				return fmt.Errorf("A.%s has %d partitions, want %d", src, got, want)
			}
		}
		return nil
	})
	rcs, err := dstAdm.DescribeTopicConfigs(ctx, "A."+hourly, "A."+compacted, "A."+names[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"A." + hourly:    {"retention.ms": "3600000"},
		"A." + compacted: {"retention.ms": "7200000", "cleanup.policy": "compact"},
		"A." + names[0]:  {},
	}
	for _, rc := range rcs {
		got := map[string]string{}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				got[c.Key] = *c.Value
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[rc.Name]) {
			t.Errorf("%s: topic configs %v, want %v", rc.Name, got, want[rc.Name])
		}
	}
}

// TestReconcileInvalidReplicationFactorOnKafka: a replication factor above
// the target's brokers fails every topic of the request with the fix.
func TestReconcileInvalidReplicationFactorOnKafka(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	p := kafkatest.Name(t, "rf")
	deleteTopics(t, a.Admin(t), b.Admin(t), p)
	for i := range 3 {
		a.CreateTopic(t, fmt.Sprintf("%s-%d", p, i), 1, nil)
	}
	r, _ := newReconciler(t, a.Client(t), b.Client(t), nil, onlyPrefix(t, p), func(c *Config) { c.ReplicationFactor = 3 })
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("got %d results, want 3", len(results))
	}
	for _, res := range results {
		if res.Action != Failed || res.Err == nil ||
			!strings.Contains(res.Err.Error(), `creating remote topic "A.`+res.Source+`" on the target: INVALID_REPLICATION_FACTOR`) ||
			!strings.Contains(res.Err.Error(), "set replication.factor to at most the number of target brokers") {
			t.Errorf("%s: %q (%v), want the replication factor's fix", res.Source, res.Action, res.Err)
		}
	}
}

// runReconciler runs r until the test ends.
func runReconciler(t *testing.T, r *Reconciler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// overridesOn returns the topic's own configs on a real cluster, or an error
// while it cannot be described yet.
func overridesOn(ctx context.Context, cl *kgo.Client, topic string) (map[string]string, error) {
	configs, errs := describeConfigs(ctx, cl, []string{topic})
	if err := errs[topic]; err != nil {
		return nil, err
	}
	out := make(map[string]string)
	for k, c := range configs[topic] {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
			out[k] = *c.Value
		}
	}
	return out, nil
}

// wantOverrides polls until topic's own configs on cl have every key of
// want at its value ("" = not set).
func wantOverrides(t *testing.T, cl *kgo.Client, topic string, want map[string]string) {
	t.Helper()
	kafkatest.Eventually(t, 15*time.Second, func() error {
		got, err := overridesOn(t.Context(), cl, topic)
		if err != nil {
			return err
		}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("%s: %s = %q, want %q (all: %v)", topic, k, got[k], v, got)
			}
		}
		return nil
	})
}

func alterOn(t *testing.T, adm *kadm.Client, topic string, configs ...kadm.AlterConfig) {
	t.Helper()
	resp, err := adm.AlterTopicConfigs(t.Context(), configs, topic)
	if err == nil {
		_, err = resp.On(topic, func(r *kadm.AlterConfigsResponse) error { return r.Err })
	}
	if err != nil {
		t.Fatalf("altering %s: %v", topic, err)
	}
}

func setConfig(k, v string) kadm.AlterConfig {
	return kadm.AlterConfig{Name: k, Value: kadm.StringPtr(v)}
}

// TestConfigSyncOnKafka: configs appear on the target at creation and follow
// a source change within the sync interval; an excluded key and a
// target-only key are untouched; Plan lists the pending change and is empty
// once in sync; a deleted source topic leaves its remote topic unless the
// deletion flag is set.
func TestConfigSyncOnKafka(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	p := kafkatest.Name(t, "cfg")
	deleteTopics(t, srcAdm, dstAdm, p)
	remote := "A." + p
	a.CreateTopic(t, p, 2, map[string]*string{
		"retention.ms":           kadm.StringPtr("3600000"),
		"message.timestamp.type": kadm.StringPtr("LogAppendTime"), // excluded by MM2's default list
	})
	// A second topic stays on the source: a source that lists none of the
	// flow's topics deletes nothing.
	keep := p + "-keep"
	a.CreateTopic(t, keep, 1, nil)
	srcCl, dstCl := a.Client(t), b.Client(t)
	fast := func(c *Config) {
		c.Interval, c.SyncConfigs, c.SyncConfigsInterval = 100*time.Millisecond, true, 300*time.Millisecond
	}
	r, _ := newReconciler(t, srcCl, dstCl, nil, onlyPrefix(t, p), fast)

	pl, err := r.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Create) != 2 || pl.Create[0].Remote != remote || pl.Create[0].Partitions != 2 ||
		fmt.Sprint(pl.Create[0].Configs) != "map[retention.ms:3600000]" || pl.Create[1].Remote != "A."+keep {
		t.Fatalf("plan before the first pass: %+v, want %s with 2 partitions and retention.ms only, and A.%s", pl, remote, keep)
	}
	if _, err := r.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantOverrides(t, dstCl, remote, map[string]string{"retention.ms": "3600000", "message.timestamp.type": ""})
	kafkatest.Eventually(t, 10*time.Second, func() error {
		pl, err := r.Plan(t.Context())
		if err == nil && (!pl.Empty() || len(pl.Problems) > 0) {
			err = fmt.Errorf("plan once in sync: %+v", pl)
		}
		return err
	})

	// A target-only override, then a source change: the plan has exactly
	// the source change, and the running reconciler applies it.
	alterOn(t, dstAdm, remote, setConfig("segment.ms", "600000"))
	alterOn(t, srcAdm, p, setConfig("retention.ms", "7200000"))
	kafkatest.Eventually(t, 10*time.Second, func() error {
		pl, err := r.Plan(t.Context())
		if err != nil {
			return err
		}
		if len(pl.Configs) != 1 || pl.Configs[0].Key != "retention.ms" || pl.Configs[0].Old == nil ||
			*pl.Configs[0].Old != "3600000" || pl.Configs[0].New != "7200000" || len(pl.Create)+len(pl.Grow) > 0 {
			return fmt.Errorf("plan after the source change: %+v, want retention.ms 3600000 -> 7200000 only", pl)
		}
		return nil
	})
	runReconciler(t, r)
	wantOverrides(t, dstCl, remote, map[string]string{"retention.ms": "7200000", "segment.ms": "600000", "message.timestamp.type": ""})
	alterOn(t, srcAdm, p, setConfig("retention.ms", "10800000"))
	wantOverrides(t, dstCl, remote, map[string]string{"retention.ms": "10800000", "segment.ms": "600000"})

	// The source topic is deleted: the running reconciler reports it and
	// leaves the remote topic; one with the deletion flag deletes it.
	if _, err := srcAdm.DeleteTopics(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 15*time.Second, func() error {
		for _, res := range r.Results() {
			if res.Remote == remote && res.Action == SourceDeleted && res.Err == nil {
				return nil
			}
		}
		return fmt.Errorf("results %+v, want %s source-deleted", r.Results(), remote)
	})
	if ts, err := listTopics(t.Context(), dstCl, []string{remote}); err != nil || ts[remote].Err != nil {
		t.Fatalf("remote topic %s after its source was deleted: %v %v, want it kept", remote, err, ts[remote].Err)
	}
	del, _ := newReconciler(t, srcCl, dstCl, nil, onlyPrefix(t, p), func(c *Config) { c.DeleteRemoteOnSourceDeletion = true })
	pl, err = del.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Deleted) != 1 || pl.Deleted[0] != (DeletedTopic{Source: p, Remote: remote, Delete: true}) || pl.Empty() {
		t.Fatalf("one-shot plan with deletion on: %+v, want %s to be deleted", pl, remote)
	}
	results, err := del.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Remote != "A."+keep || results[0].Action != Unchanged ||
		results[1].Remote != remote || results[1].Action != RemoteDeleted || results[1].Err != nil {
		t.Fatalf("results with deletion on: %+v, want A.%s unchanged and %s remote-deleted", results, keep, remote)
	}
	kafkatest.Eventually(t, 15*time.Second, func() error {
		ts, err := listTopics(t.Context(), dstCl, []string{remote})
		if err != nil {
			return err
		}
		if d, ok := ts[remote]; ok && d.Err == nil {
			return fmt.Errorf("%s still on the target", remote)
		}
		return nil
	})
}

// TestConfigSyncRejectedKeyOnKafka: Apache Kafka rejects a config name it
// does not know (here a Confluent key, injected into the source's configs as
// a Confluent source would describe it) for the whole topic, at creation and
// in IncrementalAlterConfigs. The topic is created and synced with the other
// keys, and the rejected key is reported.
func TestConfigSyncRejectedKeyOnKafka(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	p := kafkatest.Name(t, "rej")
	deleteTopics(t, srcAdm, dstAdm, p)
	remote := "A." + p
	a.CreateTopic(t, p, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")})
	dstCl := b.Client(t)
	const vendorKey = "confluent.placement.constraints"
	vendorValue := `{"version":1,"replicas":[{"count":1,"constraints":{"rack":"a"}}]}`
	r, _ := newReconciler(t, a.Client(t), dstCl, nil, onlyPrefix(t, p), func(c *Config) { c.SyncConfigs = true })
	r.editSourceConfigs = func(_ string, c topicConfigs) {
		v := vendorValue
		c[vendorKey] = configEntry{Value: &v, Source: kmsg.ConfigSourceDynamicTopicConfig}
	}

	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Action != Created || results[0].Err != nil {
		t.Fatalf("first pass: %+v, want %s created without the vendor key", results, remote)
	}
	checkRejected := func(res Result) {
		t.Helper()
		if len(res.Problems) != 1 || res.Problems[0].Key != vendorKey || !strings.Contains(res.Problems[0].Err, "the target rejected it (INVALID_CONFIG") {
			t.Errorf("%s problems %+v, want %s rejected with INVALID_CONFIG", remote, res.Problems, vendorKey)
		}
	}
	checkRejected(results[0])
	wantOverrides(t, dstCl, remote, map[string]string{"retention.ms": "3600000"})

	// A new vendor value and a source change: the topic's request fails as
	// a whole, the fallback sets retention.ms alone.
	vendorValue = `{"version":1,"replicas":[{"count":1,"constraints":{"rack":"b"}}]}`
	alterOn(t, srcAdm, p, setConfig("retention.ms", "7200000"))
	kafkatest.Eventually(t, 10*time.Second, func() error {
		pl, err := r.Plan(t.Context())
		if err == nil && len(pl.Configs) != 2 {
			err = fmt.Errorf("plan %+v, want retention.ms and %s", pl, vendorKey)
		}
		return err
	})
	results, err = r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Action != ConfigsSynced || len(results[0].Configs) != 1 || results[0].Configs[0].Key != "retention.ms" {
		t.Fatalf("second pass: %+v, want retention.ms synced alone", results)
	}
	checkRejected(results[0])
	wantOverrides(t, dstCl, remote, map[string]string{"retention.ms": "7200000", vendorKey: ""})
	pl, err := r.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !pl.Empty() || len(pl.Problems) != 1 || pl.Problems[0].Key != vendorKey {
		t.Errorf("plan after the fallback: %+v, want no change and the rejected key as a problem", pl)
	}
}

// TestMinInsyncReplicasNeverLoweredOnKafka: with min.insync.replicas
// replicated (an empty config.properties.exclude), a source value below the
// target's is reported and not set; a higher one is.
func TestMinInsyncReplicasNeverLoweredOnKafka(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	p := kafkatest.Name(t, "isr")
	deleteTopics(t, srcAdm, dstAdm, p)
	remote := "A." + p
	a.CreateTopic(t, p, 1, map[string]*string{minISR: kadm.StringPtr("1")})
	dstCl := b.Client(t)
	replicateAll := func(c *Config) {
		f, err := policy.NewConfigFilter(nil, policy.UseDefaultsFromTarget)
		if err != nil {
			t.Fatal(err)
		}
		c.Configs, c.SyncConfigs = f, true
	}
	r, _ := newReconciler(t, a.Client(t), dstCl, nil, onlyPrefix(t, p), replicateAll)
	if _, err := r.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantOverrides(t, dstCl, remote, map[string]string{minISR: "1"}) // the target's default is 1

	alterOn(t, dstAdm, remote, setConfig(minISR, "2"))
	wantOverrides(t, dstCl, remote, map[string]string{minISR: "2"})
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || len(results[0].Configs) > 0 || len(results[0].Problems) != 1 ||
		!strings.Contains(results[0].Problems[0].Err, "lower than the target's current value 2") {
		t.Fatalf("pass with the target higher: %+v, want min.insync.replicas skipped with the reason", results)
	}
	wantOverrides(t, dstCl, remote, map[string]string{minISR: "2"})

	alterOn(t, srcAdm, p, setConfig(minISR, "3"))
	kafkatest.Eventually(t, 10*time.Second, func() error {
		results, err := r.Reconcile(t.Context())
		if err == nil && (len(results) != 1 || len(results[0].Configs) != 1) {
			err = fmt.Errorf("results %+v, want min.insync.replicas raised", results)
		}
		return err
	})
	wantOverrides(t, dstCl, remote, map[string]string{minISR: "3"})
}
