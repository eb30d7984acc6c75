package acls

import (
	"reflect"
	"strings"
	"testing"

	"strait/internal/policy"
)

func mustPolicy(t *testing.T, class string) policy.ReplicationPolicy {
	t.Helper()
	p, err := policy.New(class, policy.DefaultSeparator, true, "A")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustFilter(t *testing.T, include, exclude []string) *policy.Filter {
	t.Helper()
	f, err := policy.NewFilter(include, exclude)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// flowRules are the rules of flow A->B with MM2's default filters and policy, group ACLs
// off.
func flowRules(t *testing.T) rules {
	t.Helper()
	return rules{
		source: "A", target: "B",
		policy:     mustPolicy(t, policy.DefaultClass),
		topics:     mustFilter(t, policy.DefaultTopics(), policy.DefaultTopicsExclude()),
		heartbeats: true,
	}
}

func withGroups(t *testing.T, r rules) rules {
	t.Helper()
	r.groups = mustFilter(t, policy.DefaultGroups(), policy.DefaultGroupsExclude())
	r.ownGroup = func(g string) bool { return g == "strait-A" || g == "strait-B" }
	return r
}

func topicACL(name, pattern, op, perm string) Binding {
	return Binding{ResourceType: Topic, ResourceName: name, PatternType: pattern,
		Principal: "User:alice", Host: "*", Operation: op, Permission: perm}
}

func groupACL(name, pattern, op, perm string) Binding {
	b := topicACL(name, pattern, op, perm)
	b.ResourceType = Group
	return b
}

func TestCopyOf(t *testing.T) {
	identity := flowRules(t)
	identity.policy = mustPolicy(t, policy.IdentityClass)
	onlyOrders := flowRules(t)
	onlyOrders.topics = mustFilter(t, []string{`orders.*`}, nil)
	noHeartbeats := onlyOrders
	noHeartbeats.heartbeats = false
	withHostAndPrincipal := topicACL("orders", Literal, Read, Allow)
	withHostAndPrincipal.Principal, withHostAndPrincipal.Host = "User:CN=bob,O=acme", "10.0.0.7"
	wantHostAndPrincipal := withHostAndPrincipal
	wantHostAndPrincipal.ResourceName = "A.orders"

	tests := []struct {
		name    string
		rules   rules
		in      Binding
		want    Binding
		wantWhy string // a substring of the reason; "" when copied
	}{
		{"literal allow read", flowRules(t), topicACL("orders", Literal, Read, Allow), topicACL("A.orders", Literal, Read, Allow), ""},
		{"principal and host unchanged", flowRules(t), withHostAndPrincipal, wantHostAndPrincipal, ""},
		{"allow write dropped", flowRules(t), topicACL("orders", Literal, Write, Allow), Binding{}, "ALLOW WRITE is never copied"},
		{"allow write dropped on a prefix", flowRules(t), topicACL("orders", Prefixed, Write, Allow), Binding{}, "ALLOW WRITE"},
		{"allow all becomes read", flowRules(t), topicACL("orders", Literal, All, Allow), topicACL("A.orders", Literal, Read, Allow), ""},
		{"deny write kept", flowRules(t), topicACL("orders", Literal, Write, Deny), topicACL("A.orders", Literal, Write, Deny), ""},
		{"deny all kept", flowRules(t), topicACL("orders", Literal, All, Deny), topicACL("A.orders", Literal, All, Deny), ""},
		{"allow describe kept", flowRules(t), topicACL("orders", Literal, "DESCRIBE", Allow), topicACL("A.orders", Literal, "DESCRIBE", Allow), ""},
		{"allow describe configs kept", flowRules(t), topicACL("orders", Literal, "DESCRIBE_CONFIGS", Allow), topicACL("A.orders", Literal, "DESCRIBE_CONFIGS", Allow), ""},
		{"prefixed", flowRules(t), topicACL("orders-", Prefixed, Read, Allow), topicACL("A.orders-", Prefixed, Read, Allow), ""},
		{"prefixed allow all becomes read", flowRules(t), topicACL("orders-", Prefixed, All, Allow), topicACL("A.orders-", Prefixed, Read, Allow), ""},
		{"prefix the filter accepts", onlyOrders, topicACL("orders", Prefixed, Read, Allow), topicACL("A.orders", Prefixed, Read, Allow), ""},
		{"prefix shorter than the filter asks", onlyOrders, topicACL("ord", Prefixed, Read, Allow), Binding{}, "the prefix, read as a topic name, is not selected by topics"},
		{"topic the filter rejects", onlyOrders, topicACL("payments", Literal, Read, Allow), Binding{}, "the topic is not selected by topics and topics.exclude"},
		{"excluded by default", flowRules(t), topicACL("orders.replica", Literal, Read, Allow), Binding{}, "not selected"},
		{"internal topic", flowRules(t), topicACL("__consumer_offsets", Literal, Read, Allow), Binding{}, "internal"},
		{"internal prefix", flowRules(t), topicACL("__", Prefixed, Read, Allow), Binding{}, "the prefix, read as a topic name, is internal"},
		{"cycle", flowRules(t), topicACL("B.orders", Literal, Read, Allow), Binding{}, "came from B: replicating it back would be a cycle"},
		{"cycle prefix", flowRules(t), topicACL("B.ord", Prefixed, Read, Allow), Binding{}, "cycle"},
		{"deeper cycle", flowRules(t), topicACL("C.B.orders", Literal, Read, Allow), Binding{}, "cycle"},
		{"another cluster's remote topic", flowRules(t), topicACL("C.orders", Literal, Read, Allow), topicACL("A.C.orders", Literal, Read, Allow), ""},
		{"heartbeats despite the filter", onlyOrders, topicACL("heartbeats", Literal, Read, Allow), topicACL("A.heartbeats", Literal, Read, Allow), ""},
		{"heartbeats off", noHeartbeats, topicACL("heartbeats", Literal, Read, Allow), Binding{}, "not selected"},
		{"wildcard becomes the source's prefix", flowRules(t), topicACL(Wildcard, Literal, Read, Allow), topicACL("A.", Prefixed, Read, Allow), ""},
		{"wildcard allow all", flowRules(t), topicACL(Wildcard, Literal, All, Allow), topicACL("A.", Prefixed, Read, Allow), ""},
		{"wildcard deny", flowRules(t), topicACL(Wildcard, Literal, Write, Deny), topicACL("A.", Prefixed, Write, Deny), ""},
		{"wildcard the filter rejects", onlyOrders, topicACL(Wildcard, Literal, Read, Allow), Binding{}, "not selected"},
		{"identity literal", identity, topicACL("orders", Literal, All, Allow), topicACL("orders", Literal, Read, Allow), ""},
		{"identity prefix", identity, topicACL("orders-", Prefixed, Read, Allow), topicACL("orders-", Prefixed, Read, Allow), ""},
		{"identity wildcard stays", identity, topicACL(Wildcard, Literal, Read, Allow), topicACL(Wildcard, Literal, Read, Allow), ""},
		{"identity sees no cycle", identity, topicACL("B.orders", Literal, Read, Allow), topicACL("B.orders", Literal, Read, Allow), ""},
		{"identity heartbeats", identity, topicACL("heartbeats", Literal, Read, Allow), topicACL("A.heartbeats", Literal, Read, Allow), ""},
		{"group off", flowRules(t), groupACL("app", Literal, Read, Allow), Binding{}, "only TOPIC ACLs are copied"},
		{"group on", withGroups(t, flowRules(t)), groupACL("app", Literal, Read, Allow), groupACL("app", Literal, Read, Allow), ""},
		{"group allow all unchanged", withGroups(t, flowRules(t)), groupACL("app", Literal, All, Allow), groupACL("app", Literal, All, Allow), ""},
		{"group prefixed", withGroups(t, flowRules(t)), groupACL("app-", Prefixed, Read, Allow), groupACL("app-", Prefixed, Read, Allow), ""},
		{"group deny", withGroups(t, flowRules(t)), groupACL("app", Literal, Read, Deny), groupACL("app", Literal, Read, Deny), ""},
		{"group wildcard", withGroups(t, flowRules(t)), groupACL(Wildcard, Literal, Read, Allow), groupACL(Wildcard, Literal, Read, Allow), ""},
		{"group filtered out", withGroups(t, flowRules(t)), groupACL("console-consumer-1", Literal, Read, Allow), Binding{}, "not selected by groups and groups.exclude"},
		{"own progress group", withGroups(t, flowRules(t)), groupACL("strait-A", Literal, Read, Allow), Binding{}, "Strait's own"},
		{"cluster acl", withGroups(t, flowRules(t)), Binding{ResourceType: "CLUSTER", ResourceName: "kafka-cluster", PatternType: Literal, Principal: "User:alice", Host: "*", Operation: "ALTER", Permission: Allow}, Binding{}, "only TOPIC ACLs"},
		{"transactional id acl", flowRules(t), Binding{ResourceType: "TRANSACTIONAL_ID", ResourceName: "tx", PatternType: Literal, Principal: "User:alice", Host: "*", Operation: Write, Permission: Allow}, Binding{}, "only TOPIC ACLs"},
		{"match pattern", flowRules(t), topicACL("orders", "MATCH", Read, Allow), Binding{}, "only LITERAL and PREFIXED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := tt.rules.copyOf(tt.in)
			if tt.wantWhy == "" {
				if why != "" || got != tt.want {
					t.Fatalf("copyOf(%v)\n = %v (%q)\nwant %v", tt.in, got, why, tt.want)
				}
				return
			}
			if !strings.Contains(why, tt.wantWhy) || got != (Binding{}) {
				t.Fatalf("copyOf(%v) = %v, %q; want no copy because %q", tt.in, got, why, tt.wantWhy)
			}
		})
	}
}

// The spec's edge case, §5: MM2 turns a LITERAL "*" into a LITERAL ACL on the topic "A.*",
// which no topic can be named; Strait's copy covers every topic from A.
func TestWildcardIsNotTheLiteralTopicMM2Writes(t *testing.T) {
	got, why := flowRules(t).copyOf(topicACL(Wildcard, Literal, Read, Allow))
	if why != "" || got.ResourceName == "A.*" || got.PatternType != Prefixed || got.ResourceName != "A." {
		t.Fatalf("copyOf(literal *) = %v (%q), want PREFIXED A.", got, why)
	}
}

func TestWanted(t *testing.T) {
	r := flowRules(t)
	source := []Binding{
		topicACL("payments", Literal, Read, Allow),
		topicACL("orders", Literal, All, Allow),
		topicACL("orders", Literal, Read, Allow), // the same target binding as ALL
		topicACL("orders", Literal, Write, Allow),
		topicACL("__consumer_offsets", Literal, Read, Allow),
	}
	want, skipped := r.wanted(source)
	wantBindings := []Binding{topicACL("A.orders", Literal, Read, Allow), topicACL("A.payments", Literal, Read, Allow)}
	if !reflect.DeepEqual(want, wantBindings) {
		t.Errorf("want = %v\nexpected %v", want, wantBindings)
	}
	if len(skipped) != 2 || skipped[0].Binding.ResourceName != "__consumer_offsets" || skipped[1].Binding.Operation != Write {
		t.Errorf("skipped = %v, want __consumer_offsets then the ALLOW WRITE, sorted", skipped)
	}
}

func TestMissing(t *testing.T) {
	want := []Binding{
		topicACL("A.a", Literal, Read, Allow),
		topicACL("A.b", Literal, Read, Allow),
		topicACL("A.c", Prefixed, Read, Allow),
	}
	have := []Binding{
		topicACL("A.b", Literal, Read, Allow),
		topicACL("A.a", Literal, All, Allow),   // not an exact match: READ is still added
		topicACL("A.c", Literal, Read, Allow),  // another pattern type
		topicACL("local", Literal, All, Allow), // the target's own: kept, never deleted
	}
	add, present := missing(want, have)
	wantAdd := []Binding{topicACL("A.a", Literal, Read, Allow), topicACL("A.c", Prefixed, Read, Allow)}
	if !reflect.DeepEqual(add, wantAdd) || present != 1 {
		t.Fatalf("missing = %v, %d; want %v, 1", add, present, wantAdd)
	}
}

func TestBindingString(t *testing.T) {
	got := topicACL("A.orders", Literal, Read, Allow).String()
	want := "ResourcePattern(resourceType=TOPIC, name=A.orders, patternType=LITERAL): (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
	if got != want {
		t.Fatalf("String() = %q\nwant %q", got, want)
	}
}

func TestPlanEmpty(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want bool
	}{
		{"nothing", Plan{}, true},
		{"only present and skipped", Plan{Present: 3, Skipped: []Skip{{Reason: "x"}}}, true},
		{"security disabled", Plan{SourceSecurityDisabled: true}, true},
		{"an addition", Plan{Add: []Binding{topicACL("A.a", Literal, Read, Allow)}}, false},
		{"a problem", Plan{Problems: []Problem{{Error: "refused"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.plan.Empty(); got != tt.want {
				t.Fatalf("Empty() = %v, want %v", got, tt.want)
			}
		})
	}
}
