//go:build integration

package kafkatest_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

var env *kafkatest.Env

// The cluster has a proxy in front of its broker, for TestProxyFaults, and the security
// listeners, for TestSecureListeners; the other tests use the broker's own listener.
func TestMain(m *testing.M) {
	os.Exit(kafkatest.RunWith(m, kafkatest.Options{Clusters: 1, Proxies: true, Security: true, Heap: "384m"}, &env))
}

// produceN writes n records to each partition of topic and returns their values by partition.
func produceN(t *testing.T, cl *kgo.Client, topic string, partitions int32, n int) [][]string {
	t.Helper()
	want := make([][]string, partitions)
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			v := fmt.Sprintf("p%d-%03d", p, i)
			want[p] = append(want[p], v)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %q: %v", topic, err)
	}
	return want
}

func values(parts [][]*kgo.Record) [][]string {
	out := make([][]string, len(parts))
	for p, recs := range parts {
		for _, r := range recs {
			out[p] = append(out[p], string(r.Value))
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		partitions int32
		perPart    int
		isolation  kgo.IsolationLevel
	}{
		{name: "one partition", partitions: 1, perPart: 50, isolation: kgo.ReadUncommitted()},
		{name: "three partitions committed", partitions: 3, perPart: 20, isolation: kgo.ReadCommitted()},
	}
	a := env.Clusters[0]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topic := kafkatest.Name(t, "roundtrip-")
			a.CreateTopic(t, topic, tc.partitions, nil)
			cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			want := produceN(t, cl, topic, tc.partitions, tc.perPart)
			got := values(a.ReadAll(t, topic, tc.isolation))
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("read back %v, want %v", got, want)
			}
		})
	}
}

func TestBrokerRestart(t *testing.T) {
	tests := []struct {
		name    string
		kill    bool
		restart bool // RestartBroker rather than StopBroker and StartBroker
	}{
		{name: "clean stop", kill: false},
		{name: "kill", kill: true},
		{name: "restart with kill", kill: true, restart: true},
	}
	a := env.Clusters[0]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topic := kafkatest.Name(t, "restart-")
			a.CreateTopic(t, topic, 1, nil)
			cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			want := produceN(t, cl, topic, 1, 10)

			if tc.restart {
				a.RestartBroker(t, tc.kill)
			} else {
				a.StopBroker(t, tc.kill)
				if err := cl.Ping(t.Context()); err == nil {
					t.Fatalf("cluster %s still answers after StopBroker", a.Name)
				}
				a.StartBroker(t)
			}
			kafkatest.Eventually(t, 30*time.Second, func() error { return cl.Ping(t.Context()) })

			if got := values(a.ReadAll(t, topic, kgo.ReadCommitted())); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("after restart read back %v, want %v", got, want)
			}
		})
	}
}

func TestClassPath(t *testing.T) {
	cp, err := env.ClassPath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cp, "/libs/*") {
		t.Errorf("ClassPath() = %q, want a path ending in /libs/*", cp)
	}
}
