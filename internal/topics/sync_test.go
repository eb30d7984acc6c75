package topics

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// syncConfigsEveryPass turns config sync on for every pass.
func syncConfigsEveryPass(c *Config) { c.SyncConfigs, c.SyncConfigsInterval = true, 0 }

// reconcile runs one pass and fails the test on a listing error.
func reconcile(t *testing.T, r *Reconciler) map[string]Result {
	t.Helper()
	results, err := r.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]Result, len(results))
	for _, res := range results {
		out[res.Remote] = res
	}
	return out
}

// plan computes a plan and fails the test on a listing error.
func plan(t *testing.T, r *Reconciler) Plan {
	t.Helper()
	p, err := r.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// topicOverrides returns the topic's own configs on a cluster.
func topicOverrides(t *testing.T, cl *kgo.Client, topic string) map[string]string {
	t.Helper()
	configs, errs := describeConfigs(t.Context(), cl, []string{topic})
	if err := errs[topic]; err != nil {
		t.Fatalf("describing %s: %v", topic, err)
	}
	out := make(map[string]string)
	for k, c := range configs[topic] {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
			out[k] = *c.Value
		}
	}
	return out
}

func alterTopic(t *testing.T, adm *kadm.Client, topic string, configs ...kadm.AlterConfig) {
	t.Helper()
	resp, err := adm.AlterTopicConfigs(t.Context(), configs, topic)
	if err == nil {
		_, err = resp.On(topic, func(r *kadm.AlterConfigsResponse) error { return r.Err })
	}
	if err != nil {
		t.Fatalf("altering %s: %v", topic, err)
	}
}

func set(k, v string) kadm.AlterConfig { return kadm.AlterConfig{Name: k, Value: kadm.StringPtr(v)} }

// TestConfigSyncFollowsTheSource on kfake: a source change is planned and
// then set; a target-only override and an excluded key stay as they are.
func TestConfigSyncFollowsTheSource(t *testing.T) {
	a, b := kafkatest.NewFakePair(t)
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	srcAdm, dstAdm := kadm.NewClient(srcCl), kadm.NewClient(dstCl)
	if _, err := srcAdm.CreateTopic(t.Context(), 1, -1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "orders"); err != nil {
		t.Fatal(err)
	}
	r, logs := newReconciler(t, srcCl, dstCl, nil, syncConfigsEveryPass)

	if p := plan(t, r); len(p.Create) != 1 || p.Create[0].Remote != "A.orders" || p.Create[0].Configs["retention.ms"] != "3600000" {
		t.Fatalf("plan before the first pass: %+v, want A.orders created with retention.ms", p)
	}
	if res := reconcile(t, r)["A.orders"]; res.Action != Created {
		t.Fatalf("first pass: %+v, want created", res)
	}
	if p := plan(t, r); !p.Empty() || len(p.Problems) > 0 {
		t.Fatalf("plan once in sync: %+v, want empty", p)
	}

	alterTopic(t, srcAdm, "orders", set("retention.ms", "7200000"), set("message.timestamp.type", "LogAppendTime"))
	alterTopic(t, dstAdm, "A.orders", set("retention.ms", "3600000"), set("segment.ms", "60000")) // segment.ms: target only
	p := plan(t, r)
	want := []ConfigChange{{Remote: "A.orders", Key: "retention.ms", Old: strPtr("3600000"), New: "7200000"}}
	if len(p.Configs) != 1 || p.Configs[0].Key != want[0].Key || *p.Configs[0].Old != *want[0].Old || p.Configs[0].New != want[0].New || p.Empty() {
		t.Fatalf("plan after a source change: %+v, want %+v", p, want)
	}
	res := reconcile(t, r)["A.orders"]
	if res.Action != ConfigsSynced || len(res.Configs) != 1 || res.Configs[0].Key != "retention.ms" {
		t.Errorf("second pass: %+v, want retention.ms synced", res)
	}
	got := topicOverrides(t, dstCl, "A.orders")
	if got["retention.ms"] != "7200000" || got["segment.ms"] != "60000" || got["message.timestamp.type"] != "" {
		t.Errorf("target overrides %v, want retention.ms=7200000, segment.ms kept, message.timestamp.type (excluded) not set", got)
	}
	if p := plan(t, r); !p.Empty() {
		t.Errorf("plan after the sync: %+v, want empty", p)
	}
	if !strings.Contains(logs.String(), `msg="synced remote topic configs"`) {
		t.Errorf("no line says configs were synced; logs:\n%s", logs)
	}
}

// TestConfigSyncOnlyEveryInterval: with a long interval the second pass
// leaves configs alone, and Plan still shows the pending change.
func TestConfigSyncOnlyEveryInterval(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	r, _ := newReconciler(t, srcCl, dstCl, nil, func(c *Config) { c.SyncConfigs, c.SyncConfigsInterval = true, 1<<40 })
	reconcile(t, r)
	alterTopic(t, kadm.NewClient(srcCl), "orders", set("retention.ms", "5"))
	if res := reconcile(t, r)["A.orders"]; res.Action != Unchanged || len(res.Configs) > 0 {
		t.Errorf("pass within the interval: %+v, want no config change", res)
	}
	if p := plan(t, r); len(p.Configs) != 1 {
		t.Errorf("plan within the interval: %+v, want the pending change", p)
	}
}

// TestConfigSyncRejectedKeyFallsBackKeyByKey: a key the target rejects fails
// the topic's whole IncrementalAlterConfigs; the other keys still apply
// key by key, the rejected one is reported and logged once, not sent again
// until the source value changes, and other topics are not held up.
func TestConfigSyncRejectedKeyFallsBackKeyByKey(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders", "payments"))
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	var vendorValue atomic.Value
	vendorValue.Store("rack-a")
	var vendorSent atomic.Int32
	b.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.IncrementalAlterConfigs}, Resource: "A.orders", Err: kerr.InvalidConfig, Count: -1,
		When: func(req kmsg.Request) bool {
			for _, rr := range req.(*kmsg.IncrementalAlterConfigsRequest).Resources {
				for _, c := range rr.Configs {
					if rr.ResourceName == "A.orders" && c.Name == "vendor.placement" {
						vendorSent.Add(1)
						return true
					}
				}
			}
			return false
		},
	})
	r, logs := newReconciler(t, srcCl, dstCl, nil, syncConfigsEveryPass)
	reconcile(t, r) // creates both, with no configs
	r.editSourceConfigs = func(topic string, c topicConfigs) {
		if topic == "orders" {
			c["vendor.placement"] = override(vendorValue.Load().(string))
		}
	}
	srcAdm := kadm.NewClient(srcCl)
	alterTopic(t, srcAdm, "orders", set("retention.ms", "5"), set("segment.ms", "6"))
	alterTopic(t, srcAdm, "payments", set("retention.ms", "7"))

	results := reconcile(t, r)
	if got := topicOverrides(t, dstCl, "A.orders"); got["retention.ms"] != "5" || got["segment.ms"] != "6" || got["vendor.placement"] != "" {
		t.Errorf("A.orders overrides %v, want retention.ms and segment.ms despite the rejected key", got)
	}
	if got := topicOverrides(t, dstCl, "A.payments"); got["retention.ms"] != "7" {
		t.Errorf("A.payments overrides %v, want retention.ms=7", got)
	}
	orders := results["A.orders"]
	if orders.Err != nil || orders.Action != ConfigsSynced || len(orders.Configs) != 2 {
		t.Errorf("A.orders: %+v, want its two other keys synced and no error", orders)
	}
	wantProblem := `source value "rack-a" not synced: the target rejected it (INVALID_CONFIG`
	if len(orders.Problems) != 1 || orders.Problems[0].Key != "vendor.placement" || !strings.HasPrefix(orders.Problems[0].Err, wantProblem) {
		t.Errorf("A.orders problems %+v, want vendor.placement: %s", orders.Problems, wantProblem)
	}
	sent := vendorSent.Load()
	if sent != 2 { // with the others, then alone
		t.Errorf("vendor.placement sent %d times, want 2", sent)
	}

	// Next passes: not sent again, still reported, logged once; the plan
	// has the problem but no change.
	reconcile(t, r)
	p := plan(t, r)
	if vendorSent.Load() != sent {
		t.Errorf("a rejected value was sent again")
	}
	if !p.Empty() || len(p.Problems) != 1 || p.Problems[0].Topic != "A.orders" || p.Problems[0].Key != "vendor.placement" {
		t.Errorf("plan %+v, want empty with the vendor.placement problem", p)
	}
	if n := strings.Count(logs.String(), `msg="remote topic change not applied"`); n != 1 {
		t.Errorf("logged the rejected key %d times, want once; logs:\n%s", n, logs)
	}

	// A new source value is tried again.
	vendorValue.Store("rack-b")
	if p := plan(t, r); len(p.Configs) != 1 || p.Configs[0].New != "rack-b" {
		t.Errorf("plan after the source value changed: %+v, want vendor.placement=rack-b", p)
	}
	reconcile(t, r)
	if vendorSent.Load() != sent+1 {
		t.Errorf("the new value was sent %d times, want once", vendorSent.Load()-sent)
	}
}

// TestCreateWithoutRejectedKeys: a topic whose creation the target refuses
// for one config is created with the others, and the key is reported.
func TestCreateWithoutRejectedKeys(t *testing.T) {
	a, b := kafkatest.NewFakePair(t)
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	if _, err := kadm.NewClient(srcCl).CreateTopic(t.Context(), 2, -1, map[string]*string{"retention.ms": kadm.StringPtr("5")}, "orders"); err != nil {
		t.Fatal(err)
	}
	b.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "A.orders", Err: kerr.InvalidConfig, Count: -1,
		When: func(req kmsg.Request) bool {
			for _, rt := range req.(*kmsg.CreateTopicsRequest).Topics {
				for _, c := range rt.Configs {
					if c.Name == "vendor.placement" {
						return true
					}
				}
			}
			return false
		},
	})
	r, _ := newReconciler(t, srcCl, dstCl, nil)
	r.editSourceConfigs = func(_ string, c topicConfigs) { c["vendor.placement"] = override("rack-a") }
	res := reconcile(t, r)["A.orders"]
	if res.Action != Created || res.Err != nil {
		t.Fatalf("A.orders: %+v, want created", res)
	}
	if len(res.Problems) != 1 || res.Problems[0].Key != "vendor.placement" {
		t.Errorf("problems %+v, want the rejected vendor.placement", res.Problems)
	}
	if got := topicOverrides(t, dstCl, "A.orders"); got["retention.ms"] != "5" || got["vendor.placement"] != "" {
		t.Errorf("A.orders overrides %v, want retention.ms=5 only", got)
	}
}

// TestGrowthRefusedIsThatTopicsError: a partition count the target refuses
// fails that topic only; the other grows and both stay ready.
func TestGrowthRefusedIsThatTopicsError(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "refused", "grows"))
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	var ready []Ready
	r, _ := newReconciler(t, srcCl, dstCl, func(rs []Ready, _ []string) { ready = rs })
	reconcile(t, r)
	if _, err := kadm.NewClient(srcCl).UpdatePartitions(t.Context(), 3, "refused", "grows"); err != nil {
		t.Fatal(err)
	}
	b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreatePartitions}, Topic: "A.refused", Err: kerr.PolicyViolation, Count: -1})
	if p := plan(t, r); len(p.Grow) != 2 {
		t.Errorf("plan %+v, want both grown", p)
	}
	results := reconcile(t, r)
	if res := results["A.grows"]; res.Action != Grown || res.Err != nil {
		t.Errorf("A.grows: %+v, want grown", res)
	}
	res := results["A.refused"]
	if res.Action != Failed || res.Err == nil || !strings.Contains(res.Err.Error(), `growing remote topic "A.refused" from 1 to 3 partitions: POLICY_VIOLATION`) {
		t.Errorf("A.refused: %+v, want the refused growth as its error", res)
	}
	if len(ready) != 1 || ready[0].Remote != "A.grows" || ready[0].Partitions != 3 {
		t.Errorf("ready %+v, want A.grows with 3 partitions", ready)
	}
}

// TestSourceDeletion: a deleted source topic is reported and its remote
// topic stays, unless DeleteRemoteOnSourceDeletion; a one-shot plan of a
// fresh reconciler finds it by the remote topic's name.
func TestSourceDeletion(t *testing.T) {
	for _, del := range []bool{false, true} {
		name := "kept"
		if del {
			name = "deleted"
		}
		t.Run(name, func(t *testing.T) {
			a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders", "payments"))
			srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
			var gone []string
			opt := func(c *Config) { c.DeleteRemoteOnSourceDeletion = del }
			r, logs := newReconciler(t, srcCl, dstCl, func(_ []Ready, g []string) { gone = g }, opt)
			reconcile(t, r)
			if _, err := kadm.NewClient(srcCl).DeleteTopics(t.Context(), "orders"); err != nil {
				t.Fatal(err)
			}
			// A remote topic of another source, and one this flow would not
			// select, are never counted.
			for _, other := range []string{"C.orders", "A.__hidden"} {
				if _, err := kadm.NewClient(dstCl).CreateTopic(t.Context(), 1, -1, nil, other); err != nil {
					t.Fatal(err)
				}
			}

			fresh, _ := newReconciler(t, srcCl, dstCl, nil, opt)
			wantDeleted := []DeletedTopic{{Source: "orders", Remote: "A.orders", Delete: del}}
			if p := plan(t, fresh); !slices.Equal(p.Deleted, wantDeleted) || p.Empty() == del {
				t.Errorf("one-shot plan %+v, want deleted %+v", p, wantDeleted)
			}
			results := reconcile(t, r)
			if !slices.Equal(gone, []string{"orders"}) {
				t.Errorf("gone %v, want [orders]", gone)
			}
			res := results["A.orders"]
			wantAction := SourceDeleted
			if del {
				wantAction = RemoteDeleted
			}
			if res.Action != wantAction || res.Err != nil || res.Source != "orders" {
				t.Errorf("A.orders: %+v, want %s", res, wantAction)
			}
			reconcile(t, r)
			target, err := listTopics(t.Context(), dstCl, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, there := target["A.orders"]; there == del {
				t.Errorf("A.orders on the target: %v, want %v", there, !del)
			}
			if _, there := target["A.payments"]; !there {
				t.Errorf("A.payments was deleted")
			}
			msg := `msg="source topic deleted; remote topic left on the target`
			if del {
				msg = `msg="deleted remote topic, as its source topic was deleted`
			}
			if n := strings.Count(logs.String(), msg); n != 1 {
				t.Errorf("logged %q %d times, want once; logs:\n%s", msg, n, logs)
			}
		})
	}
}

// TestSourceDeletionNotWhenTheSourceListsNothing: with deletion on, a source
// that lists none of the flow's topics deletes nothing.
func TestSourceDeletionNotWhenTheSourceListsNothing(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	srcCl, dstCl := kafkatest.FakeClient(t, a), kafkatest.FakeClient(t, b)
	r, _ := newReconciler(t, srcCl, dstCl, nil, func(c *Config) { c.DeleteRemoteOnSourceDeletion = true })
	reconcile(t, r)
	if _, err := kadm.NewClient(srcCl).DeleteTopics(context.Background(), "orders"); err != nil {
		t.Fatal(err)
	}
	res := reconcile(t, r)["A.orders"]
	if res.Action != SourceDeleted || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Err, "the source lists none of the topics this flow selects") {
		t.Errorf("A.orders: %+v, want left with the reason", res)
	}
}
