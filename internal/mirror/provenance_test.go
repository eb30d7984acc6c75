package mirror

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

// fakeReturned is a reverse flow's registry: pids in ours are its.
type fakeReturned struct {
	ours     map[int64]bool
	resolved map[int64]bool
}

func (r *fakeReturned) Resolve(_ context.Context, pids []int64) error {
	for _, pid := range pids {
		r.resolved[pid] = true
	}
	return nil
}

func (r *fakeReturned) Returned(pid int64) bool { return r.resolved[pid] && r.ours[pid] }

// The record path passes over the reverse flow's records as it does over
// transaction markers: they are not produced and progress moves past them.
func TestRecordPathSkipsRecordsTheReverseFlowWrote(t *testing.T) {
	m := testMirror()
	m.deps.Provenance.Returned = &fakeReturned{ours: map[int64]bool{42: true}, resolved: map[int64]bool{42: true, 7: true}}
	p := testPartition()
	var recs []*kgo.Record
	for off, pid := range []int64{7, 42, 42, 7} {
		recs = append(recs, &kgo.Record{Offset: int64(off), ProducerID: pid, Value: []byte("v")})
	}
	send, _ := p.sendRecords(recs, 1, 0, m.notCopied)
	if len(send) != 2 || send[0].Offset != 0 || send[1].Offset != 3 {
		t.Fatalf("sent %d records, want offsets 0 and 3", len(send))
	}
	p.ackRecord(0, 100)
	p.ackRecord(3, 101)
	if got := acked(p); got != 4 {
		t.Fatalf("progress %d after acknowledging offsets 0 and 3, want 4 (1 and 2 skipped)", got)
	}
}

// A renewed record-path producer id is registered by a goroutine the
// mirror owns, not by one the promise starts: noticing it starts nothing,
// and the registration stops with the flow.
func TestRenewedProducerIDRegisteredByAnOwnedGoroutine(t *testing.T) {
	m := testMirror()
	registered := make(chan int64, 1)
	m.deps.Provenance.Register = func(ctx context.Context, pid int64) error {
		registered <- pid
		<-ctx.Done() // a target that does not answer
		return ctx.Err()
	}
	m.recordPID.Store(7)
	before := goleak.IgnoreCurrent()
	m.checkRecordProducer(8)
	goleak.VerifyNone(t, before) // noticing the new id started nothing

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.registerRenewed(ctx); close(done) }()
	select {
	case pid := <-registered:
		if pid != 8 {
			t.Fatalf("registered producer id %d, want 8", pid)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the renewed producer id 8 was not registered within 30 s")
	}
	cancel()
	<-done // the registration ends with the flow
}
