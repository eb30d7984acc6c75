// Package drill runs the disaster-recovery day as one command, against a
// pair of clusters: a synthetic producer and consumer group run on the
// primary A while Strait copies to B; A is taken for lost; strait failover
// moves the group to B, where it reads on while a producer writes to B;
// then strait failback returns it to A. It measures what the day cost: the
// RPO (records not copied when A was lost, and their age), the RTO (from
// the loss to the first record read on B), and the records lost, skipped
// and read twice by the consumer.
//
// The drill runs its own flows between the clusters, under aliases of its
// own (Alias), on a topic and group of its own, so it never touches the
// flows, topics or groups of the Strait nodes that copy production data.
package drill

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/flowconn"
	"strait/internal/kafkaclient"
	"strait/internal/switchover"
	"strait/internal/tail"
)

// Options are a drill's settings.
type Options struct {
	// Rate is the synthetic producer's records per second.
	Rate int
	// Warmup is how long production and consumption run on A before it is
	// taken for lost.
	Warmup time.Duration
	// Partitions of the drill topic.
	Partitions int32
	// Out gets the progress and the figures; Log the nodes' logs.
	Out io.Writer
	Log *slog.Logger
}

// Result is what the day cost.
type Result struct {
	Flow string `json:"flow"`
	// RPORecords are the records written on A and not copied when it was
	// lost; RPOSeconds how long before the loss the oldest was written.
	RPORecords int64   `json:"rpo_records"`
	RPOSeconds float64 `json:"rpo_seconds"`
	// RTOSeconds is from the loss of A to the first record read on B;
	// FailoverSeconds the part of it strait failover took.
	RTOSeconds      float64 `json:"rto_seconds"`
	FailoverSeconds float64 `json:"failover_seconds"`
	Produced        int     `json:"produced"`
	Read            int     `json:"read"`
	// Lost are records produced that the consumer never read: the RPO's
	// orphans it had not read on A before the loss. Skipped are those of
	// them that were not orphans: a fault.
	Lost      int `json:"lost"`
	Skipped   int `json:"skipped"`
	ReadTwice int `json:"read_twice"`
}

// OK reports whether the drill passed: nothing skipped, and nothing lost
// beyond the RPO window.
func (r Result) OK() bool { return r.Skipped == 0 && int64(r.Lost) <= r.RPORecords }

// Alias is the cluster alias the drill's own flows use for cluster alias.
func Alias(alias string) string { return "drill-" + alias }

// Run runs the drill with cfg, whose clusters A and B (aliases Alias(...) of
// the real ones) it replicates both ways with names kept.
func Run(ctx context.Context, cfg *config.Config, a, b string, opts Options) (Result, error) {
	d := &day{cfg: cfg, a: a, b: b, opts: opts, res: Result{Flow: a + "->" + b}}
	return d.res, d.run(ctx)
}

type day struct {
	cfg   *config.Config
	plan  *kafkaclient.Plan
	a, b  string
	opts  Options
	res   Result
	topic string
	group string

	produced map[string]time.Time // value -> when it was written
	reads    map[string]int
}

func (d *day) say(format string, args ...any) { fmt.Fprintf(d.opts.Out, format+"\n", args...) }

func (d *day) run(ctx context.Context) (err error) {
	d.plan, err = kafkaclient.NewPlan(d.cfg)
	if err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	d.topic, d.group = "strait-drill-"+stamp, "strait-drill-"+stamp
	d.produced, d.reads = map[string]time.Time{}, map[string]int{}
	fwdPlan, revPlan := d.plan.Flow(d.a, d.b), d.plan.Flow(d.b, d.a)
	if fwdPlan == nil || revPlan == nil {
		return fmt.Errorf("the drill's configuration has no flows %s->%s and %s->%s", d.a, d.b, d.b, d.a)
	}
	id := kafkaclient.Identity{Flow: "drill", Role: "drill"}
	quiet := slog.New(slog.DiscardHandler)
	aCl, err := fwdPlan.SourceAdmin.New(id, quiet, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer aCl.Close()
	bCl, err := fwdPlan.TargetAdmin.New(id, quiet, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer bCl.Close()
	aAdm, bAdm := kadm.NewClient(aCl), kadm.NewClient(bCl)
	resp, err := aAdm.CreateTopic(ctx, d.opts.Partitions, -1, nil, d.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("creating the drill topic %s on %s: %w", d.topic, d.a, err)
	}
	defer d.cleanup(aAdm, bAdm)

	// The node: one in-process daemon running both flows.
	node := daemon.New(d.cfg, daemon.Options{Logger: d.opts.Log, ShutdownTimeout: 10 * time.Second})
	nodeCtx, stopNode := context.WithCancel(context.WithoutCancel(ctx))
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- node.Run(nodeCtx) }()
	defer func() {
		stopNode()
		if nerr := <-nodeDone; nerr != nil && err == nil {
			err = fmt.Errorf("the drill's node: %w", nerr)
		}
	}()

	// 1. Production and consumption on A.
	d.say("1. Writing %d records/s to %s on %s, read by group %s, while Strait copies %s->%s, for %s.", d.opts.Rate, d.topic, d.a, d.group, d.a, d.b, d.opts.Warmup)
	if err := d.phase(ctx, aCl, fwdPlan.SourceAdmin, id, "a", d.opts.Warmup, nil); err != nil {
		return err
	}
	// 2. The loss of A: nothing more is written or read there.
	lost := time.Now()
	d.say("2. %s is taken for lost at %s: %d records were written there, %d read.", d.a, lost.Format("15:04:05.000"), len(d.produced), len(d.reads))

	// 3. Failover, as if A were unreachable.
	dir, err := os.MkdirTemp("", "strait-drill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fwd, err := flowconn.Open(ctx, d.cfg, fwdPlan, "drill")
	if err != nil {
		return err
	}
	defer fwd.Close()
	only := regexp.MustCompile("^" + regexp.QuoteMeta(d.group) + "$")
	err = switchover.Failover(ctx, fwd, switchover.Options{
		Groups: only, Execute: true, SourceLost: true, Report: filepath.Join(dir, "failover.json"),
		GateTimeout: time.Minute, StopTimeout: time.Minute, SourceTimeout: 5 * time.Second, Out: io.Discard, Log: io.Discard,
	})
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	d.res.FailoverSeconds = time.Since(lost).Seconds()
	d.say("3. strait failover moved the group to %s in %.1f s.", d.b, d.res.FailoverSeconds)
	onB, err := readValues(ctx, fwd.TargetReader, bAdm, d.topic)
	if err != nil {
		return err
	}
	for v, at := range d.produced {
		if !onB[v] {
			d.res.RPORecords++
			d.res.RPOSeconds = max(d.res.RPOSeconds, lost.Sub(at).Seconds())
		}
	}

	// 4. The group reads on B while a producer writes there.
	var first time.Time
	if err := d.phase(ctx, bCl, fwdPlan.TargetAdmin, id, "b", d.opts.Warmup/2, &first); err != nil {
		return err
	}
	if !first.IsZero() {
		d.res.RTOSeconds = first.Sub(lost).Seconds()
	}
	d.say("4. The group read on %s from %.1f s after the loss, while records were written there.", d.b, d.res.RTOSeconds)

	// 5. Failback.
	rev, err := flowconn.Open(ctx, d.cfg, revPlan, "drill")
	if err != nil {
		return err
	}
	defer rev.Close()
	err = switchover.Failback(ctx, fwd, rev, switchover.FailbackOptions{
		Groups: only, Execute: true, Report: filepath.Join(dir, "failback.json"), GateTimeout: 2 * time.Minute, SourceTimeout: 10 * time.Second, Out: io.Discard, Log: io.Discard,
	})
	if err != nil {
		return fmt.Errorf("failback: %w", err)
	}
	d.say("5. strait failback returned the group to %s, reporting the %d orphans.", d.a, d.res.RPORecords)

	// 6. The group reads on A again.
	if err := d.phase(ctx, aCl, fwdPlan.SourceAdmin, id, "a2", d.opts.Warmup/2, nil); err != nil {
		return err
	}
	d.tally(onB)
	d.say("6. The group read on %s again.", d.a)
	return nil
}

// tally counts what the consumer lost, skipped and read twice; onB holds
// the values that reached B (the others are the RPO's orphans).
func (d *day) tally(onB map[string]bool) {
	d.res.Produced = len(d.produced)
	for _, n := range d.reads {
		d.res.Read += n
		if n > 1 {
			d.res.ReadTwice += n - 1
		}
	}
	for v := range d.produced {
		if d.reads[v] > 0 {
			continue
		}
		d.res.Lost++
		if onB[v] || !strings.HasPrefix(v, "a-") {
			d.res.Skipped++
		}
	}
}

// phase writes "prefix-N" records to the drill topic with cl at the
// drill's rate for dur while the group reads it on the same cluster
// (client settings cs), then stops writing, lets the group read what was
// written (at most a minute), and stops it as an application stops,
// committing. first, if not nil, gets when the group read its first record.
func (d *day) phase(ctx context.Context, cl *kgo.Client, cs *kafkaclient.Client, id kafkaclient.Identity, prefix string, dur time.Duration, first *time.Time) error {
	cons, err := cs.New(id, slog.New(slog.DiscardHandler), kgo.ConsumerGroup(d.group), kgo.ConsumeTopics(d.topic), kgo.DisableAutoCommit(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cons.Close() // leaves the group
	var (
		mu      sync.Mutex
		written = map[string]bool{}
		read    []string
		wg      sync.WaitGroup
	)
	readCtx, stopRead := context.WithCancel(ctx)
	defer stopRead()
	wg.Go(func() {
		for readCtx.Err() == nil {
			fs := cons.PollFetches(readCtx)
			now := time.Now()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if first != nil && first.IsZero() {
					*first = now
				}
				read = append(read, string(r.Value))
			})
			mu.Unlock()
			if readCtx.Err() == nil {
				_ = cons.CommitUncommittedOffsets(readCtx)
			}
		}
	})
	writeCtx, stopWrite := context.WithTimeout(ctx, dur)
	defer stopWrite()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	per := max(d.opts.Rate/100, 1)
	for n := 0; writeCtx.Err() == nil; {
		select {
		case <-writeCtx.Done():
			continue
		case <-tick.C:
		}
		recs := make([]*kgo.Record, per)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: d.topic, Partition: int32(n) % d.opts.Partitions, Value: fmt.Appendf(nil, "%s-%d", prefix, n)}
			n++
		}
		for _, r := range cl.ProduceSync(writeCtx, recs...) {
			if r.Err == nil {
				d.produced[string(r.Record.Value)] = r.Record.Timestamp
				mu.Lock()
				written[string(r.Record.Value)] = true
				mu.Unlock()
			}
		}
	}
	// Let the group read what was written here, as an application that
	// drains before it stops.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		missing := len(written)
		for _, v := range read {
			if written[v] {
				missing--
				written[v] = false
			}
		}
		mu.Unlock()
		if missing <= 0 {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	stopRead()
	wg.Wait()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	err = cons.CommitUncommittedOffsets(cctx)
	cancel()
	mu.Lock()
	for _, v := range read {
		d.reads[v]++
	}
	mu.Unlock()
	if err != nil {
		return fmt.Errorf("committing the drill group's offsets: %w", err)
	}
	return nil
}

// readValues reads every value of topic on a cluster.
func readValues(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string) (map[string]bool, error) {
	out := map[string]bool{}
	_, err := tail.ReadToEnd(ctx, cl, topic, func(r *kgo.Record) { out[string(r.Value)] = true })
	return out, err
}

// cleanup deletes the drill's topics on both clusters, best effort.
func (d *day) cleanup(aAdm, bAdm *kadm.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = aAdm.DeleteTopics(ctx, d.topic)
	_, _ = bAdm.DeleteTopics(ctx, d.topic)
	_, _ = aAdm.DeleteGroup(ctx, d.group)
	_, _ = bAdm.DeleteGroup(ctx, d.group)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
