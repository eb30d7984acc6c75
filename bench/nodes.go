package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// nodesRecords is the nodes mode's backlog unless -records sets it: 1 GB of 1 KiB
	// records, written anew for every run.
	nodesRecords = 1_000_000
	// nodesPartitions is the nodes mode's partitions unless -partitions sets them.
	nodesPartitions = 12
	// maxNodes bounds -nodes: every node is a process on this machine.
	maxNodes = 8
	// shareTimeout bounds the wait for the nodes to share the flow: with the target's
	// default heartbeat interval (3 s) a node learns of a rebalance within 3 s, and a
	// cooperative move takes two.
	shareTimeout = 2 * time.Minute
	// gateTimeout is the gate transaction's timeout: the preload and the nodes' start
	// must fit in it (Kafka's transaction.max.timeout.ms is 15 minutes).
	gateTimeout = 10 * time.Minute
	// apiTimeout bounds one request to a node's API.
	apiTimeout = 2 * time.Second
)

// The nodes mode copies one backlog with 1, 2, 3... Strait nodes sharing the flow
// (the nodes are the members of the flow's group on B and split
// its partitions). A node that starts copies everything until the group gives part of
// its work to the next one, which takes seconds (rebalances ride on heartbeats), while a
// 1 GB backlog takes a few seconds to copy: started on a visible backlog, the first node
// would copy most of it alone. So each run's backlog is written inside one open
// transaction on A (the gate): Strait reads read_committed and sees none of it. The
// nodes start, the harness waits until their APIs show a stable share of every
// partition, each node ready and the remote topic on B, and only then commits: the
// whole backlog becomes visible to every node at once. The figures count from the
// commit (and, the headline, from the first record on B), so the nodes' start and the
// rebalances are not part of them. The gate is the same for every node count.

// nodesResult is the nodes mode: every run and a summary per node count.
type nodesResult struct {
	Workload workload       `json:"workload"`
	Runs     []nodesRun     `json:"runs"`
	Summary  []nodesSummary `json:"summary"`
}

// nodesRun is one copy of a fresh gated backlog by Nodes nodes sharing the flow.
type nodesRun struct {
	Nodes        int    `json:"nodes"`
	Run          int    `json:"run"`
	Flow         string `json:"flow"`
	Topic        string `json:"source_topic"`
	RemoteTopic  string `json:"remote_topic"`
	Partitions   int    `json:"partitions"`
	Records      int64  `json:"records"`
	PayloadBytes int64  `json:"payload_bytes"`
	// PreloadSeconds is the gated preload (inside the open transaction).
	PreloadSeconds float64 `json:"preload_s"`
	// ShareSeconds is the nodes' start to a stable share of every partition (all
	// nodes stable in one generation, ready, the remote topic on B).
	ShareSeconds float64 `json:"share_s"`
	Generation   int32   `json:"generation"`
	// FirstRecordSeconds is the gate's commit to the first record on B; WallSeconds the
	// commit to the complete copy.
	FirstRecordSeconds float64 `json:"first_record_s"`
	WallSeconds        float64 `json:"wall_s"`
	// SteadyMBPerSec is the payload over the first record on B to the complete copy;
	// MBPerSec over the commit to the complete copy.
	SteadyMBPerSec float64 `json:"steady_mb_per_s"`
	MBPerSec       float64 `json:"mb_per_s"`
	// SteadyCPUSeconds is the CPU of all nodes together from the first record on B to
	// the complete copy; SteadyCPUPerGB divides it by the payload in GB.
	SteadyCPUSeconds float64 `json:"steady_cpu_s"`
	SteadyCPUPerGB   float64 `json:"steady_cpu_s_per_gb"`
	// BrokerCPU is each broker's CPU over the same window.
	BrokerCPU map[string]float64 `json:"broker_cpu_s"`
	// CoresBusy is the nodes' and both brokers' CPU over the window's seconds: how many
	// of the machine's cores the copy kept busy.
	CoresBusy float64 `json:"cores_busy"`
	// TargetRecords is the records on B at completion (more than Records: duplicates).
	TargetRecords int64        `json:"target_records"`
	Members       []nodeMember `json:"members"`
	// ShareChanged says a node's partitions at completion differ from those it had when
	// the gate opened: a rebalance during the copy.
	ShareChanged bool   `json:"share_changed,omitempty"`
	LoadAvg      string `json:"load_avg_at_start"`
	Error        string `json:"error,omitempty"`
}

// nodeMember is one node of a run: its share and what it used.
type nodeMember struct {
	Node string `json:"node"` // n1, n2, ... in start order
	// MemberID is the node's member id in the flow's group on B, from its API.
	MemberID string `json:"member_id"`
	// Partitions are the backlog's partitions the node owned when the gate opened;
	// Units counts every unit it owned (a source heartbeats partition would be one).
	Partitions []int32 `json:"partitions"`
	Units      int     `json:"units"`
	Control    bool    `json:"control"`
	// Records are the records on B in the node's partitions at completion.
	Records          int64     `json:"records"`
	SteadyCPUSeconds float64   `json:"steady_cpu_s"`
	Process          procStats `json:"process"`
	Log              string    `json:"log"`
}

// nodesSummary is the runs of one node count.
type nodesSummary struct {
	Nodes  int `json:"nodes"`
	Runs   int `json:"runs"`
	Failed int `json:"failed_runs,omitempty"`
	// SteadyMBps counts from the first record on B; MBps from the gate's commit.
	SteadyMBps stat `json:"steady_mb_per_s"`
	MBps       stat `json:"mb_per_s"`
	// Scaling is SteadyMBps's median over that of the fewest nodes measured.
	Scaling float64 `json:"scaling"`
	// SteadyCPUPerGB is all nodes' CPU together per GB of payload.
	SteadyCPUPerGB stat `json:"steady_cpu_s_per_gb"`
	// PeakRSSMiB and PartitionsPerNode take every node of every run.
	PeakRSSMiB        stat `json:"peak_rss_per_node_mib"`
	PartitionsPerNode stat `json:"partitions_per_node"`
	// LargestShare is the busiest node's fraction of the records, per run: the node
	// that finishes last.
	LargestShare stat `json:"largest_share"`
	// CoresBusy is the nodes' and brokers' CPU per second of the steady window, and its
	// split.
	CoresBusy  stat    `json:"cores_busy"`
	CoresNodes stat    `json:"cores_nodes"`
	CoresA     stat    `json:"cores_broker_a"`
	CoresB     stat    `json:"cores_broker_b"`
	ShareS     stat    `json:"share_s"`
	ShareMoved int     `json:"runs_with_share_changed,omitempty"`
	RecordsAvg float64 `json:"records_per_run"`
}

// nodes runs the nodes mode: -runs rounds, each copying a fresh gated backlog once per
// node count of -nodes, in order.
func (r *runner) nodes(ctx context.Context) error {
	p := r.p
	est := nodesEstimate(p)
	r.res.EstimateSeconds = est.Seconds()
	r.log.Info("running the nodes mode", "nodes", joinInts(p.Nodes), "runs", p.Runs, "records", p.Records, "estimate", est.Round(time.Second).String())
	wu, err := r.warmBrokers(ctx)
	if err != nil {
		return fmt.Errorf("warming the brokers up: %w", err)
	}
	r.res.Warmup = wu
	r.res.Properties = "" // the warm-up's: the report shows the nodes' file instead
	w := workload{Cell: 1, RecordSize: p.RecordSize, Partitions: p.Partitions, Topics: 1, Codec: p.Codec, Target: p.targetMode(), TargetCodec: p.TargetCodec, Records: p.Records}
	r.res.Nodes = &nodesResult{Workload: w}
	keys := p.KeySpread
	if keys > 0 && keys < p.Partitions {
		keys = p.Partitions
	}
	g := newGenerator(p.RecordSize, keys, p.Partitions)
	var errs []error
	for run := 1; run <= p.Runs; run++ {
		for _, n := range p.Nodes {
			nr, err := r.nodesRun(ctx, n, run, g)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				nr.Error = err.Error()
				errs = append(errs, fmt.Errorf("run %d with %d nodes: %w", run, n, err))
				r.log.Error("nodes run failed; going on with the next", "run", run, "nodes", n, "err", firstLine(err.Error()))
			}
			r.res.Nodes.Runs = append(r.res.Nodes.Runs, nr)
			r.res.Nodes.summarize()
		}
	}
	return errors.Join(errs...)
}

// nodesRun preloads a fresh backlog behind the gate, starts n nodes on a new flow, waits
// until they share it, opens the gate and follows the copy to completion.
func (r *runner) nodesRun(ctx context.Context, n, run int, g *generator) (nodesRun, error) {
	p := r.p
	topic := fmt.Sprintf("bench-nodes-%d", r.flowsStarted+1)
	ts := singleTopic(topic, p.Partitions)
	res := nodesRun{Nodes: n, Run: run, Topic: topic, Partitions: p.Partitions}
	gt, load, want, err := r.gatedPreload(ctx, g, ts, p.Records, p.Codec)
	if gt != nil {
		defer gt.close()
	}
	defer r.deleteTopics(ctx, r.src, ts.names)
	if err != nil {
		return res, err
	}
	res.Records, res.PayloadBytes, res.PreloadSeconds = sum(want), load.PayloadBytes, load.Seconds
	settleWriteback()

	f := r.nextFlow(ts, p.TargetCodec)
	f.cluster = true
	remotes := f.remoteTopics()
	res.Flow, res.RemoteTopic = f.source+"->"+f.target, remotes[0]
	defer r.deleteTopics(ctx, r.dst, remotes)
	base := filepath.Join(r.work, fmt.Sprintf("%s-strait-nodes", f.source))
	props := base + ".properties"
	text := f.properties(toolStrait)
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		return res, fmt.Errorf("writing %s: %w", props, err)
	}
	if r.res.Properties == "" {
		r.res.Properties = text
	}
	var procs []*proc
	defer func() { stopAll(procs) }()
	r.log.Info("starting nodes", "nodes", n, "flow", res.Flow, "topic", topic, "props", props)
	for i := range n {
		pr, err := launchStrait(r.bin, props, f.target, fmt.Sprintf("%s-n%d.log", base, i+1))
		if err != nil {
			return res, err
		}
		procs = append(procs, pr)
	}
	shares, err := r.waitShared(ctx, f, procs, topic, p.Partitions)
	if err != nil {
		return res, err
	}
	res.ShareSeconds = time.Since(procs[0].started).Seconds()
	res.Generation = shares[0].Generation
	r.log.Info("nodes share the flow", "nodes", n, "share", sharesText(shares), "generation", res.Generation, "seconds", res.ShareSeconds)

	res.LoadAvg = loadAvg()
	opened := time.Now()
	if err := gt.commit(ctx); err != nil {
		return res, err
	}
	seen, err := r.watchCopy(ctx, copyWatch{tool: toolStrait, remotes: remotes, partitions: p.Partitions, want: want,
		procs: procs, deadline: opened.Add(p.CopyTimeout.Duration), committed: isEOS(toolStrait, p.StraitProps)})
	if err != nil {
		return res, err
	}
	res.FirstRecordSeconds = seen.first.Sub(opened).Seconds()
	res.WallSeconds = seen.done.Sub(opened).Seconds()
	steady := seen.done.Sub(seen.first).Seconds()
	res.SteadyMBPerSec = mbps(res.PayloadBytes, steady)
	res.MBPerSec = mbps(res.PayloadBytes, res.WallSeconds)
	res.TargetRecords = sum(seen.records)
	res.BrokerCPU = map[string]float64{}
	var brokers float64
	for k, v := range seen.brokerAt {
		res.BrokerCPU[k] = v - seen.brokerFirst[k]
		brokers += res.BrokerCPU[k]
	}
	for i, pr := range procs {
		m := nodeMember{Node: fmt.Sprintf("n%d", i+1), MemberID: shares[i].MemberID, Partitions: shares[i].Partitions,
			Units: shares[i].Units, Control: shares[i].Control, Process: seen.atDone[i], Log: pr.logPath,
			SteadyCPUSeconds: seen.atDone[i].CPUSeconds() - seen.atFirst[i].CPUSeconds()}
		for _, part := range m.Partitions {
			if int(part) < len(seen.records) {
				m.Records += seen.records[part]
			}
		}
		res.SteadyCPUSeconds += m.SteadyCPUSeconds
		res.Members = append(res.Members, m)
	}
	if res.PayloadBytes > 0 {
		res.SteadyCPUPerGB = res.SteadyCPUSeconds / (float64(res.PayloadBytes) / 1e9)
	}
	if steady > 0 {
		res.CoresBusy = (res.SteadyCPUSeconds + brokers) / steady
	}
	// The share should not have moved: every node was stable before the gate opened.
	if after, err := r.readShares(ctx, f, procs, topic); err != nil {
		r.log.Warn("cannot read the nodes' share after the copy", "err", err)
	} else {
		for i := range after {
			if !slices.Equal(after[i].Partitions, shares[i].Partitions) {
				res.ShareChanged = true
			}
		}
	}
	r.log.Info("nodes copy complete", "nodes", n, "steady_mb_per_s", res.SteadyMBPerSec, "cpu_s_per_gb", res.SteadyCPUPerGB, "cores_busy", res.CoresBusy, "share_changed", res.ShareChanged)
	if res.TargetRecords != res.Records {
		r.log.Warn("the target holds more records than the source: duplicates", "target", res.TargetRecords, "source", res.Records)
	}
	stopAll(procs)
	return res, nil
}

// gate is a backlog written inside one open transaction on A: a read_committed reader
// (Strait reads committed) sees none of it until commit.
type gate struct {
	cl   *kgo.Client
	done bool
}

// gatedPreload creates the topics of ts on A and writes n records into them inside one
// transaction it leaves open. It returns the records per partition (the high
// watermarks before the commit adds its markers).
func (r *runner) gatedPreload(ctx context.Context, g *generator, ts topicSet, n int, codecName string) (*gate, produceResult, []int64, error) {
	var configs map[string]*string
	if r.p.Timestamps == stampLogAppend {
		configs = map[string]*string{"message.timestamp.type": kadm.StringPtr("LogAppendTime")}
	}
	if err := createTopics(ctx, r.src, r.srcOffs, ts.names, ts.partitions, configs); err != nil {
		return nil, produceResult{}, nil, fmt.Errorf("cluster a: %w", err)
	}
	cl, err := newClient(r.tb.a.bootstrap, append(producerOpts(r.tb.a.bootstrap, codecName),
		kgo.TransactionalID("strait-bench-gate-"+ts.names[0]), kgo.TransactionTimeout(gateTimeout))...)
	if err != nil {
		return nil, produceResult{}, nil, err
	}
	gt := &gate{cl: cl}
	if err := cl.BeginTransaction(); err != nil {
		return gt, produceResult{}, nil, fmt.Errorf("beginning the gate's transaction: %w", err)
	}
	r.log.Info("preloading behind the gate", "topic", ts.pattern, "records", n, "partitions", ts.partitions, "codec", codecName)
	res, err := produceBacklog(ctx, cl, g, ts.names, n)
	if err != nil {
		return gt, res, nil, fmt.Errorf("preloading %q on cluster a: %w", ts.pattern, err)
	}
	ends, err := r.srcOffs.endOffsetsAll(ctx, ts.names, ts.partitions)
	if err != nil {
		return gt, res, nil, err
	}
	if got := sum(ends); got != int64(n) {
		return gt, res, nil, fmt.Errorf("topics %q on cluster a hold %d records after the preload, want %d", ts.pattern, got, n)
	}
	r.log.Info("preloaded behind the gate", "topic", ts.pattern, "seconds", res.Seconds, "mb_per_s", mbps(res.PayloadBytes, res.Seconds))
	return gt, res, ends, nil
}

// commit commits the gate's transaction: the backlog becomes visible.
func (g *gate) commit(ctx context.Context) error {
	g.done = true
	if err := g.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("committing the gate's transaction: %w", err)
	}
	return nil
}

// close aborts the transaction unless it was committed, and closes the client.
func (g *gate) close() {
	if !g.done {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = g.cl.EndTransaction(ctx, kgo.TryAbort)
		cancel()
	}
	g.cl.Close()
}

// stopAll stops the processes at once (SIGTERM to each, then SIGKILL after the timeout),
// and waits for all of them.
func stopAll(procs []*proc) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.stop(stopTimeoutTool) })
	}
	wg.Wait()
}

// nodeShare is a node's share of the flow, as its API shows it.
type nodeShare struct {
	MemberID   string
	Generation int32
	Partitions []int32 // the backlog topic's partitions, sorted
	Units      int
	Control    bool
}

// flowsReply is the part of a node's /api/v1/flows the harness reads.
type flowsReply struct {
	Flows []struct {
		Name  string `json:"name"`
		Share *struct {
			MemberID   string `json:"member_id"`
			Generation int32  `json:"generation"`
			State      string `json:"state"`
			Lease      bool   `json:"lease"`
			Control    bool   `json:"control"`
			Error      string `json:"error"`
			Units      []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"units"`
		} `json:"share"`
	} `json:"flows"`
}

// partitionsReply is the part of a node's /api/v1/partitions the harness reads: the
// partitions its data plane runs.
type partitionsReply struct {
	Partitions []struct {
		Flow      string `json:"flow"`
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		State     string `json:"state"`
	} `json:"partitions"`
}

// apiURLRe finds the address a node logs when its API listens (text or JSON log).
var apiURLRe = regexp.MustCompile(`"?msg"?[=:]"api listening".*?"?url"?[=:]"?(http[^"\s,}]+)`)

// apiURL returns the base URL of the node's API from its log, "" before it is logged.
func apiURL(log []byte) string {
	if m := apiURLRe.FindSubmatch(log); m != nil {
		return string(m[1])
	}
	return ""
}

// readShare reads one node's share of flow and the partitions of topic its data
// plane runs, and reports why it is not stable.
func readShare(ctx context.Context, pr *proc, flow, topic string) (nodeShare, error) {
	var sh nodeShare
	b, err := os.ReadFile(pr.logPath)
	if err != nil {
		return sh, err
	}
	base := apiURL(b)
	if base == "" {
		return sh, fmt.Errorf("node %d has not logged its API address yet", pr.pid())
	}
	var reply flowsReply
	if err := getJSON(ctx, base+"/api/v1/flows", &reply); err != nil {
		return sh, err
	}
	for _, f := range reply.Flows {
		if f.Name != flow {
			continue
		}
		s := f.Share
		if s == nil {
			return sh, fmt.Errorf("node %d shows no share of flow %s (no group membership yet)", pr.pid(), flow)
		}
		if s.State != "stable" || !s.Lease {
			return sh, fmt.Errorf("node %d is %s (lease %v) in generation %d %s", pr.pid(), s.State, s.Lease, s.Generation, s.Error)
		}
		sh = nodeShare{MemberID: s.MemberID, Generation: s.Generation, Units: len(s.Units), Control: s.Control}
		for _, u := range s.Units {
			if u.Topic == topic {
				sh.Partitions = append(sh.Partitions, u.Partition)
			}
		}
		slices.Sort(sh.Partitions)
		var parts partitionsReply
		if err := getJSON(ctx, base+"/api/v1/partitions?flow="+url.QueryEscape(flow), &parts); err != nil {
			return sh, err
		}
		var running []int32
		for _, mp := range parts.Partitions {
			if mp.Flow == flow && mp.Topic == topic {
				running = append(running, mp.Partition)
			}
		}
		slices.Sort(running)
		if !slices.Equal(running, sh.Partitions) {
			return sh, fmt.Errorf("node %d owns partitions %v of %q but its data plane runs %v", pr.pid(), sh.Partitions, topic, running)
		}
		return sh, nil
	}
	return sh, fmt.Errorf("node %d has no flow %s yet", pr.pid(), flow)
}

// readShares reads every node's share (readShare).
func (r *runner) readShares(ctx context.Context, f flowSpec, procs []*proc, topic string) ([]nodeShare, error) {
	out := make([]nodeShare, len(procs))
	for i, pr := range procs {
		sh, err := readShare(ctx, pr, f.source+"->"+f.target, topic)
		if err != nil {
			return nil, err
		}
		out[i] = sh
	}
	return out, nil
}

// waitShared waits until the nodes share the flow: every node stable with its lease in
// one generation, each partition of topic owned by exactly one of them and run by its
// data plane, every node ready (/readyz) and the remote topic served by B.
func (r *runner) waitShared(ctx context.Context, f flowSpec, procs []*proc, topic string, partitions int) ([]nodeShare, error) {
	var shares []nodeShare
	err := waitFor(ctx, shareTimeout, 100*time.Millisecond, func() error {
		for _, pr := range procs {
			if exited, how := pr.exited(); exited {
				return fmt.Errorf("node %d exited (%v)", pr.pid(), how)
			}
		}
		got, err := r.readShares(ctx, f, procs, topic)
		if err != nil {
			return err
		}
		if err := checkShares(got, partitions); err != nil {
			return err
		}
		for _, pr := range procs {
			if err := ready(ctx, pr); err != nil {
				return err
			}
		}
		remote := f.remoteTopics()[0]
		if n, err := readyPartitions(ctx, r.dst, remote); err != nil || n < partitions {
			return fmt.Errorf("remote topic %q on B has %d of %d partitions (%v)", remote, n, partitions, err)
		}
		shares = got
		return nil
	})
	if err != nil {
		for _, pr := range procs {
			if exited, _ := pr.exited(); exited {
				return nil, pr.failure("the nodes did not share the flow: %v", err)
			}
		}
		return nil, fmt.Errorf("the nodes did not share the flow (logs %s...): %w", procs[0].logPath, err)
	}
	return shares, nil
}

// checkShares checks that the nodes are in one generation and that each of the topic's
// partitions has exactly one owner among them.
func checkShares(shares []nodeShare, partitions int) error {
	owner := map[int32]int{}
	for i, s := range shares {
		if s.Generation != shares[0].Generation {
			return fmt.Errorf("node %d is in generation %d, node 1 in %d", i+1, s.Generation, shares[0].Generation)
		}
		for _, p := range s.Partitions {
			if o, ok := owner[p]; ok {
				return fmt.Errorf("partition %d is owned by nodes %d and %d", p, o+1, i+1)
			}
			owner[p] = i
		}
	}
	var missing []int32
	for p := range int32(partitions) {
		if _, ok := owner[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("partitions %v have no owner in generation %d", missing, shares[0].Generation)
	}
	return nil
}

// ready asks the node's /readyz: every partition it owns flowing or caught up.
func ready(ctx context.Context, pr *proc) error {
	b, err := os.ReadFile(pr.logPath)
	if err != nil {
		return err
	}
	base := apiURL(b)
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking node %d whether it is ready: %w", pr.pid(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var v struct {
			Reasons []string `json:"reasons"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return fmt.Errorf("node %d is not ready: %s", pr.pid(), strings.Join(v.Reasons, "; "))
	}
	return nil
}

// getJSON decodes the reply of a GET to u into v.
func getJSON(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading %s: HTTP %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decoding %s: %w", u, err)
	}
	return nil
}

// sharesText is the partitions per node, "n1=4* n2=4" (* the control duty).
func sharesText(shares []nodeShare) string {
	parts := make([]string, len(shares))
	for i, s := range shares {
		mark := ""
		if s.Control {
			mark = "*"
		}
		parts[i] = fmt.Sprintf("n%d=%d%s", i+1, len(s.Partitions), mark)
	}
	return strings.Join(parts, " ")
}

// summarize fills in the summary per node count from the runs, in the order of the
// counts' first runs.
func (nr *nodesResult) summarize() {
	var order []int
	for _, run := range nr.Runs {
		if !slices.Contains(order, run.Nodes) {
			order = append(order, run.Nodes)
		}
	}
	slices.Sort(order)
	nr.Summary = nil
	for _, n := range order {
		s := nodesSummary{Nodes: n}
		var steady, total, cpu, rss, parts, largest, cores, coresN, coresA, coresB, share []float64
		var records int64
		for _, run := range nr.Runs {
			if run.Nodes != n {
				continue
			}
			if run.Error != "" {
				s.Failed++
				continue
			}
			s.Runs++
			records += run.Records
			steady, total, cpu = append(steady, run.SteadyMBPerSec), append(total, run.MBPerSec), append(cpu, run.SteadyCPUPerGB)
			cores, share = append(cores, run.CoresBusy), append(share, run.ShareSeconds)
			window := run.WallSeconds - run.FirstRecordSeconds
			if window > 0 {
				coresN = append(coresN, run.SteadyCPUSeconds/window)
				coresA = append(coresA, run.BrokerCPU["a"]/window)
				coresB = append(coresB, run.BrokerCPU["b"]/window)
			}
			var most int64
			for _, m := range run.Members {
				rss = append(rss, float64(m.Process.PeakRSSBytes)/(1<<20))
				parts = append(parts, float64(len(m.Partitions)))
				most = max(most, m.Records)
			}
			if run.TargetRecords > 0 {
				largest = append(largest, float64(most)/float64(run.TargetRecords))
			}
			if run.ShareChanged {
				s.ShareMoved++
			}
		}
		if s.Runs > 0 {
			s.RecordsAvg = float64(records) / float64(s.Runs)
		}
		s.SteadyMBps, s.MBps, s.SteadyCPUPerGB = statOf(steady), statOf(total), statOf(cpu)
		s.PeakRSSMiB, s.PartitionsPerNode, s.LargestShare = statOf(rss), statOf(parts), statOf(largest)
		s.CoresBusy, s.CoresNodes, s.CoresA, s.CoresB, s.ShareS = statOf(cores), statOf(coresN), statOf(coresA), statOf(coresB), statOf(share)
		nr.Summary = append(nr.Summary, s)
	}
	var base float64
	for i := range nr.Summary {
		s := &nr.Summary[i]
		if s.Runs == 0 {
			continue
		}
		if base == 0 {
			base = s.SteadyMBps.Median
		}
		if base > 0 {
			s.Scaling = s.SteadyMBps.Median / base
		}
	}
}
