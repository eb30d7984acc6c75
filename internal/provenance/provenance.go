// Package provenance keeps active-active flows (A->B and B->A running at
// once) from copying a record back to the cluster it came from, without
// adding a byte to any record, so the fast path still forwards batches
// unchanged.
//
// Every flow registers each producer id it writes with on its target, in
// the compacted topic strait-producers.internal of that cluster, before it
// writes a single batch with that id. A flow whose reverse flow is
// configured skips, on its source, every batch written by one of the
// reverse flow's registered ids: those records came from this flow's
// target. Producer ids are unique per cluster and never reused, and the
// registration is acknowledged before the first batch, so when a batch
// shows an id not seen before, reading the registry to its end decides the
// batch for good: the id is the reverse flow's, or it never will be.
//
// MM2 itself only breaks cycles by topic name (spec §3.4), which the
// identity policy defeats; with the default policy the names already do,
// and the registry finds nothing to skip.
package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic is the registry topic on every cluster Strait writes to.
const Topic = "strait-producers.internal"

// entry is one registry record: flow wrote to this cluster with pid.
type entry struct {
	Flow       string    `json:"flow"`
	ProducerID int64     `json:"producer_id"`
	Registered time.Time `json:"registered"`
}

// Register records, on the cluster cl writes to, that flow writes with
// producer id pid. It returns once the record is acknowledged; a flow must
// not write with pid before.
func Register(ctx context.Context, cl *kgo.Client, flow string, pid int64) error {
	if pid < 0 {
		return fmt.Errorf("registering producer id %d of flow %s: not an idempotent producer id", pid, flow)
	}
	value, err := json.Marshal(entry{Flow: flow, ProducerID: pid, Registered: time.Now().UTC()})
	if err != nil {
		return err
	}
	rec := &kgo.Record{Topic: Topic, Key: []byte(flow + "/" + strconv.FormatInt(pid, 10)), Value: value}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("registering producer id %d of flow %s in %s: %w", pid, flow, Topic, err)
	}
	return nil
}

// Filter recognises, on one flow's source cluster, the batches that the
// reverse flow wrote there. It is safe for concurrent use.
type Filter struct {
	reverse string      // the flow whose writes are skipped, e.g. "B->A" for flow A->B
	cl      *kgo.Client // reads the registry on the source cluster; no consume options
	adm     *kadm.Client

	syncMu    sync.Mutex      // one registry read at a time
	consuming bool            // cl consumes the registry (after its first read)
	read      map[int32]int64 // next registry offset to read, per partition

	mu    sync.RWMutex
	known map[int64]bool // producer id -> written by reverse
}

// NewFilter returns a filter of the batches flow reverse wrote to the
// cluster cl reads. cl must have no consume options; the filter adds the
// registry's partitions to it.
func NewFilter(cl *kgo.Client, reverse string) *Filter {
	return &Filter{reverse: reverse, cl: cl, adm: kadm.NewClient(cl), read: map[int32]int64{}, known: map[int64]bool{}}
}

// Returned reports whether pid, already resolved, is one of the reverse
// flow's producer ids: its records came from this flow's target. An id
// that was never resolved reports false.
func (f *Filter) Returned(pid int64) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.known[pid]
}

// Resolve makes every pid in pids known, reading the registry to its end
// if any of them is new. Negative ids (producers without idempotence, never
// Strait's) need nothing.
func (f *Filter) Resolve(ctx context.Context, pids []int64) error {
	if len(f.unknown(pids)) == 0 {
		return nil
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	todo := f.unknown(pids) // another caller may have read the registry meanwhile
	if len(todo) == 0 {
		return nil
	}
	if err := f.readToEnd(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, pid := range todo {
		if _, ok := f.known[pid]; !ok {
			f.known[pid] = false
		}
	}
	return nil
}

func (f *Filter) unknown(pids []int64) []int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []int64
	for _, pid := range pids {
		if _, ok := f.known[pid]; !ok && pid >= 0 {
			out = append(out, pid)
		}
	}
	return out
}

// readToEnd reads the registry up to its end offsets as listed now. A
// cluster without the registry topic has no registered producer.
func (f *Filter) readToEnd(ctx context.Context) error {
	ends, err := f.adm.ListEndOffsets(ctx, Topic)
	if err != nil {
		return fmt.Errorf("listing the end of %s: %w", Topic, err)
	}
	if err := ends.Error(); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil
		}
		return fmt.Errorf("listing the end of %s: %w", Topic, err)
	}
	behind := func() bool {
		for _, end := range ends[Topic] {
			if f.read[end.Partition] < end.Offset {
				return true
			}
		}
		return false
	}
	if !behind() {
		return nil
	}
	if !f.consuming {
		parts := map[int32]kgo.Offset{}
		for _, end := range ends[Topic] {
			parts[end.Partition] = kgo.NewOffset().AtStart()
		}
		f.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{Topic: parts})
		f.consuming = true
	}
	for behind() {
		fetches := f.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", Topic, err)
		}
		var fetchErr error
		fetches.EachError(func(_ string, _ int32, err error) { fetchErr = errors.Join(fetchErr, err) })
		if fetchErr != nil {
			return fmt.Errorf("reading %s: %w", Topic, fetchErr)
		}
		fetches.EachRecord(f.learn)
	}
	return nil
}

// learn takes one registry record. A record that is not an entry (written
// by something else) is passed over: the registry only ever adds ids.
func (f *Filter) learn(r *kgo.Record) {
	f.read[r.Partition] = r.Offset + 1
	var e entry
	if json.Unmarshal(r.Value, &e) != nil || e.Flow != f.reverse {
		return
	}
	f.mu.Lock()
	f.known[e.ProducerID] = true
	f.mu.Unlock()
}
