package acls_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/acls"
	"strait/internal/kafkatest"
)

// fakePair returns kfake source and target clusters (no authorizer is enforced, but both
// store and describe ACLs as Kafka does) and admin clients of them.
func fakePair(t *testing.T) (src, dst *kfake.Cluster, srcAdm, dstAdm *kadm.Client) {
	t.Helper()
	src, dst = kafkatest.NewFakePair(t)
	return src, dst, kadm.NewClient(kafkatest.FakeClient(t, src)), kadm.NewClient(kafkatest.FakeClient(t, dst))
}

func TestSyncCreatesWhatTheTargetLacksAndDeletesNothing(t *testing.T) {
	_, _, srcAdm, dstAdm := fakePair(t)
	createACLs(t, srcAdm,
		bind(acls.Topic, "app-orders", acls.Literal, "User:alice", acls.All, acls.Allow),
		bind(acls.Topic, "app-orders", acls.Literal, "User:alice", acls.Write, acls.Allow),
		bind(acls.Topic, "app-orders", acls.Literal, "User:mallory", acls.Write, acls.Deny),
		bind(acls.Topic, "app-pay", acls.Prefixed, "User:alice", "DESCRIBE", acls.Allow),
		bind(acls.Topic, "app-secret", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Topic, "other", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Group, "app-group", acls.Literal, "User:alice", acls.Read, acls.Allow),
	)
	present := bind(acls.Topic, "A.app-pay", acls.Prefixed, "User:alice", "DESCRIBE", acls.Allow)
	local := bind(acls.Topic, "app-local", acls.Literal, "User:bob", acls.All, acls.Allow)
	createACLs(t, dstAdm, present, local)

	log, _ := logger()
	s := acls.New(flowConfig(t, "app", false), srcAdm, dstAdm, log)
	plan, err := s.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []acls.Binding{
		bind(acls.Topic, "A.app-orders", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Topic, "A.app-orders", acls.Literal, "User:mallory", acls.Write, acls.Deny),
	}
	equalBindings(t, "plan", plan.Add, want)
	if plan.Present != 1 || len(plan.Problems) != 0 {
		t.Fatalf("plan: present %d, problems %v; want 1 and none", plan.Present, plan.Problems)
	}
	skipped := map[string]string{}
	for _, sk := range plan.Skipped {
		skipped[sk.Binding.ResourceName+" "+sk.Binding.Operation] = sk.Reason
	}
	for _, k := range []string{"app-orders WRITE", "app-secret READ", "other READ"} {
		if skipped[k] == "" {
			t.Errorf("plan skips %v, want %q among them with a reason", plan.Skipped, k)
		}
	}
	equalBindings(t, "target after Plan", bindingsOf(t, dstAdm, "app"), []acls.Binding{present, local})

	done, err := s.Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	equalBindings(t, "created", done.Add, want)
	equalBindings(t, "target after Sync", bindingsOf(t, dstAdm, "app"),
		[]acls.Binding{want[0], want[1], present, local})

	again, err := s.Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() || again.Present != 3 {
		t.Fatalf("plan after a sync: %+v, want empty with 3 present", again)
	}
	if st := s.Status(); st.Created != 2 || st.Present != 1 || st.Error != "" || len(st.Problems) != 0 || st.SyncedAt.IsZero() {
		t.Fatalf("Status() = %+v, want 2 created, 1 present, no problem", st)
	}
}

func TestGroupACLsOnlyWhenAskedFor(t *testing.T) {
	_, _, srcAdm, dstAdm := fakePair(t)
	createACLs(t, srcAdm,
		bind(acls.Group, "app-group", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Group, "app-", acls.Prefixed, "User:alice", "DESCRIBE", acls.Allow),
		bind(acls.Group, "strait-A", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Group, "console", acls.Literal, "User:alice", acls.Read, acls.Allow),
	)
	log, _ := logger()
	off, err := acls.New(flowConfig(t, "app", false), srcAdm, dstAdm, log).Plan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !off.Empty() || len(off.Skipped) != 0 {
		t.Fatalf("plan without group ACLs: %+v, want nothing read", off)
	}
	cfg := flowConfig(t, "app", true)
	cfg.OwnGroup = func(g string) bool { return strings.HasPrefix(g, "strait-") }
	on, err := acls.New(cfg, srcAdm, dstAdm, log).Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []acls.Binding{
		bind(acls.Group, "app-", acls.Prefixed, "User:alice", "DESCRIBE", acls.Allow),
		bind(acls.Group, "app-group", acls.Literal, "User:alice", acls.Read, acls.Allow),
	}
	equalBindings(t, "created", on.Add, want)
	equalBindings(t, "target", bindingsOf(t, dstAdm, ""), want)
}

// One binding the target refuses is a problem of its own; the others are created, the
// refusal is logged once however often it repeats, and it goes once solved.
func TestRefusedBindingIsReportedAndTheRestSyncs(t *testing.T) {
	_, dst, srcAdm, dstAdm := fakePair(t)
	createACLs(t, srcAdm,
		bind(acls.Topic, "app-good", acls.Literal, "User:alice", acls.Read, acls.Allow),
		bind(acls.Topic, "app-bad", acls.Literal, "User:alice", acls.Read, acls.Allow),
	)
	fault := dst.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateACLs}, Resource: "A.app-bad", Err: kerr.PolicyViolation, Count: -1})
	log, out := logger()
	s := acls.New(flowConfig(t, "app", false), srcAdm, dstAdm, log)
	for range 2 {
		done, err := s.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(done.Problems) != 1 || done.Problems[0].Binding.ResourceName != "A.app-bad" ||
			!strings.Contains(done.Problems[0].Error, "POLICY_VIOLATION") {
			t.Fatalf("problems = %v, want A.app-bad refused with POLICY_VIOLATION", done.Problems)
		}
	}
	equalBindings(t, "target", bindingsOf(t, dstAdm, "app"),
		[]acls.Binding{bind(acls.Topic, "A.app-good", acls.Literal, "User:alice", acls.Read, acls.Allow)})
	if st := s.Status(); len(st.Problems) != 1 || st.Error != "" {
		t.Fatalf("Status() = %+v, want the one problem", st)
	}
	if n := strings.Count(out.String(), "ACL not copied to the target"); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once:\n%s", n, out)
	}

	fault.Remove()
	done, err := s.Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Add) != 1 || len(done.Problems) != 0 || len(s.Status().Problems) != 0 {
		t.Fatalf("after the fault: %+v, status %+v; want A.app-bad created and no problem", done, s.Status())
	}
}

func TestSourceWithoutAuthorizerIsSkipped(t *testing.T) {
	src, _, srcAdm, dstAdm := fakePair(t)
	src.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeACLs}, TopLevel: true, Err: kerr.SecurityDisabled, Count: -1})
	log, out := logger()
	s := acls.New(flowConfig(t, "app", false), srcAdm, dstAdm, log)
	for range 2 {
		done, err := s.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !done.SourceSecurityDisabled || !done.Empty() {
			t.Fatalf("Sync() = %+v, want security disabled and nothing done", done)
		}
	}
	if n := strings.Count(out.String(), "level=INFO msg=\"the source has no authorizer"); n != 1 {
		t.Fatalf("logged %d times at INFO, want once:\n%s", n, out)
	}
	if !s.Status().SourceSecurityDisabled {
		t.Fatal("Status() does not say the source has no authorizer")
	}
}

func TestClusterErrorsNameTheFix(t *testing.T) {
	tests := []struct {
		name    string
		onSrc   bool
		err     *kerr.Error
		wantErr []string
	}{
		{"target without authorizer", false, kerr.SecurityDisabled, []string{"target B", "authorizer.class.name", "sync.topic.acls.enabled = false"}},
		{"target admin may not describe", false, kerr.ClusterAuthorizationFailed, []string{"target B", "DESCRIBE on the CLUSTER resource of B"}},
		{"source admin may not describe", true, kerr.ClusterAuthorizationFailed, []string{"source A", "DESCRIBE on the CLUSTER resource of A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, dst, srcAdm, dstAdm := fakePair(t)
			createACLs(t, srcAdm, bind(acls.Topic, "app-orders", acls.Literal, "User:alice", acls.Read, acls.Allow))
			faulty := dst
			if tt.onSrc {
				faulty = src
			}
			faulty.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeACLs}, TopLevel: true, Err: tt.err, Count: -1})
			log, _ := logger()
			s := acls.New(flowConfig(t, "app", false), srcAdm, dstAdm, log)
			_, err := s.Sync(t.Context())
			if !errors.Is(err, tt.err) {
				t.Fatalf("Sync() error = %v, want %v", err, tt.err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if st := s.Status(); st.Error != err.Error() {
				t.Errorf("Status().Error = %q, want the sync's error", st.Error)
			}
		})
	}
}

func TestRunSyncsAtOnceAndStopsWithItsContext(t *testing.T) {
	_, _, srcAdm, dstAdm := fakePair(t)
	createACLs(t, srcAdm, bind(acls.Topic, "app-orders", acls.Literal, "User:alice", acls.Read, acls.Allow))
	log, _ := logger()
	cfg := flowConfig(t, "app", false)
	cfg.Interval = time.Hour // only the first sync can do it
	s := acls.New(cfg, srcAdm, dstAdm, log)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = s.Run(ctx) })
	kafkatest.Eventually(t, 10*time.Second, func() error {
		if s.Status().Created != 1 {
			return errors.New("the first sync has not created the binding yet")
		}
		return nil
	})
	cancel()
	wg.Wait()
	if runErr != nil {
		t.Fatalf("Run() = %v, want nil after its context ended", runErr)
	}
}
