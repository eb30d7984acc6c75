package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

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
	r.tb, err = startTestbed(ctx, r.log, r.script, r.p.BrokerHeap)
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

// compare preloads the backlog, measures the client limits, copies the backlog with every
// tool and then runs the latency runs.
func (r *runner) compare(ctx context.Context) error {
	p := r.p
	g := newGenerator(p.RecordSize, p.KeySpread, p.Partitions)
	load, ends, err := r.preload(ctx, g, backlogTopic, p.Partitions, p.Records)
	if err != nil {
		return err
	}
	r.res.Preload = &load
	// The client limits run next to the copies in time, so the load from other work on
	// the machine is as alike as it gets.
	if p.has(phaseLimits) {
		lim, err := r.limits(ctx, g, ends)
		if err != nil {
			return fmt.Errorf("client-limit runs: %w", err)
		}
		r.res.Limits = lim
	}
	if p.has(phaseCopy) {
		for _, tool := range p.Tools {
			c, err := r.copyRun(ctx, tool, backlogTopic, p.Partitions, ends, load.PayloadBytes)
			if err != nil {
				return fmt.Errorf("copy run of %s: %w", tool, err)
			}
			r.res.Copies = append(r.res.Copies, c)
		}
	}
	if p.has(phaseLatency) {
		for _, tool := range p.Tools {
			l, err := r.latencyRun(ctx, tool, g)
			if err != nil {
				return fmt.Errorf("latency run of %s: %w", tool, err)
			}
			r.res.Latency = append(r.res.Latency, l)
		}
	}
	return nil
}

// preloadResult is the backlog written to A before the copy runs.
type preloadResult struct {
	Topic string `json:"topic"`
	produceResult
	// DiskBytes is the backlog's size in A's log dir: with a codec, the compressed size.
	DiskBytes int64  `json:"disk_bytes"`
	LoadAvg   string `json:"load_avg"`
}

// preload creates topic on A and writes n records into it; it returns the end offsets.
func (r *runner) preload(ctx context.Context, g *generator, topic string, partitions, n int) (preloadResult, []int64, error) {
	res := preloadResult{Topic: topic, LoadAvg: loadAvg()}
	if err := createTopic(ctx, r.src, r.srcOffs, topic, partitions, nil); err != nil {
		return res, nil, fmt.Errorf("cluster a: %w", err)
	}
	cl, err := newClient(r.tb.a.bootstrap, producerOpts(r.tb.a.bootstrap, r.p.Codec)...)
	if err != nil {
		return res, nil, err
	}
	defer cl.Close()
	r.log.Info("preloading", "topic", topic, "records", n, "partitions", partitions, "codec", r.p.Codec)
	if res.produceResult, err = produceBacklog(ctx, cl, g, topic, n); err != nil {
		return res, nil, fmt.Errorf("preloading %q on cluster a: %w", topic, err)
	}
	ends, err := r.srcOffs.endOffsets(ctx, topic, partitions)
	if err != nil {
		return res, nil, err
	}
	if got := sum(ends); got != int64(n) {
		return res, nil, fmt.Errorf("topic %q on cluster a holds %d records after the preload, want %d", topic, got, n)
	}
	if res.DiskBytes, err = topicDiskBytes(ctx, r.src, topic); err != nil {
		r.log.Warn("cannot read the backlog's disk size", "err", err)
	}
	r.log.Info("preloaded", "topic", topic, "seconds", res.Seconds, "mb_per_s", mbps(res.PayloadBytes, res.Seconds), "disk_mb", float64(res.DiskBytes)/1e6)
	return res, ends, nil
}

// nextFlow returns the flow of the next tool run: new aliases, so the run's remote topic,
// the tool's internal topics and its groups cannot collide with any earlier run's.
func (r *runner) nextFlow(topic string) flowSpec {
	r.flowsStarted++
	n := strconv.Itoa(r.flowsStarted)
	return flowSpec{
		source: "A" + n, target: "B" + n,
		sourceBoot: r.tb.a.bootstrap, destBoot: r.tb.b.bootstrap,
		topic: topic, tuning: r.p.MM2, targetCodec: r.p.TargetCodec, straitProps: r.p.StraitProps,
	}
}

// launch writes the flow's properties and starts tool on it.
func (r *runner) launch(tool string, f flowSpec) (*proc, error) {
	base := filepath.Join(r.work, fmt.Sprintf("%s-%s", f.source, tool))
	props := base + ".properties"
	if err := os.WriteFile(props, []byte(f.properties(tool)), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %w", props, err)
	}
	if r.res.Properties == "" || (tool == toolMM2 && !r.res.mm2Props) {
		r.res.Properties, r.res.mm2Props = f.properties(tool), tool == toolMM2
	}
	r.log.Info("starting replicator", "tool", tool, "flow", f.source+"->"+f.target, "topic", f.topic, "log", base+".log")
	switch tool {
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
