package fastpath

import (
	"fmt"
	"testing"
)

// fastState is where a partition is in its life on the fast path. It is the
// one field that says what the partition may do; only to changes it, and
// only along the transitions fastTransitions lists:
//
//		from \ to   flowing  rewinding  leaving  gone
//		flowing        .        yes       yes     yes
//		rewinding     yes        .         .      yes
//		leaving        .         .         .      yes
//		gone           .         .         .       .
//
//	  - flowing: it fetches, queues and sends.
//	  - rewinding: a batch it sent failed while batches sent after it are in
//	    flight; it sends nothing until every one is answered (settle), then
//	    all go back to its queue, in sequence order, and it is flowing again
//	    (or leaves, or is gone, as the first failure says: failedSend).
//	  - leaving: it moves to the record path (leaveReason); it fetches and
//	    sends nothing, and is handed over once nothing it sent is in flight
//	    (finishLeaving).
//	  - gone: stopped with an error (partition.err), its source topic deleted,
//	    or replaced by a new entry; it fetches and sends nothing, and its
//	    entry is removed once nothing it sent is in flight.
//
// Besides its state a partition has attributes that are not states: a fetch
// or a log start listing outstanding (fetching, resolving), retry marks
// (crcRetried, oooRetried), the pipelining gate (confirmed...), whether its
// queue is copied out of fetch responses (stuck), and its position.
type fastState uint8

const (
	flowing fastState = iota
	rewinding
	leaving
	gone
)

func (s fastState) String() string {
	return [...]string{"flowing", "rewinding", "leaving", "gone"}[s]
}

// fastTransitions are the legal moves of fastState.
var fastTransitions = map[fastState][]fastState{
	flowing:   {rewinding, leaving, gone},
	rewinding: {flowing, gone},
	leaving:   {gone},
}

// to moves fp to state next. An illegal move is a bug: it panics under go
// test, and elsewhere leaves the state as it is and reports false.
func (fp *Part) to(next fastState) bool {
	for _, s := range fastTransitions[fp.state] {
		if s == next {
			fp.state = next
			return true
		}
	}
	if testing.Testing() {
		panic(fmt.Sprintf("fast path: %s[%d] moved from %s to %s", fp.p.Source(), fp.p.Partition(), fp.state, next))
	}
	return false
}

// sending reports whether the partition may fetch and send: flowing or
// rewinding, and not stopped.
func (fp *Part) sending() bool {
	return (fp.state == flowing || fp.state == rewinding) && fp.p.Failed() == nil
}

// txnPhase is where exactly-once mode's open transaction is (txnState); only
// to changes it, along txnTransitions:
//
//		from \ to    open  ending  committing  finished  aborted
//		open           .     yes       .          yes       yes
//		ending         .      .       yes          .        yes
//		committing    yes     .        .          yes       yes
//		finished       .      .        .           .         .
//		aborted        .      .        .           .         .
//
//	  - open: partitions with batches to send join it, and batches go.
//	  - ending: after the transaction interval, or when the flow stops: no
//	    new batch is sent; batches sent in it and put back after a failure
//	    go again, until every one is acknowledged (or half the transaction
//	    timeout passed: aborted).
//	  - committing: the commit goroutine writes the index records and the
//	    progress into it and ends it (Mirror.CommitTxn); open again after,
//	    or finished when the flow stops.
//	  - finished: the last transaction committed (or none was needed: no
//	    producer id) after the flow began to stop; the forwarder returns.
//	  - aborted: the attempt failed (forwarder.failed says why); the
//	    forwarder returns once nothing is in flight, and Mirror.Run aborts
//	    the transaction and starts a new attempt.
//
// A new producer id (begin) starts a transaction from open, ending or
// committing: the moves in parentheses.
type txnPhase uint8

const (
	txnOpen txnPhase = iota
	txnEnding
	txnCommitting
	txnFinished
	txnAborted
)

func (p txnPhase) String() string {
	return [...]string{"open", "ending", "committing", "finished", "aborted"}[p]
}

// txnTransitions are the legal moves of txnPhase.
var txnTransitions = map[txnPhase][]txnPhase{
	txnOpen:       {txnOpen, txnEnding, txnFinished, txnAborted},
	txnEnding:     {txnOpen, txnCommitting, txnAborted},
	txnCommitting: {txnOpen, txnFinished, txnAborted},
}

// to moves the transaction to phase next: an illegal move panics under go
// test, and elsewhere leaves the phase as it is.
func (t *txnState) to(next txnPhase) {
	for _, p := range txnTransitions[t.phase] {
		if p == next {
			t.phase = next
			return
		}
	}
	if testing.Testing() {
		panic(fmt.Sprintf("exactly-once mode: transaction moved from %s to %s", t.phase, next))
	}
}
