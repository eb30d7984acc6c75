package acls_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/acls"
	"strait/internal/kafkatest"
	"strait/internal/policy"
)

// adminTimeout bounds one admin call of a test.
const adminTimeout = 30 * time.Second

func bind(typ, name, pattern, principal, op, perm string) acls.Binding {
	return acls.Binding{ResourceType: typ, ResourceName: name, PatternType: pattern,
		Principal: principal, Host: "*", Operation: op, Permission: perm}
}

// createACLs creates bindings as they are, failing the test on any error.
func createACLs(t *testing.T, adm *kadm.Client, bs ...acls.Binding) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), adminTimeout)
	defer cancel()
	for _, b := range bs {
		results, err := adm.CreateACLs(ctx, builder(t, b))
		if err == nil {
			for _, r := range results {
				if r.Err != nil {
					err = r.Err
				}
			}
		}
		if err != nil {
			t.Fatalf("creating ACL %v: %v", b, err)
		}
	}
}

func builder(t *testing.T, b acls.Binding) *kadm.ACLBuilder {
	t.Helper()
	pattern, err := kmsg.ParseACLResourcePatternType(b.PatternType)
	if err != nil {
		t.Fatal(err)
	}
	op, err := kmsg.ParseACLOperation(b.Operation)
	if err != nil {
		t.Fatal(err)
	}
	bl := kadm.NewACLs().ResourcePatternType(pattern).Operations(op)
	switch b.ResourceType {
	case acls.Topic:
		bl.Topics(b.ResourceName)
	case acls.Group:
		bl.Groups(b.ResourceName)
	case "CLUSTER":
		bl.Clusters()
	default:
		t.Fatalf("resource type %s in a test binding", b.ResourceType)
	}
	if b.Permission == acls.Allow {
		bl.Allow(b.Principal).AllowHosts(b.Host)
	} else {
		bl.Deny(b.Principal).DenyHosts(b.Host)
	}
	return bl
}

// bindingsOf returns the cluster's TOPIC and GROUP bindings whose resource name contains
// part, sorted as a Plan sorts them.
func bindingsOf(t *testing.T, adm *kadm.Client, part string) []acls.Binding {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), adminTimeout)
	defer cancel()
	filter := kadm.NewACLs().Topics().Groups().ResourcePatternType(kadm.ACLPatternAny).Operations().
		Allow().AllowHosts().Deny().DenyHosts()
	results, err := adm.DescribeACLs(ctx, filter)
	if err != nil {
		t.Fatalf("describing ACLs: %v", err)
	}
	var out []acls.Binding
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("describing ACLs: %v", r.Err)
		}
		for _, d := range r.Described {
			if strings.Contains(d.Name, part) {
				out = append(out, acls.Binding{ResourceType: d.Type.String(), ResourceName: d.Name, PatternType: d.Pattern.String(),
					Principal: d.Principal, Host: d.Host, Operation: d.Operation.String(), Permission: d.Permission.String()})
			}
		}
	}
	sortBindings(out)
	return out
}

func sortBindings(bs []acls.Binding) {
	slices.SortFunc(bs, func(a, b acls.Binding) int { return strings.Compare(key(a), key(b)) })
}

// key orders bindings as the package does: resource, then entry.
func key(b acls.Binding) string {
	return strings.Join([]string{b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission}, "\x00")
}

// flowConfig is the config of flow A->B with the default policy, selecting the topics
// (and, with groups, the groups) whose names start with prefix.
func flowConfig(t *testing.T, prefix string, groups bool) acls.Config {
	t.Helper()
	pol, err := policy.New(policy.DefaultClass, policy.DefaultSeparator, true, "")
	if err != nil {
		t.Fatal(err)
	}
	topics, err := policy.NewFilter([]string{prefix + ".*"}, []string{prefix + "-secret.*"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := acls.Config{Flow: "A->B", Source: "A", Target: "B", Policy: pol, Topics: topics, HeartbeatsReplication: true}
	if groups {
		if cfg.Groups, err = policy.NewFilter([]string{prefix + ".*"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// logger returns a logger writing to the returned buffer.
func logger() (*slog.Logger, *kafkatest.SyncBuffer) {
	var buf kafkatest.SyncBuffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

func equalBindings(t *testing.T, what string, got, want []acls.Binding) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %s\n want %s", what, lines(got), lines(want))
	}
}

func lines(bs []acls.Binding) string {
	if len(bs) == 0 {
		return "(none)"
	}
	var s []string
	for _, b := range bs {
		s = append(s, b.String())
	}
	return strings.Join(s, "\n       ")
}
