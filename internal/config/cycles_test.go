package config

import (
	"strings"
	"testing"
)

const threeClusters = `clusters = A, B, C
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
C.bootstrap.servers = c:9092
`

// A two-way pair is active-active: each flow knows its reverse is enabled,
// also on a node that runs only one of them (--clusters).
func TestReverseEnabledMarksActiveActivePairs(t *testing.T) {
	src := threeClusters + "A->B.enabled = true\nB->A.enabled = true\nB->C.enabled = true\n"
	c := mustParse(t, src)
	for name, want := range map[string]bool{"A->B": true, "B->A": true, "B->C": false} {
		if got := flowOf(t, c, name).ReverseEnabled; got != want {
			t.Errorf("%s.ReverseEnabled = %v, want %v", name, got, want)
		}
	}
	if !flowOf(t, mustParse(t, src, "B"), "A->B").ReverseEnabled {
		t.Error("with --clusters B, A->B does not know B->A is enabled")
	}
}

// A cycle of three flows loops with a policy that keeps names, and only
// two-way pairs are broken by producer ids: the config is refused, with the
// cycle named. The default policy breaks the cycle by names, as MM2 does.
func TestCycleThatWouldLoopIsRefused(t *testing.T) {
	ring := threeClusters + "A->B.enabled = true\nB->C.enabled = true\nC->A.enabled = true\n"
	_, err := parse(t, ring+"replication.policy.class = IdentityReplicationPolicy\n")
	if err == nil || !strings.Contains(err.Error(), "A->B, B->C, C->A form a cycle") {
		t.Fatalf("an identity ring of three: error %v, want the cycle named", err)
	}
	mustParse(t, ring) // default policy
	mustParse(t, threeClusters+"A->B.enabled = true\nB->A.enabled = true\nreplication.policy.class = IdentityReplicationPolicy\n")
	_, err = parse(t, ring+"B->C.replication.policy.class = IdentityReplicationPolicy\n")
	if err == nil || !strings.Contains(err.Error(), "form a cycle") {
		t.Fatalf("one identity flow on a ring: error %v, want the cycle named", err)
	}
}
