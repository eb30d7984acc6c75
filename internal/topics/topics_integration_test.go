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
	// are the same to Kafka's metric names).
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
	if len(results) != plain+3 {
		t.Fatalf("got %d results, want %d", len(results), plain+3)
	}
	for _, res := range results {
		switch res.Source {
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
