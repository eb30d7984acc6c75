package mirror

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// registerRecordProducer registers the record path's producer id before
// the poll loop hands the producer a record (Provenance.Register). A target
// that cannot take the registration is retried: copying without it would
// let an active-active pair loop. It returns when registered, or when ctx
// ends (the flow is stopping and hands the producer nothing).
func (m *Mirror) registerRecordProducer(ctx context.Context) {
	reg := m.deps.Provenance.Register
	if reg == nil {
		return
	}
	_ = m.untilDone(ctx, "registering the record path's producer id", 10*time.Second, func() error {
		pid, _, err := m.dst.ProducerID(ctx)
		if err == nil {
			if err = reg(ctx, pid); err == nil {
				m.recordPID.Store(pid)
			}
		}
		return err
	})
}

// untilDone calls try until it succeeds or ctx ends (returning ctx's
// error), waiting 100 ms after the first failure and twice as long after
// each next one, up to maxWait, and logging each failure of what.
func (m *Mirror) untilDone(ctx context.Context, what string, maxWait time.Duration, try func() error) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, maxWait) {
		err := try()
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		m.log.Warn(what+" failed; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// checkRecordProducer notices, from an acknowledged record, that franz-go
// renewed the record path's producer id (it does after the target lost our
// producer state and refused an epoch bump) and queues the new one for
// registerRenewed: the promise must not block. The records written with it
// before the registration lands may be copied back once by the reverse
// flow: the warning says so.
func (m *Mirror) checkRecordProducer(pid int64) {
	if m.deps.Provenance.Register == nil || pid < 0 {
		return
	}
	if old := m.recordPID.Load(); old == pid || !m.recordPID.CompareAndSwap(old, pid) {
		return
	}
	m.log.Warn("the record path's producer id changed; registering it: records written with it before the registration may be copied back once by the reverse flow", "producer_id", pid)
	m.renewMu.Lock()
	m.renewed = append(m.renewed, pid)
	m.renewMu.Unlock()
	select {
	case m.renewWake <- struct{}{}:
	default: // already signalled: the queue is read whole
	}
}

// registerRenewed registers the producer ids checkRecordProducer queued,
// until ctx ends. Mirror.Run owns it.
func (m *Mirror) registerRenewed(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.renewWake:
		}
		m.renewMu.Lock()
		pids := m.renewed
		m.renewed = nil
		m.renewMu.Unlock()
		for _, pid := range pids {
			if err := m.deps.Provenance.Register(ctx, pid); err != nil && ctx.Err() == nil {
				m.log.Error("registering the record path's new producer id failed: the reverse flow may copy its records back", "producer_id", pid, "err", err)
			}
		}
	}
}

// notCopied reports whether a fetched record only moves progress: a
// transaction marker, or a record the reverse flow of an active-active
// pair wrote (its producer id resolved by resolveReturned).
func (m *Mirror) notCopied(r *kgo.Record) bool {
	if r.Attrs.IsControl() {
		return true
	}
	ret := m.deps.Provenance.Returned
	return ret != nil && ret.Returned(r.ProducerID)
}

// resolveReturned looks up the producer ids of fetched records that the
// reverse flow's filter has not seen yet. The registry is on the cluster
// the records come from, so a failure is retried until ctx ends: no record
// may go on undecided.
func (m *Mirror) resolveReturned(ctx context.Context, recs []*kgo.Record) error {
	ret := m.deps.Provenance.Returned
	if ret == nil {
		return nil
	}
	var pids []int64
	last := int64(-2)
	for _, r := range recs {
		if r.ProducerID != last {
			last = r.ProducerID
			pids = append(pids, r.ProducerID)
		}
	}
	return m.untilDone(ctx, "record path: reading the producer registry on the source", 5*time.Second, func() error {
		return ret.Resolve(ctx, pids)
	})
}
