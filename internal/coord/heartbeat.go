package coord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeat is the heartbeat goroutine of one generation, which the loop starts after a
// successful SyncGroup and stops before its next JoinGroup (a heartbeat of the old
// generation would be answered ILLEGAL_GENERATION once the next one is under way).
type heartbeat struct {
	cancel    context.CancelFunc
	done      chan struct{} // closed when the goroutine has ended
	rebalance chan struct{} // capacity 1: the broker answered REBALANCE_IN_PROGRESS
	err       error         // why the membership was lost; written before done is closed
}

func (m *Member) startHeartbeat(ctx context.Context, g generation) {
	hctx, cancel := context.WithCancel(ctx)
	h := &heartbeat{cancel: cancel, done: make(chan struct{}), rebalance: make(chan struct{}, 1)}
	m.hb = h
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(h.done)
		h.err = m.heartbeats(hctx, g, h.rebalance)
	}()
}

// stopHeartbeat ends the heartbeat goroutine, if one runs, and waits for it.
func (m *Member) stopHeartbeat() {
	if m.hb == nil {
		return
	}
	m.hb.cancel()
	<-m.hb.done
	m.hb = nil
}

// lost returns why the heartbeats ended on their own, nil while they run.
func (h *heartbeat) lost() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// heartbeats sends a heartbeat at once and then every interval, until ctx is done or the
// membership is lost, which it returns. Only a heartbeat answered without error renews
// the lease, from the time it was sent. A heartbeat due a session timeout or more after
// the coordinator last answered the membership is not sent: the membership counts as
// lost (silent).
func (m *Member) heartbeats(ctx context.Context, g generation, rebalance chan<- struct{}) error {
	t := time.NewTimer(0)
	defer t.Stop()
	failing := "" // the error of the last heartbeat, until one is accepted
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if m.beforeHeartbeat != nil {
			m.beforeHeartbeat(ctx)
		}
		start, sent := time.Now(), m.now()
		if err := m.silent(g.id, sent); err != nil {
			m.markLost(g.memberID, err)
			return err
		}
		err := m.beat(ctx, g)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err == nil:
			m.renew(g.memberID, sent, failing)
			if failing != "" {
				m.log.Info("heartbeats accepted again", "generation", g.id)
				failing = ""
			}
		case classify(err) == lost:
			m.markLost(g.memberID, err)
			return err
		case errors.Is(err, kerr.RebalanceInProgress):
			m.touch(g.memberID, sent) // the coordinator checked the member and generation first
			select {
			case rebalance <- struct{}{}:
			default:
			}
		default:
			m.mu.Lock()
			m.s.err = err.Error()
			m.mu.Unlock()
			if failing == "" && !expected(err) {
				m.log.Warn("heartbeat failed; the lease lapses unless the next one is accepted", "generation", g.id, "err", err)
			}
			failing = err.Error()
		}
		t.Reset(max(0, m.cfg.HeartbeatInterval-time.Since(start)))
	}
}

func (m *Member) beat(ctx context.Context, g generation) error {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group = m.cfg.Group
	req.Generation = g.id
	req.MemberID = g.memberID
	// An answer later than the lease term cannot renew the lease.
	rctx, cancel := context.WithTimeout(ctx, m.leaseTerm())
	defer cancel()
	resp, err := req.RequestWith(rctx, m.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("heartbeat of group %q in generation %d: %w", m.cfg.Group, g.id, err)
	}
	return nil
}

// errSilent is the loss of a membership the coordinator did not answer for a session
// timeout (silent).
var errSilent = errors.New("no answer from the coordinator for a session timeout or more")

// silent returns why the membership must count as lost when it acts at at (a heartbeat
// due, a rejoin), a session timeout or more after the coordinator last answered it, and
// nil otherwise. The coordinator evicts a member a session timeout after it last heard
// of it, and gives its work to others; a member that resumes after such a silence (its
// process stopped, the coordinator down or cut off) cannot know whether it was evicted,
// and a coordinator that lost state may even accept its old generation again: Kafka
// 4.1 did once, right after a restart, and the member wrote a partition another node
// owned (the soak, seed 1796491074656121718).
func (m *Member) silent(generation int32, at time.Time) error {
	m.mu.Lock()
	last := m.s.contact
	m.mu.Unlock()
	if silence := at.Sub(last); !last.IsZero() && silence >= m.cfg.SessionTimeout {
		return fmt.Errorf("group %q, generation %d: %w: none for %v (session timeout %v), so it may have evicted this member and given its work to another",
			m.cfg.Group, generation, errSilent, silence.Round(time.Millisecond), m.cfg.SessionTimeout)
	}
	return nil
}

// touch records that the coordinator answered a heartbeat of memberID's membership sent
// at sent.
func (m *Member) touch(memberID string, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s.held && m.s.memberID == memberID {
		m.s.contact = later(m.s.contact, sent)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// renew extends the lease of memberID's membership to sent, and clears the status's
// error if it is the heartbeats' last one.
func (m *Member) renew(memberID string, sent time.Time, failed string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.s.held || m.s.memberID != memberID {
		return
	}
	m.s.heartbeat, m.s.contact = later(m.s.heartbeat, sent), later(m.s.contact, sent)
	if failed != "" && m.s.err == failed {
		m.s.err = ""
	}
}

// markLost ends the lease at once when the heartbeats learn the membership is gone; the
// loop then calls lose.
func (m *Member) markLost(memberID string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s.memberID != memberID {
		return
	}
	m.s.held, m.s.state, m.s.heartbeat, m.s.err = false, StateLost, time.Time{}, err.Error()
}
