package mirror

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// registerRecordProducer registers the record path's producer id before
// the poll loop hands the producer a record (Provenance.Register). A target
// that cannot take the registration is retried: copying without it would
// let an active-active pair loop.
func (m *Mirror) registerRecordProducer(ctx context.Context) error {
	reg := m.cfg.Provenance.Register
	if reg == nil {
		return nil
	}
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
		pid, _, err := m.dst.ProducerID(ctx)
		if err == nil {
			if err = reg(ctx, pid); err == nil {
				m.recordPID.Store(pid)
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		m.log.Warn("registering the record path's producer id failed; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// checkRecordProducer notices, from an acknowledged record, that franz-go
// renewed the record path's producer id (it does after the target lost our
// producer state and refused an epoch bump) and registers the new one. The
// records written with it before the registration lands may be copied back
// once by the reverse flow: the warning says so.
func (m *Mirror) checkRecordProducer(pid int64) {
	reg := m.cfg.Provenance.Register
	if reg == nil || pid < 0 {
		return
	}
	if old := m.recordPID.Load(); old == pid || !m.recordPID.CompareAndSwap(old, pid) {
		return
	}
	m.log.Warn("the record path's producer id changed; registering it: records written with it before the registration may be copied back once by the reverse flow", "producer_id", pid)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := reg(ctx, pid); err != nil {
			m.log.Error("registering the record path's new producer id failed: the reverse flow may copy its records back", "producer_id", pid, "err", err)
		}
	}()
}

// notCopied reports whether a fetched record only moves progress: a
// transaction marker, or a record the reverse flow of an active-active
// pair wrote (its producer id resolved by resolveReturned).
func (m *Mirror) notCopied(r *kgo.Record) bool {
	if r.Attrs.IsControl() {
		return true
	}
	ret := m.cfg.Provenance.Returned
	return ret != nil && ret.Returned(r.ProducerID)
}

// resolveReturned looks up the producer ids of fetched records that the
// reverse flow's filter has not seen yet. The registry is on the cluster
// the records come from, so a failure is retried until ctx ends: no record
// may go on undecided.
func (m *Mirror) resolveReturned(ctx context.Context, recs []*kgo.Record) error {
	ret := m.cfg.Provenance.Returned
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
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := ret.Resolve(ctx, pids)
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		m.log.Warn("record path: reading the producer registry on the source failed; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
