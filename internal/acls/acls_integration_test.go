//go:build integration

package acls_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"strait/internal/acls"
	"strait/internal/kafkatest"
)

var env *kafkatest.Env

// This package's clusters run KRaft's StandardAuthorizer with SASL users (kafkatest.Authorized).
func TestMain(m *testing.M) { os.Exit(kafkatest.RunWith(m, kafkatest.Authorized(2), &env)) }

// deleteACLs deletes bindings when the test ends, so that a package's tests that share
// clusters do not see each other's.
func deleteACLs(t *testing.T, adm *kadm.Client, bs ...acls.Binding) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		for _, b := range bs {
			if _, err := adm.DeleteACLs(ctx, builder(t, b)); err != nil {
				t.Logf("deleting ACL %v: %v", b, err)
			}
		}
	})
}

// scramClient is a client of cluster c on its SASL_SSL listener as the test bed's SCRAM
// user, who is no super user.
func scramClient(t *testing.T, c *kafkatest.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	sec := env.Security
	return c.Client(t, append([]kgo.Opt{
		kgo.SeedBrokers(c.ListenerSeeds(t, kafkatest.ListenerSASLSSL)...),
		kgo.DialTLSConfig(sec.TLSConfig(nil)),
		kgo.SASL(scram.Auth{User: sec.SCRAM.User, Pass: sec.SCRAM.Password}.AsSha512Mechanism()),
	}, opts...)...)
}

// After one sync a SASL user holding the synced ACLs consumes the remote topic in its
// group on the target and is refused when it produces there, as MM2's rules intend.
func TestSyncedACLsLetTheUserReadTheRemoteTopicButNotWrite(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	base := kafkatest.Name(t, "acl")
	topic, remote, group := base+"-orders", "A."+base+"-orders", base+"-group"
	user := "User:" + env.Security.SCRAM.User

	source := []acls.Binding{
		bind(acls.Topic, topic, acls.Literal, user, acls.All, acls.Allow),
		bind(acls.Topic, topic, acls.Literal, user, acls.Write, acls.Allow),
		bind(acls.Topic, topic, acls.Literal, "User:mallory", acls.Write, acls.Deny),
		bind(acls.Topic, base+"-pre", acls.Prefixed, user, "DESCRIBE", acls.Allow),
		bind(acls.Topic, base+"-secret", acls.Literal, user, acls.Read, acls.Allow),
		bind(acls.Group, group, acls.Literal, user, acls.Read, acls.Allow),
	}
	createACLs(t, srcAdm, source...)
	deleteACLs(t, srcAdm, source...)
	want := []acls.Binding{
		bind(acls.Topic, remote, acls.Literal, user, acls.Read, acls.Allow), // from ALLOW ALL
		bind(acls.Topic, remote, acls.Literal, "User:mallory", acls.Write, acls.Deny),
		bind(acls.Topic, "A."+base+"-pre", acls.Prefixed, user, "DESCRIBE", acls.Allow),
		bind(acls.Group, group, acls.Literal, user, acls.Read, acls.Allow),
	}
	sortBindings(want)
	deleteACLs(t, dstAdm, want...)

	// The remote topic as the data plane would have made it, with a record.
	b.CreateTopic(t, remote, 1, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := b.Client(t).ProduceSync(ctx, &kgo.Record{Topic: remote, Value: []byte("copied")}).FirstErr(); err != nil {
		t.Fatalf("producing to %s as the super user: %v", remote, err)
	}

	// Before the sync the user may not even describe the remote topic.
	userAdm := kadm.NewClient(scramClient(t, b))
	if err := describeErr(ctx, userAdm, remote); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("describing %s as %s before the sync: %v, want TOPIC_AUTHORIZATION_FAILED", remote, user, err)
	}

	log, _ := logger()
	s := acls.New(flowConfig(t, base, true), srcAdm, dstAdm, log)
	done, err := s.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Problems) != 0 {
		t.Fatalf("problems: %v", done.Problems)
	}
	equalBindings(t, "created", done.Add, want)
	waitBindings(t, "the target's bindings", dstAdm, base, want)

	consumer := scramClient(t, b, kgo.ConsumeTopics(remote), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	var got []string
	for len(got) == 0 && ctx.Err() == nil {
		fetches := consumer.PollFetches(ctx)
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				t.Fatalf("consuming %s in group %s as %s: %v", remote, group, user, fe.Err)
			}
		}
		fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 1 || got[0] != "copied" {
		t.Fatalf("consumed %q from %s, want the one record", got, remote)
	}

	// Without idempotence the refusal is the produce's own (an idempotent producer would
	// first be refused its producer id, on the cluster).
	producer := scramClient(t, b, kgo.DisableIdempotentWrite())
	err = producer.ProduceSync(ctx, &kgo.Record{Topic: remote, Value: []byte("not allowed")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("producing to %s as %s: %v, want TOPIC_AUTHORIZATION_FAILED", remote, user, err)
	}

	again, err := s.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() || again.Present != len(want) {
		t.Fatalf("plan after the sync: add %v, problems %v, present %d; want nothing to add and %d present",
			again.Add, again.Problems, again.Present, len(want))
	}
}

// describeErr returns the error of listing topic's end offsets (DESCRIBE on the topic).
func describeErr(ctx context.Context, adm *kadm.Client, topic string) error {
	offsets, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	return offsets.Error()
}

// A target admin that may describe ACLs but not create them (no ALTER on the CLUSTER) gets
// CLUSTER_AUTHORIZATION_FAILED from real Kafka for every binding: Strait reports each, logs
// each once, and keeps going; once an admin that may create them syncs, they are created.
//
// Kafka authorizes CreateAcls for the whole request and validates each binding only for
// what a source broker has already checked (resource and pattern types, a non-empty name, a
// principal "Type:name"), so no binding copied from a real source is refused alone: the
// mixed case, one binding refused and the others created, is TestRefusedBindingIsReportedAndTheRestSyncs
// on kfake.
func TestTargetRefusalIsReportedPerBinding(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	srcAdm, dstAdm := a.Admin(t), b.Admin(t)
	base := kafkatest.Name(t, "acl")
	user := "User:" + env.Security.SCRAM.User
	source := []acls.Binding{
		bind(acls.Topic, base+"-one", acls.Literal, user, acls.Read, acls.Allow),
		bind(acls.Topic, base+"-two", acls.Literal, user, acls.Read, acls.Allow),
	}
	createACLs(t, srcAdm, source...)
	deleteACLs(t, srcAdm, source...)
	want := []acls.Binding{
		bind(acls.Topic, "A."+base+"-one", acls.Literal, user, acls.Read, acls.Allow),
		bind(acls.Topic, "A."+base+"-two", acls.Literal, user, acls.Read, acls.Allow),
	}
	deleteACLs(t, dstAdm, want...)

	sec := env.Security
	describeOnly := bind("CLUSTER", "kafka-cluster", acls.Literal, "User:"+sec.Plain.User, "DESCRIBE", acls.Allow)
	createACLs(t, dstAdm, describeOnly)
	deleteACLs(t, dstAdm, describeOnly)
	limited := kadm.NewClient(b.Client(t,
		kgo.SeedBrokers(b.ListenerSeeds(t, kafkatest.ListenerSASLPlaintext)...),
		kgo.SASL(plain.Auth{User: sec.Plain.User, Pass: sec.Plain.Password}.AsMechanism())))
	// The broker takes up the DESCRIBE grant a moment after CreateAcls returned.
	kafkatest.Eventually(t, 30*time.Second, func() error {
		results, err := limited.DescribeACLs(t.Context(), kadm.NewACLs().Topics().ResourcePatternType(kadm.ACLPatternAny).Operations().Allow().AllowHosts().Deny().DenyHosts())
		if err == nil {
			for _, r := range results {
				err = errors.Join(err, r.Err)
			}
		}
		return err
	})

	log, out := logger()
	cfg := flowConfig(t, base, false)
	s := acls.New(cfg, srcAdm, limited, log)
	for range 2 {
		done, err := s.Sync(t.Context())
		if err != nil {
			t.Fatalf("Sync() = %v, want the refusals as problems", err)
		}
		if len(done.Add) != 0 || len(done.Problems) != len(want) {
			t.Fatalf("Sync() added %v with problems %v; want both bindings refused", done.Add, done.Problems)
		}
		for i, p := range done.Problems {
			if p.Binding != want[i] || !strings.Contains(p.Error, "CLUSTER_AUTHORIZATION_FAILED") ||
				!strings.Contains(p.Error, "needs ALTER on the CLUSTER resource") {
				t.Errorf("problem %d: %v; want %v refused with CLUSTER_AUTHORIZATION_FAILED and the fix", i, p, want[i])
			}
		}
	}
	if st := s.Status(); len(st.Problems) != len(want) || st.Error != "" {
		t.Fatalf("Status() = %+v, want the %d problems", st, len(want))
	}
	if n := strings.Count(out.String(), "ACL not copied to the target"); n != len(want) {
		t.Fatalf("logged %d refusals over two syncs, want one per binding (%d):\n%s", n, len(want), out)
	}
	if got := bindingsOf(t, dstAdm, base); len(got) != 0 {
		t.Fatalf("the target holds %v after refusing them", lines(got))
	}

	if done, err := acls.New(cfg, srcAdm, dstAdm, log).Sync(t.Context()); err != nil || len(done.Problems) != 0 {
		t.Fatalf("Sync() by the super user = %+v, %v", done, err)
	}
	waitBindings(t, "the target's bindings", dstAdm, base, want)
	if p, err := s.Plan(t.Context()); err != nil || !p.Empty() {
		t.Fatalf("the limited admin's plan after that: %+v, %v; want empty", p, err)
	}
}

// waitBindings waits until the cluster's bindings whose resource name contains part are
// want: a broker's DescribeAcls answers from its metadata image, which takes up an ACL a
// moment after CreateAcls returned.
func waitBindings(t *testing.T, what string, adm *kadm.Client, part string, want []acls.Binding) {
	t.Helper()
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if got := bindingsOf(t, adm, part); !slices.Equal(got, want) {
			return fmt.Errorf("%s:\n got  %s\n want %s", what, lines(got), lines(want))
		}
		return nil
	})
}
