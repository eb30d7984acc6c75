package fastpath

import "testing"

// TestLifecycleTransitions: the legal moves of a partition on the fast path
// and of a transaction succeed; an illegal one panics under go test (and
// elsewhere changes nothing).
func TestLifecycleTransitions(t *testing.T) {
	fp := NewPart(testPartition(), 0)
	for _, s := range []fastState{rewinding, flowing, leaving, gone} {
		if !fp.to(s) {
			t.Fatalf("the move to %s was refused", s)
		}
	}
	mustPanic(t, "gone to flowing", func() { fp.to(flowing) })
	mustPanic(t, "leaving to flowing", func() { (&Part{p: testPartition(), state: leaving}).to(flowing) })

	tx := newTxnState(Transactions{}, "idx")
	for _, p := range []txnPhase{txnEnding, txnCommitting, txnOpen, txnEnding, txnCommitting, txnFinished} {
		tx.to(p)
		if tx.phase != p {
			t.Fatalf("the move to %s was refused", p)
		}
	}
	mustPanic(t, "finished to open", func() { tx.to(txnOpen) })
	mustPanic(t, "open to committing", func() { (&txnState{phase: txnOpen}).to(txnCommitting) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("the illegal move %s did not panic", what)
		}
	}()
	f()
}
