package mirror

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
)

// A shared flow's progress commit carries the node's generation: the
// broker takes it from the member and refuses it with a stale generation,
// and a node that is not a member commits nothing.
func TestCommitCarriesTheGeneration(t *testing.T) {
	c := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t"))
	cl := newClient(t, c)
	const group = "strait-A"
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = group, "strait", 30_000, 30_000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "strait-v1", Metadata: []byte{}}}
	var jr *kmsg.JoinGroupResponse
	for {
		resp, err := join.RequestWith(t.Context(), cl)
		if err != nil {
			t.Fatal(err)
		}
		if errors.Is(kerr.ErrorForCode(resp.ErrorCode), kerr.MemberIDRequired) {
			join.MemberID = resp.MemberID
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatal(err)
		}
		jr = resp
		break
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = group, jr.Generation, jr.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("strait"), kmsg.StringPtr("strait-v1")
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: []byte{}}}
	if resp, err := sync.RequestWith(t.Context(), cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("SyncGroup: %v, %+v", err, resp)
	}

	m := testMirror()
	m.cl = Clients{Meta: cl}
	m.dstAdm = kadm.NewClient(cl)
	m.cfg.Group = group
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "A.t", Partition: 0, At: 5, LeaderEpoch: -1})
	for _, c := range []struct {
		name       string
		generation int32
		member     string
		ok         bool
		want       error
	}{
		{"the member's generation", jr.Generation, jr.MemberID, true, nil},
		{"a stale generation", jr.Generation - 1, jr.MemberID, true, kerr.IllegalGeneration},
		{"not a member", 0, "", false, errNotMember},
	} {
		t.Run(c.name, func(t *testing.T) {
			m.deps.Share.Generation = func() (int32, string, bool) { return c.generation, c.member, c.ok }
			resps, err := m.commitOffsets(t.Context(), offs)
			if err == nil {
				r, _ := resps.Lookup("A.t", 0)
				err = r.Err
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("commit: %v, want %v", err, c.want)
			}
		})
	}
	fetched, err := kadm.NewClient(cl).FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup("A.t", 0); o.At != 5 {
		t.Fatalf("committed offset %d, want 5 from the member's commit", o.At)
	}
}

// TestCommitWritesNoIndexWithoutTheMembership: a node that may not commit
// (its mirror's membership is gone, or its lease lapsed) writes no offset
// index record either. The index was written before, and regardless of,
// the generation check, so a node fenced out of the flow wrote segments
// among its successor's (the path 3), which translation then read.
func TestCommitWritesNoIndexWithoutTheMembership(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share Share
		want  error
	}{
		{"not a member", Share{Generation: func() (int32, string, bool) { return 0, "", false }}, errNotMember},
		{"lease lapsed", Share{
			Generation: func() (int32, string, bool) { return 3, "m", true },
			LeaseUntil: func() time.Time { return time.Now().Add(-time.Second) },
		}, errLeaseLapsedCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t", "strait-index.A.internal"))
			cl := newClient(t, c)
			m := testMirror()
			m.cl = Clients{Meta: cl}
			m.dstAdm = kadm.NewClient(cl)
			m.cfg.Group, m.cfg.IndexTopic, m.deps.Share = "strait-A", "strait-index.A.internal", tc.share
			p := testPartition()
			p.owned = true
			m.topics["t"] = p.topic
			p.AckBatch(0, 0, 10, 10)
			if err := m.commit(t.Context()); !errors.Is(err, tc.want) {
				t.Fatalf("commit: %v, want %v", err, tc.want)
			}
			ends, err := kadm.NewClient(cl).ListEndOffsets(t.Context(), "strait-index.A.internal")
			if err != nil {
				t.Fatal(err)
			}
			if o, _ := ends.Lookup("strait-index.A.internal", 0); o.Offset != 0 {
				t.Fatalf("%d offset index records written without the membership", o.Offset)
			}
			// What was not written waits for the next commit.
			if _, _, changes, _ := p.drain(); len(changes) == 0 {
				t.Fatal("the partition's index changes were drained and lost")
			}
		})
	}
}

// TestAnIdleTransactionNeedsNoLease: in exactly-once mode a transaction
// ends every interval, written to or not. One with nothing to write asked
// for the lease all the same, so a node with nothing to copy aborted its
// attempt at every tick of a rebalance (the lease is off while the member
// rejoins), and its backoff grew to delay the copy after it. Only a
// transaction that writes needs the lease.
func TestAnIdleTransactionNeedsNoLease(t *testing.T) {
	m := testMirror()
	m.lastPrune = time.Now()
	m.deps.Share = Share{
		Generation: func() (int32, string, bool) { return 3, "m", true },
		LeaseUntil: func() time.Time { return time.Now().Add(-time.Second) },
	}
	p := testPartition()
	p.owned = true
	m.topics["t"] = p.topic
	if _, err := m.commitTxn(t.Context(), fastpath.Producer{}, false, false, 0); err != nil {
		t.Fatalf("a transaction with nothing to write: %v, want no error", err)
	}
	if _, err := m.commitTxn(t.Context(), fastpath.Producer{}, true, false, 0); !errors.Is(err, errLeaseLapsedCommit) {
		t.Fatalf("an open transaction: %v, want %v", err, errLeaseLapsedCommit)
	}
	p.AckBatch(0, 0, 10, 10)
	if _, err := m.commitTxn(t.Context(), fastpath.Producer{}, false, false, 0); !errors.Is(err, errLeaseLapsedCommit) {
		t.Fatalf("progress to commit: %v, want %v", err, errLeaseLapsedCommit)
	}
}
