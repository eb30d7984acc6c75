package topics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/policy"
)

// newReconciler returns a Reconciler of flow A->B with MM2's default
// policy and filters changed by opts, logging into the returned buffer.
func newReconciler(t *testing.T, src, dst *kgo.Client, apply func([]Ready, []string), opts ...func(*Config)) (*Reconciler, *bytes.Buffer) {
	t.Helper()
	pol, err := policy.New(policy.DefaultClass, ".", false, "")
	if err != nil {
		t.Fatal(err)
	}
	topicFilter, err := policy.NewFilter(policy.DefaultTopics(), policy.DefaultTopicsExclude())
	if err != nil {
		t.Fatal(err)
	}
	cfgFilter, err := policy.NewConfigFilter(policy.DefaultConfigPropertiesExclude(), policy.UseDefaultsFromTarget)
	if err != nil {
		t.Fatal(err)
	}
	if apply == nil {
		apply = func([]Ready, []string) {}
	}
	cfg := Config{
		Flow: "A->B", Source: "A", Target: "B",
		Policy: pol, Topics: topicFilter, Configs: cfgFilter,
		ReplicationFactor: -1,
		Group:             "strait-test",
	}
	for _, o := range opts {
		o(&cfg)
	}
	var logs bytes.Buffer
	r := New(cfg, src, dst, apply, slog.New(slog.NewTextHandler(&logs, nil)))
	return r, &logs
}

// fakeCluster starts a one-broker kfake cluster, closed when the test ends.
func fakeCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// countRequests counts the requests of key that c receives and the entities
// in each (per), leaving the cluster to answer them.
func countRequests(c *kfake.Cluster, key kmsg.Key, per func(kmsg.Request) int) func() []int {
	var (
		mu    sync.Mutex
		sizes []int
	)
	c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		sizes = append(sizes, per(req))
		mu.Unlock()
		return nil, nil, false
	})
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), sizes...)
	}
}

// TestReconcileCreatesMissingTopicsInBatches creates several hundred remote
// topics in one pass with few CreateTopics requests, each topic with its own
// partition count and configs, and keeps every failure to its own topic.
func TestReconcileCreatesMissingTopicsInBatches(t *testing.T) {
	const (
		plain = 450
		// maxTopicsPerRequest is the most topics one CreateTopics request
		// must carry for the test to pass.
		maxTopicsPerRequest = 100
	)
	names := make([]string, plain)
	for i := range names {
		names[i] = fmt.Sprintf("t%03d", i)
	}
	a := fakeCluster(t, kfake.SeedTopics(1, names...), kfake.SeedTopics(1, "exists", "bad-config", "bad-rf", "bad-describe"))
	b := fakeCluster(t, kfake.SeedTopics(1, "A.exists"))
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	srcAdm, dstAdm := kadm.NewClient(srcCl), kadm.NewClient(dstCl)
	ctx := t.Context()

	// Topics with configs of their own and more partitions.
	own := map[string]map[string]string{
		"hourly":    {"retention.ms": "3600000"},
		"compacted": {"retention.ms": "7200000", "cleanup.policy": "compact"},
		"wide":      {},
	}
	wantPartitions := map[string]int{"wide": 5, "hourly": 2, "compacted": 3}
	for name, cfg := range own {
		cs := make(map[string]*string)
		for k, v := range cfg {
			cs[k] = kadm.StringPtr(v)
		}
		if _, err := srcAdm.CreateTopic(ctx, int32(wantPartitions[name]), -1, cs, name); err != nil {
			t.Fatalf("creating source topic %q: %v", name, err)
		}
	}
	// A.exists hides from the reconciler's listing of all topics on the
	// target, as if another node created it just after, so its creation
	// answers TOPIC_ALREADY_EXISTS and the reconciler must match it instead.
	b.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.Metadata}, Topic: "A.exists", Err: kerr.UnknownTopicOrPartition,
		When: func(req kmsg.Request) bool { return req.(*kmsg.MetadataRequest).Topics == nil },
	})
	b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "A.bad-config", Err: kerr.InvalidConfig})
	b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "A.bad-rf", Err: kerr.InvalidReplicationFactor})
	// bad-describe is deleted on the source, as it were, between listing
	// and describing. (Not an authorization error: kadm fails the whole
	// DescribeTopicConfigs call for one of those.)
	a.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeConfigs}, Resource: "bad-describe", Err: kerr.UnknownTopicOrPartition})

	creates := countRequests(b, kmsg.CreateTopics, func(req kmsg.Request) int { return len(req.(*kmsg.CreateTopicsRequest).Topics) })
	describes := countRequests(a, kmsg.DescribeConfigs, func(req kmsg.Request) int { return len(req.(*kmsg.DescribeConfigsRequest).Resources) })

	var ready []Ready
	r, logs := newReconciler(t, srcCl, dstCl, func(rs []Ready, _ []string) { ready = rs })
	results, err := r.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Requests: the topics to create, less A.exists and bad-describe,
	// in as few requests as the chunk size allows.
	toCreate := plain + len(own) + 3 // + exists, bad-config, bad-rf
	sent := creates()
	t.Logf("CreateTopics requests, topics in each: %v", sent)
	total := 0
	for _, n := range sent {
		total += n
	}
	if maxReqs := (toCreate + maxTopicsPerRequest - 1) / maxTopicsPerRequest; len(sent) > maxReqs {
		t.Errorf("one pass of %d missing topics sent %d CreateTopics requests, want at most %d", toCreate, len(sent), maxReqs)
	}
	if total != toCreate {
		t.Errorf("CreateTopics requests carried %d topics, want %d", total, toCreate)
	}
	if d := describes(); len(d) != 1 {
		t.Errorf("source DescribeConfigs requests = %v, want one request for all missing topics", d)
	}

	want := map[string]struct {
		action Action
		errHas []string
	}{
		"exists":       {action: Unchanged},
		"bad-config":   {action: Failed, errHas: []string{`creating remote topic "A.bad-config" on the target: `, kerr.InvalidConfig.Message}},
		"bad-rf":       {action: Failed, errHas: []string{`creating remote topic "A.bad-rf" on the target: `, "set replication.factor to at most the number of target brokers"}},
		"bad-describe": {action: Failed, errHas: []string{`describing configs of source topic "bad-describe": `, kerr.UnknownTopicOrPartition.Message}},
	}
	if len(results) != plain+len(own)+len(want) {
		t.Fatalf("got %d results, want %d", len(results), plain+len(own)+len(want))
	}
	created := 0
	for _, res := range results {
		w, ok := want[res.Source]
		if !ok {
			w.action = Created
		}
		if res.Action != w.action {
			t.Errorf("%s: action %q (err %v), want %q", res.Source, res.Action, res.Err, w.action)
		}
		if w.action == Created {
			created++
		}
		if (res.Err != nil) != (len(w.errHas) > 0) {
			t.Errorf("%s: err %v, want one: %v", res.Source, res.Err, len(w.errHas) > 0)
			continue
		}
		for _, s := range w.errHas {
			if !strings.Contains(res.Err.Error(), s) {
				t.Errorf("%s: err %q does not contain %q", res.Source, res.Err, s)
			}
		}
		if res.Remote != "A."+res.Source {
			t.Errorf("%s: remote %q", res.Source, res.Remote)
		}
	}
	if n := strings.Count(logs.String(), `msg="created remote topic"`); n != created {
		t.Errorf("logged %d created topics, want one line for each of %d", n, created)
	}
	if len(ready) != created+1 { // + A.exists
		t.Errorf("apply got %d ready topics, want %d", len(ready), created+1)
	}
	for _, rd := range ready {
		if !r.owned[rd.Remote] {
			t.Errorf("ready topic %q is not remembered as owned", rd.Remote)
		}
	}

	// The target has every remote topic with the source's partitions and
	// its own configs. (A listing of its own: the client's metadata cache
	// still holds the reconciler's listing from before the creations.)
	dst, err := listTopics(ctx, dstCl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		if res.Err != nil {
			continue
		}
		d, ok := dst[res.Remote]
		if !ok || d.Err != nil {
			t.Errorf("remote topic %q missing on the target (%v)", res.Remote, d.Err)
			continue
		}
		wantP := 1
		if p, ok := wantPartitions[res.Source]; ok {
			wantP = p
		}
		if d.Partitions != int32(wantP) || res.Partitions != int32(wantP) {
			t.Errorf("%s: %d partitions on the target (result %d), want %d", res.Remote, d.Partitions, res.Partitions, wantP)
		}
	}
	rcs, err := dstAdm.DescribeTopicConfigs(ctx, "A.hourly", "A.compacted", "A.wide", "A.t000")
	if err != nil {
		t.Fatal(err)
	}
	wantCfg := map[string]map[string]string{
		"A.hourly":    own["hourly"],
		"A.compacted": own["compacted"],
		"A.wide":      nil,
		"A.t000":      nil,
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Errorf("describing %s on the target: %v", rc.Name, rc.Err)
			continue
		}
		got := make(map[string]string)
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				got[c.Key] = *c.Value
			}
		}
		w := wantCfg[rc.Name]
		if len(got) != len(w) {
			t.Errorf("%s: topic configs %v, want %v", rc.Name, got, w)
			continue
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", rc.Name, k, got[k], v)
			}
		}
	}

	// The next pass retries only the failed topics (the faults are spent)
	// and creates them.
	before := len(creates())
	results, err = r.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		wantA := Unchanged
		if res.Source == "bad-config" || res.Source == "bad-rf" || res.Source == "bad-describe" {
			wantA = Created
		}
		if res.Action != wantA || res.Err != nil {
			t.Errorf("second pass: %s: %q (%v), want %q", res.Source, res.Action, res.Err, wantA)
		}
	}
	if sent := creates()[before:]; len(sent) != 1 || sent[0] != 3 {
		t.Errorf("second pass sent CreateTopics requests of %v topics, want one of 3", sent)
	}
}

// TestReconcileSaysWhenThePassRunsOutOfTime: a pass cut by its deadline
// fails the topics it did not finish and says so in one line.
func TestReconcileSaysWhenThePassRunsOutOfTime(t *testing.T) {
	a := fakeCluster(t, kfake.SeedTopics(1, "orders", "payments"))
	b := fakeCluster(t)
	// The controller never answers CreateTopics.
	b.ControlKey(int16(kmsg.CreateTopics), func(kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		return nil, nil, true
	})
	r, logs := newReconciler(t, kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b), nil)
	r.timeout = 500 * time.Millisecond
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("got %d results, want 2", len(results))
	}
	for _, res := range results {
		if res.Action != Failed || !errors.Is(res.Err, context.DeadlineExceeded) {
			t.Errorf("%s: %q (%v), want failed with the deadline", res.Source, res.Action, res.Err)
		}
	}
	if !strings.Contains(logs.String(), `msg="topic reconcile pass ran out of time; topics not done wait for the next pass"`) {
		t.Errorf("no line says the pass ran out of time; logs:\n%s", logs)
	}
}

// TestChunkLen cuts topics to create into requests within the topic and
// record budgets.
func TestChunkLen(t *testing.T) {
	tests := []struct {
		name       string
		partitions []int32
		configs    int // per topic
		want       []int
	}{
		{name: "one topic", partitions: []int32{1}, want: []int{1}},
		{name: "by topics", partitions: repeat(250, 1), want: []int{100, 100, 50}},
		{name: "by records", partitions: []int32{3000, 3000, 1, 1}, want: []int{1, 3}},
		{name: "configs count", partitions: repeat(100, 1), configs: 49, want: []int{98, 2}},
		{name: "a topic over the budget goes alone", partitions: []int32{1, 20000, 1}, want: []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := make([]Result, len(tt.partitions))
			todo := make([]toCreate, len(tt.partitions))
			for i, p := range tt.partitions {
				results[i].Partitions = p
				todo[i] = toCreate{i: i, configs: make(map[string]*string)}
				for c := range tt.configs {
					todo[i].configs[fmt.Sprint(c)] = nil
				}
			}
			var got []int
			for len(todo) > 0 {
				n := chunkLen(todo, results)
				got = append(got, n)
				todo = todo[n:]
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("chunks %v, want %v", got, tt.want)
			}
		})
	}
}

func repeat(n int, partitions int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = partitions
	}
	return out
}

// TestFollowingHandsOnlyTopicsTheDutyHolderWouldCopy: a node without the
// control duty hands the data plane no topic whose remote topic the duty
// holder refuses, such as a foreign one with fewer partitions than its
// source: records of its missing partitions have nowhere to go, and those
// of the others would land in a topic Strait did not create. A topic whose
// remote topic Strait owns but has not grown yet is handed with the
// partitions both sides have.
func TestFollowingHandsOnlyTopicsTheDutyHolderWouldCopy(t *testing.T) {
	a := fakeCluster(t, kfake.SeedTopics(4, "foreign", "growing", "fine"))
	b := fakeCluster(t, kfake.SeedTopics(2, "A.foreign", "A.growing"), kfake.SeedTopics(4, "A.fine"))
	dstCl := kafkatest.FakeClient(t, b)
	// Strait's progress group has offsets for A.growing: Strait created it.
	adm := kadm.NewClient(dstCl)
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "A.growing", Partition: 0, At: 1, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(t.Context(), "strait-test", offs); err != nil {
		t.Fatal(err)
	}
	var handed []Ready
	r, _ := newReconciler(t, kafkatest.FakeClient(t, a), dstCl, func(ready []Ready, _ []string) { handed = ready })
	r.SetFollowing(true)
	if _, err := r.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[string]int32{}
	for _, rd := range handed {
		got[rd.Source] = rd.Partitions
	}
	want := map[string]int32{"growing": 2, "fine": 4}
	if !maps.Equal(got, want) {
		t.Errorf("handed %v, want %v", got, want)
	}
}

// A remote topic this node created may be missing from the target's
// metadata on the next pass: a broker applies the controller's records
// some time after CreateTopics answers (in the bench's scale mode, 800 of
// 1,000 topics created in one pass were not there 4 s later). The pass
// plans to create it, is told it exists, cannot describe it, and must keep
// handing it to the data plane rather than fail it: failed, its partitions
// stopped until the pass after.
func TestCreatedTopicNotInTheTargetsMetadataYetStaysReady(t *testing.T) {
	a := fakeCluster(t, kfake.SeedTopics(2, "x"))
	b := fakeCluster(t)
	var ready []Ready
	r, logs := newReconciler(t, kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b), func(rs []Ready, _ []string) { ready = rs })
	if results, err := r.Reconcile(t.Context()); err != nil || len(results) != 1 || results[0].Action != Created {
		t.Fatalf("first pass: %+v, %v; want A.x created", results, err)
	}
	b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: "A.x", Err: kerr.UnknownTopicOrPartition, Count: -1})
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Err != nil || len(ready) != 1 || ready[0].Remote != "A.x" || ready[0].Partitions != 2 {
		t.Fatalf("second pass: results %+v, ready %+v; want A.x still ready with 2 partitions\n%s", results, ready, logs)
	}
}
