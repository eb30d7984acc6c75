package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// backlogTopic is the source topic of the copy runs. Topic names in this harness hold only
// letters, digits and '-': they go into a properties file as a regex unescaped.
const backlogTopic = "bench-backlog"

// runner runs the phases of one benchmark against one test bed and collects the results.
type runner struct {
	p      params
	log    *slog.Logger
	root   string // repository root
	script string // scripts/kafka.sh
	bin    string // the strait binary under test
	work   string // props files and the tools' logs

	tb           *testbed
	src, dst     *kgo.Client // admin and offset clients of A and B
	srcOffs      *offsetReader
	dstOffs      *offsetReader
	flowsStarted int // numbers the aliases of each tool run: A1->B1, A2->B2, ...
	// link is the latency proxy in front of cluster A (distance cells; nil without);
	// viaLink says the current cell's tools reach A through it.
	link    *linkProxy
	viaLink bool

	res *results
}

func newRunner(p params, log *slog.Logger) (*runner, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working dir: %w", err)
	}
	root, err := findRoot(wd)
	if err != nil {
		return nil, err
	}
	r := &runner{p: p, log: log, root: root, script: filepath.Join(root, "scripts", "kafka.sh")}
	if _, err := os.Stat(r.script); err != nil {
		return nil, fmt.Errorf("the cluster script %s is missing: %w", r.script, err)
	}
	if !filepath.IsAbs(r.p.OutDir) {
		r.p.OutDir = filepath.Join(root, r.p.OutDir)
	}
	return r, nil
}

// run starts the clusters, runs the selected mode and always stops the clusters again,
// also when ctx is cancelled (Ctrl-C). The results hold whatever finished, plus the error.
func (r *runner) run(ctx context.Context) (*results, error) {
	r.res = &results{Started: time.Now().UTC(), Params: r.p}
	err := r.runAll(ctx)
	if r.work != "" && !r.keep(err) {
		_ = os.RemoveAll(r.work)
	} else if r.work != "" {
		r.log.Info("logs kept", "dir", r.work)
	}
	r.res.Finished = time.Now().UTC()
	r.res.Seconds = r.res.Finished.Sub(r.res.Started).Seconds()
	r.res.LoadEnd = loadAvg()
	if err != nil {
		r.res.Error = err.Error()
	}
	return r.res, err
}

func (r *runner) runAll(ctx context.Context) (err error) {
	r.work, err = os.MkdirTemp("", "strait-bench-work-")
	if err != nil {
		return fmt.Errorf("creating the work dir: %w", err)
	}
	r.res.LoadStart = loadAvg()
	if err := r.buildStrait(ctx); err != nil {
		return err
	}
	r.res.Machine = machine(ctx, r.root, r.bin)
	external := ""
	if r.p.hasLinks() {
		// The proxy holds its port first, so broker A can advertise it (link.go).
		if r.link, err = newLinkProxy(); err != nil {
			return err
		}
		defer r.link.close()
		external = r.link.port()
	}
	if r.p.Mode == modeScale {
		// Thousands of partitions: the brokers inherit this limit (scale.go).
		need := r.p.scaleOpenFiles()
		if got, err := raiseOpenFiles(need); err != nil {
			r.log.Warn("the brokers may run out of open files", "need", need, "limit", got, "err", err)
		} else {
			r.log.Info("open-files limit for the brokers", "limit", got, "need", need)
		}
	}
	readAhead, restoreReadAhead := setReadAhead(os.TempDir(), r.p.ReadAheadKB) // before the brokers map an index
	defer restoreReadAhead()
	r.res.ReadAhead = readAhead
	r.log.Info("disk read-ahead", "read_ahead", readAhead.text())
	r.tb, err = startTestbed(ctx, r.log, r.script, r.p.BrokerHeap, external)
	if err != nil {
		return err
	}
	defer func() {
		keep := r.keep(err)
		if stopErr := r.tb.stop(keep); stopErr != nil {
			err = errors.Join(err, stopErr)
		} else if keep {
			r.log.Info("clusters stopped; their dir is kept", "dir", r.tb.dir)
		}
	}()
	r.res.Machine.KafkaVersion = r.tb.kafkaVersion
	if r.link != nil {
		if err := r.link.connect(ctx, r.tb.a.external); err != nil {
			return err
		}
		r.log.Info("link proxy up", "proxy", r.link.addr(), "broker_a_external", r.tb.a.external)
	}
	if r.src, err = newClient(r.tb.a.bootstrap); err != nil {
		return err
	}
	defer r.src.Close()
	if r.dst, err = newClient(r.tb.b.bootstrap); err != nil {
		return err
	}
	defer r.dst.Close()
	if r.srcOffs, err = newOffsetReader(ctx, r.src); err != nil {
		return fmt.Errorf("cluster a: %w", err)
	}
	if r.dstOffs, err = newOffsetReader(ctx, r.dst); err != nil {
		return fmt.Errorf("cluster b: %w", err)
	}
	if r.p.Mode == modeCompare || r.p.Mode == modeAll {
		if err := r.compare(ctx); err != nil {
			return err
		}
	}
	if r.p.Mode == modeMemory || r.p.Mode == modeAll {
		if err := r.memory(ctx); err != nil {
			return err
		}
	}
	if r.p.Mode == modeNodes {
		return r.nodes(ctx)
	}
	if r.p.Mode == modeScale {
		return r.scale(ctx)
	}
	return nil
}

// keep reports whether the clusters' dir and the logs outlive the run: with -keep, or
// when the run failed (not when it was interrupted) so the logs can be read.
func (r *runner) keep(err error) bool {
	return r.p.KeepLogs || (err != nil && !errors.Is(err, context.Canceled))
}

// buildStrait builds ./cmd/strait into the work dir unless -strait-bin names a binary.
func (r *runner) buildStrait(ctx context.Context) error {
	if r.p.StraitBin != "" {
		abs, err := filepath.Abs(r.p.StraitBin)
		if err != nil {
			return fmt.Errorf("-strait-bin %q: %w", r.p.StraitBin, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("-strait-bin %q: %w", r.p.StraitBin, err)
		}
		r.bin = abs
		return nil
	}
	r.bin = filepath.Join(r.work, "strait")
	r.log.Info("building strait", "out", r.bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", r.bin, "./cmd/strait")
	cmd.Dir = r.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building ./cmd/strait: %w\n%s", err, out)
	}
	return nil
}

// compare runs every cell (one from the flags, or the matrix), each with its own backlog
// and -runs copies per tool alternating the tools, and then the latency runs.
func (r *runner) compare(ctx context.Context) error {
	p := r.p
	cells := p.cells()
	if p.has(phaseCopy) || len(cells) > 0 && cells[0].Limits {
		est := estimate(cells, p.Runs, p.Tools, latencyEstimate(p))
		r.res.EstimateSeconds = est.Seconds()
		r.log.Info("running cells", "cells", len(cells), "runs_per_tool", p.Runs, "estimate", est.Round(time.Second).String())
		if p.Matrix != matrixNone {
			for _, w := range cells {
				r.log.Info("matrix cell", "cell", w.Cell, "name", w.name(), "records", w.Records, "payload_mb", int(w.payloadMB()))
			}
		}
	}
	if p.has(phaseCopy) && len(cells) > 0 {
		if err := r.warmUp(ctx); err != nil {
			return err
		}
	}
	var errs []error
	for _, w := range cells {
		if !p.has(phaseCopy) && !(p.has(phaseLimits) && w.Limits) {
			continue // the latency phase alone needs no backlog
		}
		c, err := r.runCell(ctx, w.Cell, w)
		r.res.Cells = append(r.res.Cells, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cell %d (%s): %w", w.Cell, w.name(), err))
			if c.Preload == nil {
				return errors.Join(errs...) // the clusters are in trouble: stop here
			}
		}
	}
	if p.has(phaseLatency) {
		g := newGenerator(p.RecordSize, p.KeySpread, p.Partitions)
		for run := 1; run <= p.Runs; run++ {
			for _, tool := range p.Tools {
				l, err := r.latencyRun(ctx, tool, g)
				l.Run = run
				if err != nil {
					return fmt.Errorf("latency run %d of %s: %w", run, tool, err)
				}
				r.res.Latency = append(r.res.Latency, l)
			}
		}
	}
	return errors.Join(errs...)
}

// preloadResult is the backlog written to A before the copy runs.
type preloadResult struct {
	Topic string `json:"topic"`
	// Topics is the number of topics (Topic names the first).
	Topics int `json:"topics"`
	produceResult
	// DiskBytes is the backlog's size in A's log dir: with a codec, the compressed size.
	DiskBytes int64  `json:"disk_bytes"`
	LoadAvg   string `json:"load_avg"`
	// Transactions is how many committed transactions wrote it (-source-txn), 0 none.
	Transactions int `json:"transactions,omitempty"`
	// records are the records of each partition, flattened as endOffsetsAll: the end
	// offsets, but for the markers of a backlog written in transactions.
	records []int64
}

// topicSet is the source topics of a cell: names, each with the same partitions; pattern
// is the `topics` regex that selects exactly them.
type topicSet struct {
	names      []string
	partitions int
	pattern    string
}

// singleTopic is a topic set of one topic.
func singleTopic(name string, partitions int) topicSet {
	return topicSet{names: []string{name}, partitions: partitions, pattern: name}
}

// manyTopics is n topics prefix-t0000, prefix-t0001, ... matched by "prefix-t.*".
func manyTopics(prefix string, n, partitions int) topicSet {
	ts := topicSet{partitions: partitions, pattern: prefix + "-t.*"}
	for i := range n {
		ts.names = append(ts.names, fmt.Sprintf("%s-t%04d", prefix, i))
	}
	return ts
}

// preload creates the topics on A and writes n records into them with codec (alternating
// batches with uncompressed ones when mixed; in committed transactions of txn records when
// txn > 0); it returns the end offsets, flattened as endOffsetsAll.
func (r *runner) preload(ctx context.Context, g *generator, ts topicSet, n int, codecName string, mixed bool, txn int) (preloadResult, []int64, error) {
	res := preloadResult{Topic: ts.names[0], Topics: len(ts.names), LoadAvg: loadAvg()}
	var configs map[string]*string
	if r.p.Timestamps == stampLogAppend {
		configs = map[string]*string{"message.timestamp.type": kadm.StringPtr("LogAppendTime")}
	}
	if err := createTopics(ctx, r.src, r.srcOffs, ts.names, ts.partitions, configs); err != nil {
		return res, nil, fmt.Errorf("cluster a: %w", err)
	}
	cl, err := newClient(r.tb.a.bootstrap, producerOpts(r.tb.a.bootstrap, codecName)...)
	if err != nil {
		return res, nil, err
	}
	defer cl.Close()
	r.log.Info("preloading", "topic", ts.pattern, "topics", len(ts.names), "records", n, "partitions", ts.partitions, "codec", codecName, "mixed", mixed)
	if mixed {
		plain, perr := newClient(r.tb.a.bootstrap, producerOpts(r.tb.a.bootstrap, "none")...)
		if perr != nil {
			return res, nil, perr
		}
		defer plain.Close()
		// About 16 records per partition per chunk: each flush leaves one batch per
		// partition, so every partition's batches alternate between the two codecs.
		chunk := 16 * len(ts.names) * ts.partitions
		res.produceResult, err = produceMixed(ctx, []*kgo.Client{plain, cl}, g, ts.names, n, chunk)
	} else if txn > 0 {
		if len(ts.names) > 1 {
			return res, nil, fmt.Errorf("-source-txn writes single-topic cells only; %q has %d topics", ts.pattern, len(ts.names))
		}
		res.produceResult, res.Transactions, err = r.produceInTransactions(ctx, g, ts.names, n, codecName, txn)
	} else {
		res.produceResult, err = produceBacklog(ctx, cl, g, ts.names, n)
	}
	if err != nil {
		return res, nil, fmt.Errorf("preloading %q on cluster a: %w", ts.pattern, err)
	}
	ends, err := r.srcOffs.endOffsetsAll(ctx, ts.names, ts.partitions)
	if err != nil {
		return res, nil, err
	}
	res.records = ends
	if txn > 0 && len(ts.names) == 1 {
		res.records = make([]int64, ts.partitions)
		for i := range int64(n) {
			res.records[g.partitionOf(i)]++
		}
		if got := sum(ends); got <= int64(n) {
			return res, nil, fmt.Errorf("topic %q on cluster a ends at %d offsets after %d records in %d transactions: the markers are missing", ts.pattern, got, n, res.Transactions)
		}
	} else if got := sum(ends); got != int64(n) {
		return res, nil, fmt.Errorf("topics %q on cluster a hold %d records after the preload, want %d", ts.pattern, got, n)
	}
	if res.DiskBytes, err = topicDiskBytes(ctx, r.src, ts.names...); err != nil {
		r.log.Warn("cannot read the backlog's disk size", "err", err)
	}
	r.log.Info("preloaded", "topic", ts.pattern, "seconds", res.Seconds, "mb_per_s", mbps(res.PayloadBytes, res.Seconds), "disk_mb", float64(res.DiskBytes)/1e6)
	return res, ends, nil
}

// produceInTransactions writes records 0..n-1 into topics in committed transactions of
// per records each, with a transactional producer of its own.
func (r *runner) produceInTransactions(ctx context.Context, g *generator, topics []string, n int, codecName string, per int) (produceResult, int, error) {
	cl, err := newClient(r.tb.a.bootstrap, append(producerOpts(r.tb.a.bootstrap, codecName),
		kgo.TransactionalID("strait-bench-txn-"+topics[0]))...)
	if err != nil {
		return produceResult{}, 0, err
	}
	defer cl.Close()
	var res produceResult
	txns := 0
	cpu0, began := selfCPU(), time.Now()
	for from := int64(0); from < int64(n); from += int64(per) {
		if err := cl.BeginTransaction(); err != nil {
			return res, txns, err
		}
		pr, err := produceRange(ctx, cl, g, topics, from, min(from+int64(per), int64(n)))
		res.Records += pr.Records
		res.PayloadBytes += pr.PayloadBytes
		if err != nil {
			return res, txns, err
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return res, txns, fmt.Errorf("committing source transaction %d: %w", txns+1, err)
		}
		txns++
	}
	res.Seconds = time.Since(began).Seconds()
	res.ClientCPU = selfCPU() - cpu0
	return res, txns, nil
}

// nextFlow returns the flow of the next tool run: new aliases, so the run's remote topics,
// the tool's internal topics and its groups cannot collide with any earlier run's.
func (r *runner) nextFlow(ts topicSet, targetCodec string) flowSpec {
	r.flowsStarted++
	n := strconv.Itoa(r.flowsStarted)
	tuning := r.p.MM2
	if tuning.TasksMax == 0 {
		tuning.TasksMax = min(len(ts.names)*ts.partitions, mm2TasksCap)
	}
	srcBoot := r.tb.a.bootstrap
	if r.viaLink {
		srcBoot = r.link.addr() // every connection of the tool to A crosses the link
	}
	f := flowSpec{
		source: "A" + n, target: "B" + n,
		sourceBoot: srcBoot, destBoot: r.tb.b.bootstrap,
		topic: ts.pattern, tuning: tuning, targetCodec: targetCodec, straitProps: r.p.StraitProps,
	}
	if len(ts.names) > 1 || ts.pattern != ts.names[0] {
		f.names = ts.names
	}
	return f
}

// launch writes the flow's properties and starts tool on it.
func (r *runner) launch(tool string, f flowSpec) (*proc, error) {
	if tool == toolMM2EOS {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		f.mm2RestPort = port
	}
	base := filepath.Join(r.work, fmt.Sprintf("%s-%s", f.source, tool))
	props := base + ".properties"
	if err := os.WriteFile(props, []byte(f.properties(tool)), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %w", props, err)
	}
	if r.res.Properties == "" || (tool == toolMM2 && !r.res.mm2Props) {
		r.res.Properties, r.res.mm2Props = f.properties(tool), tool == toolMM2
	}
	if tool == toolMM2Default && r.res.PropertiesMM2Default == "" {
		r.res.PropertiesMM2Default = f.properties(tool)
	}
	r.log.Info("starting replicator", "tool", tool, "flow", f.source+"->"+f.target, "topic", f.topic, "log", base+".log")
	switch baseTool(tool) {
	case toolStrait:
		return launchStrait(r.bin, props, f.target, base+".log")
	case toolMM2:
		return launchMM2(r.script, r.tb.dir, props, r.p.MM2.Heap, f.target, base+".log", base+".mm2.log")
	}
	return nil, fmt.Errorf("unknown tool %q", tool)
}

// brokerCPU returns the CPU seconds both brokers have used so far (0 for one that cannot
// be read: broker CPU is context for the figures, not a figure the run depends on).
func (r *runner) brokerCPU() map[string]float64 {
	out := map[string]float64{}
	for _, c := range []cluster{r.tb.a, r.tb.b} {
		pid, err := c.brokerPid()
		if err != nil {
			continue
		}
		if st, err := readProcStats(pid); err == nil {
			out[c.name] = st.CPUSeconds()
		}
	}
	return out
}

func mbps(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / seconds
}

// freePort returns a TCP port on loopback that nothing listens on right now (MM2's
// internal REST server takes it a moment later).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
