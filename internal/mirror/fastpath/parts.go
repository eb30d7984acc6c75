package fastpath

import (
	"fmt"
)

// dropQueue forgets what a partition fetched and did not send; the bytes
// of a batch in flight stay counted until its response.
func (f *Forwarder) dropQueue(fp *Part) {
	for _, q := range fp.queue {
		f.hold(fp, -q.held())
	}
	fp.queue = nil
}

// leave starts moving a partition to the record path: it stops fetching,
// drops what it fetched but did not send, and hands over once nothing is in
// flight (finishLeaving).
func (f *Forwarder) leave(fp *Part, reason string) {
	if fp.state == leaving || fp.state == gone {
		return
	}
	if fp.keep {
		f.fail(fp, fmt.Errorf("%s[%d] cannot stay on the fast path (%s), and keeping the source's offsets (strait.offsets.preserve) works only there: the record path cannot place records at given offsets; Strait stopped the partition (leave the topic out of strait.offsets.preserve.topics to copy it with new offsets)",
			fp.p.Source(), fp.p.Partition(), reason))
		return
	}
	if f.txn != nil {
		f.fail(fp, fmt.Errorf("%s[%d] cannot stay on the fast path (%s), and exactly-once mode copies only there: the record path has no transactions; Strait stopped the partition rather than copy it at least once (turn exactly-once mode off for this flow to copy it)",
			fp.p.Source(), fp.p.Partition(), reason))
		return
	}
	if fp.to(leaving) {
		fp.leaveReason = reason
		f.dropQueue(fp)
	}
}

func (f *Forwarder) finishLeaving() {
	for key, fp := range f.parts {
		if len(fp.sent) > 0 {
			continue
		}
		switch fp.state {
		case gone:
			f.dropQueue(fp)
			delete(f.parts, key)
			if next := f.waiting[key]; next != nil {
				delete(f.waiting, key)
				f.install([]*Part{next})
			}
		case leaving:
			f.dropQueue(fp)
			delete(f.parts, key)
			offset := fp.p.ResumeOffset()
			if offset < 0 {
				offset = fp.next
			}
			f.deps.ToRecordPath(fp.p, offset, fp.leaveReason)
		}
	}
}

// install adds partitions to the fast path. A partition whose source
// partition has an entry already (a topic deleted and recreated) replaces
// it only once the old entry's batches in flight are answered: until then
// it waits, and the old entry leaves.
func (f *Forwarder) install(parts []*Part) {
	for _, fp := range parts {
		key := tp{fp.p.Source(), fp.p.Partition()}
		if old := f.parts[key]; old != nil && old != fp {
			f.drop(old, fmt.Errorf("%s[%d] was started again (its topic recreated) while batches of its earlier start were in the transaction", old.p.Source(), old.p.Partition()))
			if len(old.sent) > 0 {
				f.waiting[key] = fp
				continue
			}
			delete(f.parts, key)
		}
		fp.conn = f.conns // spreads partitions over the produce connections
		f.conns++
		f.parts[key] = fp
		f.srcStale, f.dstStale = true, true
	}
}

// dropRemoved forgets partitions of topics deleted on the source.
func (f *Forwarder) dropRemoved() {
	for _, fp := range f.parts {
		if fp.p.Removed() {
			f.drop(fp, fmt.Errorf("the source topic of %s[%d] was deleted while the partition held batches of the transaction not acknowledged", fp.p.Source(), fp.p.Partition()))
		}
	}
}

// drop makes a partition leave the fast path once its batches in flight
// are answered (finishLeaving), dropping what it has queued. In
// exactly-once mode, queued batches of open fate end the attempt with why
// (stoppedInTxn): they may be on the target.
func (f *Forwarder) drop(fp *Part, why error) {
	if fp.state == gone {
		return
	}
	f.stoppedInTxn(fp, why)
	fp.to(gone)
	f.dropQueue(fp)
}

func (f *Forwarder) fail(fp *Part, err error) {
	f.drop(fp, err)
	if fp.p.Stop(err) {
		f.log.Error("partition stopped", "topic", fp.p.Source(), "partition", fp.p.Partition(), "err", err)
	}
}
