//go:build faults

package faults

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/api"
	"strait/internal/kafkatest"
	"strait/internal/policy"
	tailer "strait/internal/tail"
	"strait/internal/verify"
	"strait/internal/wire"
)

// The soak's knobs (make soak SEED=… MINUTES=…).
const (
	// SoakSeedEnv names an environment variable with the seed of TestSoak's schedule of
	// faults; without it the seed comes from the clock. Either way it is logged first.
	SoakSeedEnv = "STRAIT_SOAK_SEED"
	// SoakMinutesEnv names an environment variable with the nemesis's time per mode, in
	// minutes (fractions allowed); without it shortSoak.
	SoakMinutesEnv = "STRAIT_SOAK_MINUTES"
	// shortSoak is the nemesis's time per mode in CI: five or six faults of different
	// kinds per mode, and TestSoak within about four minutes on 2 cores.
	shortSoak = 40 * time.Second
)

const (
	soakPartitions = 6
	// soakRate is the records a second each load writes (each side's, active-active).
	soakRate = 600
	// maxGroups bounds the consumer groups a mode commits, so that the judge's reading
	// of checkpoints stays short however long the soak.
	maxGroups = 24
	// brokerAllowance is how long a broker takes to stop and start again beyond the
	// fault's hold (up to 20 s under the soak's load on 2 cores): the plan keeps the
	// broker's cluster free of other faults meanwhile.
	brokerAllowance = 20 * time.Second
	// recoverShareTimeout bounds the wait for the three nodes to share the flows again
	// after the nemesis: a node continued or started at its very end rejoins within a
	// session and a rebalance.
	recoverShareTimeout = 90 * time.Second
	// soakCatchUpTimeout bounds the copy of the backlog a slow or cut target left.
	soakCatchUpTimeout = 2 * time.Minute
)

// soakNodes are the nodes of every mode, by base name; a node killed is started again
// under the same one.
var soakNodes = []string{"n1", "n2", "n3"}

type soakMode struct {
	name         string
	exactlyOnce  bool
	activeActive bool
}

var soakModes = []soakMode{
	{name: "at-least-once"},
	{name: "exactly-once", exactlyOnce: true},
	{name: "active-active", activeActive: true},
}

// TestSoak is a randomized fault schedule, in the manner of Jepsen's Kafka tests. In each
// of three modes three nodes (strait run on one file) replicate a steady load while a
// nemesis injects faults drawn from the seed: at least once C->B (C has three brokers,
// so its leaders can move), exactly once C->B, and active-active A<->B with the identity
// policy, each side writing into the same topic name. The nemesis kills a node with
// SIGKILL (started again under the same name), stops one with SIGSTOP (for up to the
// session timeout plus 5 s), stops and starts a broker of either side, moves the
// source's leaders, black-holes or closes a broker's proxy, adds latency to one, or caps
// a target's bandwidth; each fault heals after a random, bounded time, at most two run at
// once and never two on one resource, so at least one node always runs. Meanwhile
// consumer groups commit on the sources at random offsets. Once every fault healed, the
// load stopped and every node caught up, the judge checks: nothing lost, order kept (per
// partition; per origin partition active-active), duplicates at least once only within
// the windows of records copied and not committed when a fault or heal hit (see
// window), none in exactly-once mode read read_committed; no partition written by two
// nodes at once; active-active, no record back on its origin cluster; and every group's
// checkpoint: exact one way (a consumer at the downstream offset reads first the record
// at the committed one), never skipping a record the group had not read active-active.
//
// SoakSeedEnv picks the schedule, SoakMinutesEnv the nemesis's time per mode (40 s
// without it, for CI); a failure logs the seed, the schedule as it ran, the check that
// failed and the nodes' relevant log lines. The seed fixes the schedule, not its timing.
func TestSoak(t *testing.T) {
	if env.External() {
		t.Skip("the soak stops and starts brokers, which external clusters are not the test's to do")
	}
	seed := testSeed(t, SoakSeedEnv)
	d := soakDuration(t)
	t.Logf("nemesis for %v per mode; make soak SEED=%d MINUTES=%s replays the schedule", d, seed, minutes(d))
	for i, m := range soakModes {
		t.Run(m.name, func(t *testing.T) {
			runSoak(t, m, seed, uint64(i), d)
		})
	}
}

func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(SoakMinutesEnv)
	if v == "" {
		return shortSoak
	}
	m, err := strconv.ParseFloat(v, 64)
	if err != nil || m <= 0 {
		t.Fatalf("%s=%q: want a positive number of minutes", SoakMinutesEnv, v)
	}
	return time.Duration(m * float64(time.Minute)).Round(time.Second)
}

func minutes(d time.Duration) string { return strconv.FormatFloat(d.Minutes(), 'f', -1, 64) }

// soak is one mode's run.
type soak struct {
	t     *testing.T
	mode  soakMode
	seed  uint64
	d     time.Duration
	topic string
	flows []*soakFlow
	ns    *nodes
	live  map[string]*node // the latest run of each node, by base name
	// killed and frozen are the nodes the nemesis holds down now, by base name.
	killed, frozen map[string]bool
	// exitSeen is when the test saw a node's process gone on its own; supervised
	// describes every such exit and restart.
	exitSeen     map[string]time.Time
	supervised   []string
	plan         []*fault
	began        time.Time // the nemesis's start
	phase        string    // what the run was doing, for the report
	failedChecks []string
	healNow      chan struct{} // closed at the end: a bounced broker starts at once
	healOnce     sync.Once
	commits      *committer
}

// soakFlow is a flow of the mode and the load on its source (its origin's, active-active).
type soakFlow struct {
	f       flow
	l       *load
	w       *window // at least once: records copied and not committed, over time
	cpTopic string  // the flow's checkpoints topic, on its target
}

func runSoak(t *testing.T, m soakMode, seed, stream uint64, d time.Duration) {
	began := time.Now()
	s := &soak{t: t, mode: m, seed: seed, d: d, live: map[string]*node{}, killed: map[string]bool{}, frozen: map[string]bool{},
		exitSeen: map[string]time.Time{}, healNow: make(chan struct{}), phase: "setting up"}
	s.topic = kafkatest.Name(t, "soak")
	cfg := s.setUp()
	// One stream of the seed per mode: a mode's schedule is the same whether the
	// others run or not.
	s.plan = s.planFaults(rand.New(rand.NewPCG(seed, stream)))
	t.Logf("mode %s, seed %d: %d faults planned in %v:\n%s", m.name, seed, len(s.plan), d, s.schedule(false))
	// After the loads' cleanup is registered, so that it runs before theirs: a load
	// flushes to a broker that must be up.
	t.Cleanup(func() {
		s.healAll(false)
		s.report()
	})
	s.ns = newNodes(t, cfg)
	for _, name := range soakNodes {
		s.live[name] = s.ns.start(name)
	}
	units := unitsOf(s.topic, soakPartitions)
	for _, sf := range s.flows {
		v, took := waitShared(t, sf.f, s.liveNodes(), units, time.Minute)
		t.Logf("%s: three nodes share the flow %v after their start: %v", sf.f.name(), took.Round(100*time.Millisecond), v)
	}
	for _, sf := range s.flows {
		if !sf.f.exactlyOnce {
			sf.w = startWindow(t, sf.f, sf.l)
		}
		// It ends by itself five minutes after the nemesis would.
		sf.l.start(t, soakRate, soakRate*int((d+5*time.Minute)/time.Second))
	}
	for _, sf := range s.flows {
		waitMoreProgress(t, sf.f, s.topic, 0, time.Minute)
	}
	s.commits = s.startCommits(rand.New(rand.NewPCG(seed, stream+0xc0)))

	s.phase = "running the nemesis"
	s.runNemesis()
	s.commits.stop()
	t.Logf("the nemesis ran %v:\n%s", time.Since(s.began).Round(100*time.Millisecond), s.schedule(true))

	// A node's view of its partitions tells why a recovery fails; the nodes are gone
	// by the cleanups.
	defer func() {
		if t.Failed() && strings.HasPrefix(s.phase, "recovering") {
			s.logPartitions()
		}
	}()
	s.phase = "recovering: waiting for the loads' last records"
	for _, sf := range s.flows {
		t.Logf("%s: the load wrote %d records", sf.f.name(), sf.l.stop(t))
	}
	s.phase = "recovering: waiting for the three nodes to share the flows"
	s.waitRunning()
	for _, sf := range s.flows {
		v, took := waitShared(t, sf.f, s.liveNodes(), units, recoverShareTimeout)
		t.Logf("%s: the three nodes share the flow again %v after the load stopped: %v", sf.f.name(), took.Round(100*time.Millisecond), v)
	}
	s.phase = "recovering: waiting for every flow to copy everything"
	caughtUp := s.waitCaughtUp()
	s.checkNoStoppedPartitions()
	s.phase = "recovering: waiting for the checkpoints"
	cps := s.waitCheckpoints(caughtUp)
	for _, sf := range s.flows {
		if sf.f.exactlyOnce {
			logTransactions(t, sf.f, s.liveNodes(), s.ns.all)
		}
	}
	s.phase = "stopping the nodes"
	s.stopNodes()

	s.phase = "judging"
	if m.activeActive {
		s.judgeActiveActive(cps)
	} else {
		s.judgeOneWay(s.flows[0], cps[s.flows[0]])
	}
	t.Logf("mode %s took %v; %d node runs in all", m.name, time.Since(began).Round(time.Second), len(s.ns.all))
}

// setUp creates the mode's topics, flows and loads, and writes the nodes' config file.
func (s *soak) setUp() string {
	t := s.t
	groups := []string{
		"groups = " + regexp.QuoteMeta(s.topic) + "-g.*",
		"emit.checkpoints.interval.seconds = 1",
		"refresh.groups.interval.seconds = 1",
	}
	if !s.mode.activeActive {
		f := flow{alias: "L", src: threeBrokers(), dst: target(), exactlyOnce: s.mode.exactlyOnce}
		if f.exactlyOnce {
			f.alias = "T"
		}
		f.src.CreateReplicatedTopic(t, s.topic, soakPartitions, 3, nil)
		s.flows = []*soakFlow{{f: f, l: newLoad(t, f.src, s.topic, soakPartitions, 100), cpTopic: checkpointsTopic(t, policy.DefaultClass, f.alias)}}
		return f.config(t, regexp.QuoteMeta(s.topic), append(f.sharedProps(), groups...)...)
	}
	ab := flow{alias: "SA", to: "SB", src: source(), dst: target(), identity: true}
	ba := flow{alias: "SB", to: "SA", src: target(), dst: source(), identity: true}
	for _, f := range []flow{ab, ba} {
		f.src.CreateTopic(t, s.topic, soakPartitions, nil)
		l := newLoad(t, f.src, s.topic, soakPartitions, 100)
		l.tag = f.src.Name + ":" // tells the origins apart in the topic both hold
		s.flows = append(s.flows, &soakFlow{f: f, l: l, cpTopic: checkpointsTopic(t, policy.IdentityClass, f.alias)})
	}
	props := fmt.Sprintf(`clusters = SA, SB
SA.bootstrap.servers = %s
SB.bootstrap.servers = %s
SA->SB.enabled = true
SB->SA.enabled = true
replication.policy.class = %s
topics = %s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
sync.topic.configs.enabled = false
sync.topic.acls.enabled = false
emit.heartbeats.enabled = false
heartbeats.replication.enabled = false
%s
`, ab.src.ProxyBootstrap(), ab.dst.ProxyBootstrap(), policy.IdentityClass, regexp.QuoteMeta(s.topic),
		strings.Join(slices.Concat(clusterPropsOf("SA"), clusterPropsOf("SB"), groups), "\n"))
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkpointsTopic(t *testing.T, class, alias string) string {
	t.Helper()
	pol, err := policy.New(class, policy.DefaultSeparator, true, alias)
	if err != nil {
		t.Fatal(err)
	}
	return pol.CheckpointsTopic(alias)
}

// liveNodes is the latest run of every node, in name order.
func (s *soak) liveNodes() []*node {
	out := make([]*node, 0, len(soakNodes))
	for _, name := range soakNodes {
		out = append(out, s.live[name])
	}
	return out
}

// sourceSide and targetSide are the clusters a broker bounce of either kind hits: the
// flow's (the first flow's, active-active: A and B).
func (s *soak) sourceSide() *kafkatest.Cluster { return s.flows[0].f.src }
func (s *soak) targetSide() *kafkatest.Cluster { return s.flows[0].f.dst }

// targets are the clusters some flow of the mode writes to.
func (s *soak) targets() []*kafkatest.Cluster {
	var out []*kafkatest.Cluster
	for _, sf := range s.flows {
		out = append(out, sf.f.dst)
	}
	return out
}

// --- The nemesis --------------------------------------------------------------------

type faultKind string

const (
	killNode     faultKind = "kill -9"
	freezeNode   faultKind = "SIGSTOP"
	bounceSource faultKind = "source broker bounce"
	bounceTarget faultKind = "target broker bounce"
	moveLeaders  faultKind = "leader change"
	cutProxy     faultKind = "proxy partition"
	slowProxy    faultKind = "proxy latency"
	capTarget    faultKind = "slow target"
)

// kinds are the faults of the mode: leaders move only on the three-broker cluster.
func (s *soak) kinds() []faultKind {
	out := []faultKind{killNode, freezeNode, bounceSource, bounceTarget, cutProxy, slowProxy, capTarget}
	if len(s.sourceSide().Brokers) > 1 {
		out = append(out, moveLeaders)
	}
	return out
}

// fault is one fault of the plan, and how it ran.
type fault struct {
	kind faultKind
	// at is the planned start after the nemesis began; hold how long until it heals
	// (0: at once).
	at, hold time.Duration
	res      string // what it holds: no two faults on one resource at once
	node     string
	cluster  *kafkatest.Cluster
	broker   *kafkatest.Broker // bounced, or the one whose proxy is hit
	sigkill  bool              // a bounce by SIGKILL rather than SIGTERM
	refuse   bool              // a proxy partition that refuses connections rather than black-holing them
	latency  time.Duration
	kibps    int64

	// How it ran. A bounce's goroutine sets started, healed, note and err before it
	// closes done.
	started, healed time.Time
	note            string
	err             error
	done            chan struct{}
	down            bool // the bounced broker is still stopped
}

func (f *fault) brokerName() string { return fmt.Sprintf("%s/%d", f.cluster.Name, f.broker.ID) }

// busy is how long the fault holds its resource and counts as running.
func (f *fault) busy() time.Duration {
	switch f.kind {
	case bounceSource, bounceTarget:
		return f.hold + brokerAllowance
	case moveLeaders:
		return 3 * time.Second
	}
	return f.hold
}

func (f *fault) String() string {
	switch f.kind {
	case killNode:
		return fmt.Sprintf("kill -9 %s, started again after %v", f.node, f.hold)
	case freezeNode:
		return fmt.Sprintf("SIGSTOP %s for %v", f.node, f.hold)
	case bounceSource, bounceTarget:
		sig := "SIGTERM"
		if f.sigkill {
			sig = "SIGKILL"
		}
		return fmt.Sprintf("%s: stop broker %s (%s), start it %v later", f.kind, f.brokerName(), sig, f.hold)
	case moveLeaders:
		return fmt.Sprintf("move the topic's leaders on cluster %s", f.cluster.Name)
	case cutProxy:
		how := "black-holed"
		if f.refuse {
			how = "refusing connections"
		}
		return fmt.Sprintf("proxy of broker %s %s for %v", f.brokerName(), how, f.hold)
	case slowProxy:
		return fmt.Sprintf("latency %v±%v each way on the proxy of broker %s for %v", f.latency, f.latency/4, f.brokerName(), f.hold)
	case capTarget:
		return fmt.Sprintf("slow target: %d KiB/s into broker %s's proxy for %v", f.kibps, f.brokerName(), f.hold)
	}
	return string(f.kind)
}

// randBetween draws a duration in [lo, hi), in tenths of a second.
func randBetween(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(rng.Int64N(int64(hi-lo)))).Round(100 * time.Millisecond)
}

// drawFault draws a fault of kind: its target and its duration.
func (s *soak) drawFault(rng *rand.Rand, kind faultKind) *fault {
	f := &fault{kind: kind}
	pick := func(cs ...*kafkatest.Cluster) {
		f.cluster = cs[rng.IntN(len(cs))]
		f.broker = f.cluster.Brokers[rng.IntN(len(f.cluster.Brokers))]
		f.res = "proxy " + f.brokerName()
	}
	switch kind {
	case killNode:
		f.node = soakNodes[rng.IntN(len(soakNodes))]
		f.hold = randBetween(rng, 2*time.Second, 12*time.Second)
	case freezeNode:
		f.node = soakNodes[rng.IntN(len(soakNodes))]
		f.hold = randBetween(rng, 500*time.Millisecond, sessionTimeout+5*time.Second)
	case bounceSource, bounceTarget:
		c := s.sourceSide()
		if kind == bounceTarget {
			c = s.targetSide()
		}
		pick(c)
		f.sigkill = rng.IntN(2) == 0
		f.hold = randBetween(rng, time.Second, 6*time.Second)
	case moveLeaders:
		f.cluster = s.sourceSide()
	case cutProxy:
		pick(s.sourceSide(), s.targetSide())
		f.refuse = rng.IntN(2) == 0
		f.hold = randBetween(rng, 2*time.Second, 12*time.Second)
	case slowProxy:
		pick(s.sourceSide(), s.targetSide())
		f.latency = randBetween(rng, 50*time.Millisecond, 300*time.Millisecond)
		f.hold = randBetween(rng, 3*time.Second, 15*time.Second)
	case capTarget:
		pick(s.targets()...)
		f.kibps = 64 << rng.IntN(4)
		f.hold = randBetween(rng, 3*time.Second, 15*time.Second)
	}
	switch kind {
	case killNode, freezeNode:
		f.res = "node " + f.node
	case bounceSource, bounceTarget, moveLeaders:
		// One broker of a cluster down at a time, and no election while one is.
		f.res = "brokers of " + f.cluster.Name
	}
	return f
}

// planFaults draws the schedule: kinds from a shuffled bag (every kind once before any
// twice, so a short run still has several), each placed after the hold of the one before,
// or a little into it, where at most one other fault runs (a broker still starting
// counts) and none holds its resource; the last heals before the nemesis's time is up.
func (s *soak) planFaults(rng *rand.Rand) []*fault {
	kinds := s.kinds()
	var bag []faultKind
	next := func() faultKind {
		if len(bag) == 0 {
			bag = slices.Clone(kinds)
			rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		k := bag[0]
		bag = bag[1:]
		return k
	}
	var plan []*fault
	at := time.Duration(0)
	// Each fault placed moves at on; a kind that does not fit any more is a miss, and
	// the plan ends after a round of misses.
	for misses := 0; misses < len(kinds); {
		f := s.drawFault(rng, next())
		f.at = fitAt(plan, f, at)
		if f.at+f.busy() > s.d {
			misses++
			continue
		}
		misses = 0
		plan = append(plan, f)
		if rng.IntN(3) == 0 && f.hold > 0 {
			at = f.at + f.hold*time.Duration(30+rng.IntN(50))/100 // overlapping a little
		} else {
			at = f.at + f.hold + randBetween(rng, 500*time.Millisecond, 3*time.Second)
		}
	}
	return plan
}

// fitAt returns the first instant from at when f can start: none of the faults planned
// (which all start at or before it) holds f's resource, and at most one runs.
func fitAt(plan []*fault, f *fault, at time.Duration) time.Duration {
	for moved := true; moved; {
		moved = false
		var running []*fault
		for _, p := range plan {
			if end := p.at + p.busy(); end > at {
				if p.res == f.res {
					at, moved = end+time.Second, true
					break
				}
				running = append(running, p)
			}
		}
		if !moved && len(running) >= 2 {
			at = slices.MinFunc(running, func(a, b *fault) int { return cmp.Compare(a.at+a.busy(), b.at+b.busy()) }).busyEnd()
			moved = true
		}
	}
	return at
}

func (f *fault) busyEnd() time.Duration { return f.at + f.busy() }

// runNemesis runs the plan: each start and heal at its planned time (later when the one
// before took long). A broker bounce runs in a goroutine of its own, which starts the
// broker after its hold, so that the stop and start, which take seconds, delay nothing
// else. Every start and heal opens a new episode of the windows: the duplicates one may
// cause are bounded by the records copied and not committed from then on.
func (s *soak) runNemesis() {
	type event struct {
		at   time.Duration
		f    *fault
		heal bool
	}
	var evs []event
	for _, f := range s.plan {
		evs = append(evs, event{at: f.at, f: f})
		if f.hold > 0 && f.kind != bounceSource && f.kind != bounceTarget {
			evs = append(evs, event{at: f.at + f.hold, f: f, heal: true})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	s.began = time.Now()
	for _, ev := range evs {
		// The schedule's own time, not a wait for anything; meanwhile, a supervisor's
		// rounds.
		for left := time.Until(s.began.Add(ev.at)); left > 0; left = time.Until(s.began.Add(ev.at)) {
			time.Sleep(min(left, 500*time.Millisecond))
			s.supervise(false)
		}
		if ev.heal {
			s.heal(ev.f)
		} else {
			s.inject(ev.f)
		}
		for _, sf := range s.flows {
			if sf.w != nil {
				sf.w.fault()
			}
		}
	}
	for _, f := range s.plan {
		if f.done != nil {
			<-f.done // bounded: the script's calls time out
		}
	}
	s.healAll(true)
}

func (s *soak) since(at time.Time) string {
	return "+" + at.Sub(s.began).Round(100*time.Millisecond).String()
}

func (s *soak) inject(f *fault) {
	t := s.t
	if f.kind == killNode || f.kind == freezeNode {
		s.supervise(true) // a node to stop must run
	}
	f.started = time.Now()
	switch f.kind {
	case killNode:
		s.ns.kill(s.live[f.node])
		s.killed[f.node] = true
		f.note = s.live[f.node].name + " killed"
	case freezeNode:
		s.ns.freeze(s.live[f.node])
		s.frozen[f.node] = true
		f.note = s.live[f.node].name + " stopped"
	case bounceSource, bounceTarget:
		s.waitBounces(f)
		s.bounce(f)
	case moveLeaders:
		s.waitBounces(f)
		s.moveLeaders(f)
	case cutProxy:
		if f.refuse {
			f.broker.Proxy.Refuse(t)
		} else {
			f.broker.Proxy.Blackhole(t)
		}
	case slowProxy:
		f.broker.Proxy.Latency(t, kafkatest.Both, f.latency, f.latency/4)
	case capTarget:
		f.broker.Proxy.Bandwidth(t, kafkatest.Upstream, f.kibps)
	}
	t.Logf("nemesis %s (planned +%v): %v", s.since(f.started), f.at, f)
}

func (s *soak) heal(f *fault) {
	t := s.t
	f.healed = time.Now()
	switch f.kind {
	case killNode:
		s.live[f.node] = s.ns.start(f.node)
		delete(s.killed, f.node)
		f.note += "; started again as " + s.live[f.node].name
	case freezeNode:
		s.ns.thaw(s.live[f.node])
		delete(s.frozen, f.node)
		f.note += "; continued"
	case cutProxy, slowProxy, capTarget:
		f.broker.Proxy.Heal(t)
	}
	t.Logf("nemesis %s (planned +%v): healed %v", s.since(f.healed), f.at+f.hold, f)
}

// bounce stops the fault's broker, and starts it again after the hold, in a goroutine:
// kafka.sh's calls take seconds. It must not fail the test from there, so it runs the
// script as Broker.Stop and Broker.Start do, keeping the error.
func (s *soak) bounce(f *fault) {
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		if err := brokerScript(f, "stop-broker"); err != nil {
			f.err = err
			return
		}
		f.down = true
		stopped := time.Now()
		select {
		case <-time.After(f.hold): // the fault's duration
		case <-s.healNow:
		}
		if err := brokerScript(f, "start-broker"); err != nil {
			f.err = err
			return
		}
		f.down = false
		f.healed = time.Now()
		f.note = fmt.Sprintf("stop took %v, down %v", stopped.Sub(f.started).Round(100*time.Millisecond), f.healed.Sub(stopped).Round(100*time.Millisecond))
		s.t.Logf("nemesis %s: broker %s serves again (%s)", s.since(f.healed), f.brokerName(), f.note)
	}()
}

// waitBounces waits until the bounces before f of the brokers of its cluster have
// started their broker again: one may still be starting, beyond its allowance.
func (s *soak) waitBounces(f *fault) {
	for _, p := range s.plan {
		if p != f && p.done != nil && p.res == f.res {
			<-p.done // bounded: the script's calls time out
		}
	}
}

func brokerScript(f *fault, command string) error {
	args := []string{command, "-d", env.Dir, f.cluster.Name, "--node", strconv.Itoa(int(f.broker.ID))}
	if f.sigkill && command == "stop-broker" {
		args = append(args, "--kill")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, env.Script(), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second // a broker the script started may hold its pipes
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kafka.sh %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// moveLeaders makes every partition of the topic prefer its next replica (the same
// replicas in another order: the reassignment completes at once) and elects the
// preferred leaders. A partition whose new preferred replica is not in sync keeps its
// leader; the fault's note counts the ones that moved.
func (s *soak) moveLeaders(f *fault) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(f.cluster.Client(s.t))
	md, err := adm.Metadata(ctx, s.topic)
	if err == nil {
		err = md.Topics[s.topic].Err
	}
	if err != nil {
		f.note = fmt.Sprintf("reading the leaders failed: %v", err)
		return
	}
	var req kadm.AlterPartitionAssignmentsReq
	var set kadm.TopicsSet
	before := map[int32]int32{}
	for p, pd := range md.Topics[s.topic].Partitions {
		if len(pd.Replicas) > 1 {
			req.Assign(s.topic, p, append(slices.Clone(pd.Replicas[1:]), pd.Replicas[0]))
			set.Add(s.topic, p)
			before[p] = pd.Leader
		}
	}
	if resps, err := adm.AlterPartitionAssignments(ctx, req); err != nil || resps.Error() != nil {
		f.note = fmt.Sprintf("reordering the replicas failed: %v %v", err, resps.Error())
		return
	}
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		f.note = fmt.Sprintf("electing the leaders failed: %v", err)
		return
	}
	var moved, kept []string
	for p, r := range res[s.topic] {
		if r.Err != nil {
			kept = append(kept, fmt.Sprintf("p%d (%v)", p, r.Err))
		} else {
			moved = append(moved, fmt.Sprintf("p%d from %d", p, before[p]))
		}
	}
	slices.Sort(moved)
	slices.Sort(kept)
	f.note = fmt.Sprintf("moved %s; kept %s", strings.Join(moved, ", "), strings.Join(kept, ", "))
}

// healAll heals whatever is still broken. At the nemesis's end nothing should be; a run
// that failed midway leaves faults, and the next test must find every broker up, every
// link clean and no process stopped. With restart it also starts killed nodes again.
func (s *soak) healAll(restart bool) {
	t := s.t
	s.healOnce.Do(func() { close(s.healNow) })
	for _, f := range s.plan {
		if f.done == nil {
			continue
		}
		<-f.done
		if f.err != nil {
			t.Errorf("nemesis: %v", f.err)
		}
		if f.down {
			f.broker.Start(t)
			f.down = false
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.frozen)) {
		s.ns.thaw(s.live[name])
		delete(s.frozen, name)
	}
	for _, c := range []*kafkatest.Cluster{s.sourceSide(), s.targetSide()} {
		for _, p := range c.Proxies() {
			p.Heal(t)
		}
	}
	if restart {
		for _, name := range slices.Sorted(maps.Keys(s.killed)) {
			s.live[name] = s.ns.start(name)
			delete(s.killed, name)
		}
		s.supervise(true)
	}
}

// supervise starts again, as a supervisor (systemd, Kubernetes) would, every node whose
// process ended on its own, 2 s after the test saw it gone (at once with now). Strait
// exits at start when a cluster does not answer (daemon.ping fails fast), which a
// node started again during an outage meets: expected. A node that exits after it
// logged "running" is a failure.
func (s *soak) supervise(now bool) {
	for _, name := range soakNodes {
		n := s.live[name]
		if s.killed[name] || !n.s.exited() {
			continue
		}
		if s.exitSeen[name].IsZero() {
			s.exitSeen[name] = time.Now()
		}
		if !now && time.Since(s.exitSeen[name]) < 2*time.Second {
			continue
		}
		code := n.s.wait(s.t, time.Second)
		last := lastLine(n.s.out.String())
		ran := slices.ContainsFunc(n.s.logs(), func(l logLine) bool { return l.attrs["msg"] == "running" })
		if ran {
			s.t.Errorf("%s exited on its own (code %d) while it ran: %s", n.name, code, last)
		}
		s.live[name] = s.ns.start(name)
		delete(s.exitSeen, name)
		what := fmt.Sprintf("%s %s: %s exited on its own (code %d, running %v: %.300s); started again as %s",
			s.since(time.Now()), clock(time.Now()), n.name, code, ran, last, s.live[name].name)
		s.supervised = append(s.supervised, what)
		s.t.Logf("supervisor %s", what)
	}
}

// waitRunning supervises the nodes until each one's process runs past its start-up
// checks: one started at the nemesis's end may still exit on a link the last heal reset.
func (s *soak) waitRunning() {
	kafkatest.Eventually(s.t, recoverShareTimeout, func() error {
		s.supervise(false)
		for _, n := range s.liveNodes() {
			if n.s.exited() || !slices.ContainsFunc(n.s.logs(), func(l logLine) bool { return l.attrs["msg"] == "running" }) {
				return fmt.Errorf("%s has not started yet", n.name)
			}
		}
		return nil
	})
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// schedule describes the plan, and with ran how each fault ran, one line each.
func (s *soak) schedule(ran bool) string {
	var b strings.Builder
	for i, f := range s.plan {
		fmt.Fprintf(&b, "  %2d. +%v %v", i+1, f.at, f)
		if ran {
			switch {
			case f.started.IsZero():
				b.WriteString(" — not started")
			case f.healed.IsZero() && f.hold > 0:
				fmt.Fprintf(&b, " — started %s (%s), not healed", s.since(f.started), clock(f.started))
			case f.hold > 0:
				fmt.Fprintf(&b, " — started %s (%s), healed %s", s.since(f.started), clock(f.started), s.since(f.healed))
			default:
				fmt.Fprintf(&b, " — at %s (%s)", s.since(f.started), clock(f.started))
			}
			if f.note != "" {
				fmt.Fprintf(&b, ": %s", f.note)
			}
			if f.err != nil {
				fmt.Fprintf(&b, " ERROR %v", f.err)
			}
		}
		b.WriteString("\n")
	}
	if ran {
		for _, what := range s.supervised {
			fmt.Fprintf(&b, "  supervisor %s\n", what)
		}
	}
	return b.String()
}

// report logs, when the mode failed, what a replay and a diagnosis need: the seed, the
// phase and checks that failed, the schedule as it ran, and the nodes' relevant lines.
func (s *soak) report() {
	t := s.t
	if !t.Failed() {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SOAK FAILED: mode %s, seed %d, while %s", s.mode.name, s.seed, s.phase)
	if len(s.failedChecks) > 0 {
		fmt.Fprintf(&b, "; failed checks: %s", strings.Join(s.failedChecks, ", "))
	}
	fmt.Fprintf(&b, "\nmake soak SEED=%d MINUTES=%s replays the schedule (not its timing); nemesis began at %s:\n%s",
		s.seed, minutes(s.d), clock(s.began), s.schedule(true))
	if s.ns != nil {
		if dir, err := s.keepLogs(); err != nil {
			fmt.Fprintf(&b, "keeping the nodes' logs failed: %v\n", err)
		} else {
			fmt.Fprintf(&b, "the nodes' full logs are in %s\n", dir)
		}
		b.WriteString("Strait's errors (not its Kafka clients' connection errors), stopped partitions, aborted transactions, lost memberships and exits:\n")
		for _, n := range s.ns.all {
			var lines []string
			for _, l := range n.s.logs() {
				msg := fmt.Sprint(l.attrs["msg"])
				if l.level() == "ERROR" && l.attrs["component"] != nil || strings.HasPrefix(msg, "exactly-once mode: aborted") || strings.HasPrefix(msg, "membership lost") {
					lines = append(lines, l.raw)
				}
			}
			// A process's last words, when it exited with a message of its own.
			if last := lastLine(n.s.out.String()); n.s.exited() && !strings.HasPrefix(last, "{") {
				lines = append(lines, "exit: "+last)
			}
			if len(lines) > 20 {
				lines = append(lines[:10], append([]string{fmt.Sprintf("[%d lines]", len(lines)-20)}, lines[len(lines)-10:]...)...)
			}
			for _, l := range lines {
				fmt.Fprintf(&b, "  %s: %.600s\n", n.name, l)
			}
		}
	}
	t.Log(b.String())
}

// keepLogs writes every node's log to a directory the test leaves behind.
func (s *soak) keepLogs() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("strait-soak-%d", s.seed), s.mode.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, n := range s.ns.all {
		if err := os.WriteFile(filepath.Join(dir, n.name+".log"), []byte(n.s.out.String()), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// --- Consumer groups ----------------------------------------------------------------

// groupCommit is a consumer group committed on a flow's source during the run.
type groupCommit struct {
	group string
	sf    *soakFlow
	at    map[int32]int64 // committed offset per partition
}

type committer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	done   []groupCommit
	failed []string
}

// startCommits commits, every interval, a new group on one of the flows' sources (in
// turn) at a random offset of each partition below its end. A commit that fails (a
// broker is down) is left out of the judge, as its group's state is unknown; its group
// is never used again.
func (s *soak) startCommits(rng *rand.Rand) *committer {
	c := &committer{}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	admins := map[*soakFlow]*kadm.Client{}
	for _, sf := range s.flows {
		admins[sf] = kadm.NewClient(sf.f.src.Client(s.t))
	}
	every := max(3*time.Second, s.d/maxGroups)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := range 2 * maxGroups { // bounded, whatever fails
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sf := s.flows[i%len(s.flows)]
			g := groupCommit{group: fmt.Sprintf("%s-g%02d", s.topic, i), sf: sf, at: map[int32]int64{}}
			if err := commitRandom(ctx, admins[sf], rng, s.topic, g); err != nil {
				c.mu.Lock()
				c.failed = append(c.failed, fmt.Sprintf("%s: %v", g.group, err))
				c.mu.Unlock()
				continue
			}
			c.mu.Lock()
			c.done = append(c.done, g)
			n := len(c.done)
			c.mu.Unlock()
			if n >= maxGroups {
				return
			}
		}
	}()
	return c
}

func commitRandom(ctx context.Context, adm *kadm.Client, rng *rand.Rand, topic string, g groupCommit) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	offs := kadm.Offsets{}
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		switch {
		case o.Err != nil:
			errs = append(errs, o.Err)
		case o.Offset == 0:
			errs = append(errs, fmt.Errorf("partition %d is empty", o.Partition))
		default:
			g.at[o.Partition] = rng.Int64N(o.Offset)
			offs.Add(kadm.Offset{Topic: topic, Partition: o.Partition, At: g.at[o.Partition], LeaderEpoch: -1})
		}
	})
	if len(errs) > 0 {
		return errs[0]
	}
	resp, err := adm.CommitOffsets(ctx, g.group, offs)
	if err == nil {
		err = resp.Error()
	}
	return err
}

// stop ends the commits and returns them.
func (c *committer) stop() []groupCommit {
	c.cancel()
	c.wg.Wait()
	return c.done
}

// --- Recovery -----------------------------------------------------------------------

// waitCaughtUp waits until every flow's stored progress reached its source's end. An
// active-active flow's source grows by the other flow's copies, which it skips (they
// came from its target) but must still pass: two rounds see every copy. It returns when
// the last flow caught up.
func (s *soak) waitCaughtUp() time.Time {
	rounds := 1
	if s.mode.activeActive {
		rounds = 2
	}
	for range rounds {
		for _, sf := range s.flows {
			took := waitCaughtUp(s.t, sf.f, s.topic, nil, soakCatchUpTimeout)
			s.t.Logf("%s caught up in %v", sf.f.name(), took.Round(100*time.Millisecond))
		}
	}
	return time.Now()
}

// checkNoStoppedPartitions fails the test for every partition a node shows stopped once
// everything was copied: one that gave up.
func (s *soak) checkNoStoppedPartitions() {
	for _, n := range s.liveNodes() {
		ps, err := partitionsOf(s.t.Context(), n)
		if err != nil {
			s.t.Errorf("%s: %v", n.name, err)
		}
		for _, p := range ps {
			if p.State == "stopped" {
				s.t.Errorf("%s: %s %s[%d] stopped, after every record was copied: %s", n.name, p.Flow, p.Topic, p.Partition, p.LastError)
			}
		}
	}
}

// logPartitions logs every partition the live nodes copy, with its state and error.
func (s *soak) logPartitions() {
	for _, n := range s.liveNodes() {
		ps, err := partitionsOf(context.Background(), n)
		if err != nil {
			s.t.Logf("%s: %v", n.name, err)
			continue
		}
		for _, p := range ps {
			s.t.Logf("%s: %s %s[%d] %s, next %d of %d: %s", n.name, p.Flow, p.Topic, p.Partition, p.State, p.Next, p.End, p.LastError)
		}
	}
}

// partitionsOf reads the partitions a node copies from its API (/api/v1/partitions).
func partitionsOf(ctx context.Context, n *node) ([]api.PartitionView, error) {
	base := n.s.apiURL()
	if base == "" {
		return nil, fmt.Errorf("%s has not logged its API's address", n.name)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/partitions", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v api.PartitionsView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding the partitions (HTTP %s): %w", resp.Status, err)
	}
	return v.Partitions, nil
}

// waitCheckpoints waits until, for every flow, an emission of checkpoints ran after
// caughtUp (the control holder's API says when one last wrote or confirmed every
// group's checkpoints) and every group committed has a checkpoint at its committed
// offset of every partition. It returns the latest checkpoints per flow, by
// "group/topic/partition".
func (s *soak) waitCheckpoints(caughtUp time.Time) map[*soakFlow]map[string]wire.Checkpoint {
	t := s.t
	commits := s.commits.stop()
	c := s.commits
	c.mu.Lock()
	t.Logf("%d groups committed on the sources, %d commits failed (left out): %s", len(commits), len(c.failed), strings.Join(c.failed, "; "))
	c.mu.Unlock()
	// An index follower may trail the last copies by a moment.
	after := caughtUp.Add(2 * time.Second)
	out := map[*soakFlow]map[string]wire.Checkpoint{}
	for _, sf := range s.flows {
		kafkatest.Eventually(t, time.Minute, func() error {
			var last time.Time
			for _, n := range s.liveNodes() {
				if v, err := n.s.flowView(t.Context(), sf.f); err == nil && v.CheckpointAge != nil {
					last = maxTime(last, time.Now().Add(-time.Duration(*v.CheckpointAge*float64(time.Second))))
				}
			}
			if !last.After(after) {
				return fmt.Errorf("%s: the last emission of checkpoints that covered every group was at %s, before %s", sf.f.name(), clock(last), clock(after))
			}
			cps, err := readCheckpoints(sf.f.dst, sf.cpTopic)
			if err != nil {
				return err
			}
			for _, g := range commits {
				if g.sf != sf {
					continue
				}
				for p, at := range g.at {
					cp, ok := cps[checkpointKey(g.group, sf.f.remote(s.topic), p)]
					if !ok || cp.UpstreamOffset != at {
						return fmt.Errorf("%s: no checkpoint of group %s, partition %d at %d yet (have %v)", sf.f.name(), g.group, p, at, cp)
					}
				}
			}
			out[sf] = cps
			return nil
		})
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func checkpointKey(group, topic string, p int32) string {
	return fmt.Sprintf("%s/%s/%d", group, topic, p)
}

// readCheckpoints reads the latest checkpoint per group, topic and partition.
func readCheckpoints(c *kafkatest.Cluster, topic string) (map[string]wire.Checkpoint, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...)}, tailer.ClientOpts()...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]wire.Checkpoint{}
	_, err = tailer.ReadToEnd(ctx, cl, topic, func(r *kgo.Record) {
		if cp, err := wire.DecodeCheckpoint(r.Key, r.Value); err == nil {
			out[checkpointKey(cp.Group, cp.Topic, cp.Partition)] = cp
		}
	})
	return out, err
}

// stopNodes ends every node with SIGTERM at once and expects a clean exit of each.
func (s *soak) stopNodes() {
	live := s.liveNodes()
	for _, n := range live {
		_ = n.s.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, n := range live {
		if code := n.s.wait(s.t, time.Minute); code != 0 {
			s.t.Errorf("%s exited with %d after SIGTERM, want 0", n.name, code)
		}
	}
}

// --- The judge ----------------------------------------------------------------------

// check runs one check of the judge as a subtest, so that a failure names it.
func (s *soak) check(name string, fn func(t *testing.T)) {
	if !s.t.Run(name, fn) {
		s.failedChecks = append(s.failedChecks, name)
	}
}

// judgeOneWay judges a C->B mode. Records: the sequence checker compares the source
// with the replica (read_committed): nothing lost, nothing reordered, nothing foreign;
// at least once, each partition's duplicates fit the sum of its windows (the records
// copied beyond the progress committed, at their largest after each start or heal of a
// fault: a re-send starts at committed progress); in exactly-once mode there are none.
// Writers: no partition's copies interleave two writers (a writer never writes again
// once another wrote after it). Translation: for every group, a consumer starting
// at its checkpoint's downstream offset reads first the copy of the record at its
// committed offset.
func (s *soak) judgeOneWay(sf *soakFlow, cps map[string]wire.Checkpoint) {
	f := sf.f
	var rep map[int32][]copied
	s.check("records", func(t *testing.T) {
		if f.exactlyOnce {
			for _, r := range verifyTopic(t, f, s.topic) {
				if r.Duplicates != 0 {
					t.Errorf("%s[%d]: %d duplicates (%d replays) in exactly-once mode, read read_committed", s.topic, r.Partition, r.Duplicates, r.Replays)
				}
			}
		} else {
			verifyWindow(t, f, s.topic, sf.w)
		}
		rep = replica(t, f, s.topic)
		logDuplicates(t, s.topic, rep)
	})
	s.check("writers", func(t *testing.T) {
		checkNoInterleave(t, s.topic, rep)
		t.Logf("writers per partition: %s", writers(rep))
		noteOverlaps(t, ownershipOf(t, s.ns.all, f.name()))
	})
	s.check("translation", func(t *testing.T) { s.checkExact(t, sf, cps, rep) })
}

// noteOverlaps logs the times two nodes' ownership intervals overlapped by their logs.
// They are not the judge's: a node cut off from the group's coordinator logs its
// release only once it hears it lost the membership, after the others took its
// partitions over, while its lease, which its writes need, lapsed on its own clock
// before the coordinator could give them away. The replica judges (checkNoInterleave).
func noteOverlaps(t *testing.T, rec map[string][]interval) {
	t.Helper()
	for _, o := range overlaps(rec) {
		t.Logf("NOTE by the logs (release lines come late after a lost membership): %s", o)
	}
}

// logDuplicates logs the runs of re-sent records, the first ten in full.
func logDuplicates(t *testing.T, what string, rep map[int32][]copied) {
	t.Helper()
	dups := duplicates(rep)
	var n int
	for i, d := range dups {
		n += d.records
		if i < 10 {
			t.Logf("%s: duplicates: %v", what, d)
		}
	}
	t.Logf("%s: %d duplicates in %d runs", what, n, len(dups))
}

// checkExact checks every group committed on the flow's source: a consumer of the
// replica starting at the checkpoint's downstream offset reads first (read_committed)
// the copy of the record at the committed upstream offset.
func (s *soak) checkExact(t *testing.T, sf *soakFlow, cps map[string]wire.Checkpoint, rep map[int32][]copied) {
	// The load's sequence number at each committed offset.
	seqAt := map[int32]map[int64]int64{}
	for _, g := range s.commits.done {
		for p, at := range g.at {
			if seqAt[p] == nil {
				seqAt[p] = map[int64]int64{}
			}
			seqAt[p][at] = -1
		}
	}
	l := sf.l
	l.mu.Lock()
	for p, offs := range l.offsets {
		for seq, o := range offs {
			if _, ok := seqAt[int32(p)][o]; ok {
				seqAt[int32(p)][o] = int64(seq)
			}
		}
	}
	l.mu.Unlock()
	checked := 0
	for _, g := range s.commits.done {
		for _, p := range slices.Sorted(maps.Keys(g.at)) {
			u := g.at[p]
			want := seqAt[p][u]
			if want < 0 {
				t.Errorf("group %s: committed offset %d of %s[%d] holds no record of the load (a harness error)", g.group, u, s.topic, p)
				continue
			}
			cp := cps[checkpointKey(g.group, sf.f.remote(s.topic), p)]
			rs := rep[p]
			i, _ := slices.BinarySearchFunc(rs, cp.DownstreamOffset, func(c copied, off int64) int { return cmp.Compare(c.offset, off) })
			checked++
			if i == len(rs) {
				t.Errorf("group %s: committed at %d of %s[%d] (record %d), checkpointed at %d of %s: a consumer there reads nothing (the replica ends at %d)",
					g.group, u, s.topic, p, want, cp.DownstreamOffset, sf.f.remote(s.topic), rs[len(rs)-1].offset+1)
				continue
			}
			if got := rs[i]; got.seq != want {
				t.Errorf("group %s: committed at %d of %s[%d] (record %d), checkpointed at %d of %s: a consumer there reads first record %d (offset %d), not %d",
					g.group, u, s.topic, p, want, cp.DownstreamOffset, sf.f.remote(s.topic), got.seq, got.offset, want)
			}
		}
	}
	t.Logf("%d checkpoints of %d groups checked: a consumer at each reads first the record at the committed offset", checked, len(s.commits.done))
}

// placed is a record of a load where the judge found it: the origin cluster's name and
// its sequence number there.
type placed struct {
	offset int64
	origin string
	seq    int64
}

// originOf is the name of the cluster whose load wrote the record ("a", "b"), "" for
// none.
func originOf(r *kgo.Record) string {
	if i := bytes.IndexByte(r.Value, ':'); i > 0 && i < 4 {
		return string(r.Value[:i])
	}
	return ""
}

// judgeActiveActive judges the identity pair: for each origin, its records on the other
// cluster as judgeOneWay's records (the sequence checker on that origin's records
// alone, the duplicates within its flow's windows); no loop (every record once on its
// origin cluster: a copy that came back would be a second); writers as judgeOneWay's
// for the origin's copies; and every checkpoint never skips a record the group had not
// read (see checkSkipsNothing).
func (s *soak) judgeActiveActive(cps map[*soakFlow]map[string]wire.Checkpoint) {
	ab, ba := s.flows[0], s.flows[1]
	a, b := ab.f.src, ba.f.src
	placedOn := map[*kafkatest.Cluster]map[int32][]placed{a: {}, b: {}}
	checkers := map[*soakFlow]map[int32]*verify.Checker{ab: {}, ba: {}}
	reps := map[*soakFlow]map[int32][]copied{ab: {}, ba: {}}
	local := map[*soakFlow]map[int32]map[int64]int{ab: {}, ba: {}}
	checker := func(sf *soakFlow, p int32) *verify.Checker {
		if checkers[sf][p] == nil {
			checkers[sf][p] = verify.NewChecker(p)
		}
		return checkers[sf][p]
	}
	flowOf := map[string]*soakFlow{a.Name: ab, b.Name: ba}
	// Each origin's records as source before any of its copies: A, then B (B's own and
	// A's copies), then A again for B's copies.
	s.check("records", func(t *testing.T) {
		for pass, c := range []*kafkatest.Cluster{a, b, a} {
			kafkatest.Scan(t, c.Seeds(), s.topic, kgo.ReadCommitted(), func(r *kgo.Record) {
				origin := originOf(r)
				sf := flowOf[origin]
				if sf == nil {
					t.Errorf("%s[%d] on %s: record at %d is of no load: %.40q", s.topic, r.Partition, c.Name, r.Offset, r.Value)
					return
				}
				p, seq := r.Partition, seqOf(r)
				if pass < 2 {
					placedOn[c][p] = append(placedOn[c][p], placed{offset: r.Offset, origin: origin, seq: seq})
				}
				switch {
				case origin == c.Name && pass < 2:
					checker(sf, p).Source(r)
					if local[sf][p] == nil {
						local[sf][p] = map[int64]int{}
					}
					local[sf][p][seq]++
				case origin != c.Name && pass > 0:
					checker(sf, p).Target(r)
					reps[sf][p] = append(reps[sf][p], copied{offset: r.Offset, seq: seq, w: writer{pid: r.ProducerID}})
				}
			}, nil)
		}
		for _, sf := range s.flows {
			s.checkOrigin(t, sf, checkers[sf], local[sf])
		}
	})
	s.check("writers", func(t *testing.T) {
		for _, sf := range s.flows {
			what := fmt.Sprintf("%s on %s (%s's records)", s.topic, sf.f.dst.Name, sf.f.src.Name)
			checkNoInterleave(t, what, reps[sf])
			t.Logf("%s: writers per partition: %s", what, writers(reps[sf]))
			noteOverlaps(t, ownershipOf(t, s.ns.all, sf.f.name()))
		}
	})
	s.check("translation", func(t *testing.T) {
		for _, sf := range s.flows {
			s.checkSkipsNothing(t, sf, cps[sf], placedOn[sf.f.src], placedOn[sf.f.dst])
		}
	})
}

// checkOrigin reports the sequence checker's outcome for the records of one origin
// (sf's source) on the other cluster, with the duplicates bounded by sf's windows, and
// checks that each of them is once on its origin: a record copied back to where it was
// written would be there twice.
func (s *soak) checkOrigin(t *testing.T, sf *soakFlow, checkers map[int32]*verify.Checker, local map[int32]map[int64]int) {
	t.Helper()
	bounds, desc := sf.w.bounds()
	what := fmt.Sprintf("%s's records of %s on %s", sf.f.src.Name, s.topic, sf.f.dst.Name)
	t.Logf("%s: %s", what, desc)
	var records, dups int
	var bound int64
	written := sf.l.seqs()
	for p := range int32(soakPartitions) {
		ch := checkers[p]
		if ch == nil {
			ch = verify.NewChecker(p)
		}
		r := ch.Report()
		records += r.Source
		dups += r.Duplicates
		bound += bounds[p]
		if !r.OK() {
			t.Errorf("%s: %v", what, r)
		}
		if int64(r.Duplicates) > bounds[p] {
			t.Errorf("%s[%d]: %d duplicates (%d replays), beyond the %d records copied but not committed when the faults hit", what, p, r.Duplicates, r.Replays, bounds[p])
		}
		// Every record the load wrote, once, on its origin.
		n := written[p]
		var twice, missing []string
		for seq := range n {
			switch c := local[p][seq]; {
			case c == 0:
				missing = append(missing, strconv.FormatInt(seq, 10))
			case c > 1:
				twice = append(twice, fmt.Sprintf("%d (%d times)", seq, c))
			}
		}
		if len(twice) > 0 {
			t.Errorf("%s[%d] on %s: %d of its own records are there more than once, copies that came back (a loop): %s",
				s.topic, p, sf.f.src.Name, len(twice), strings.Join(twice[:min(5, len(twice))], ", "))
		}
		if len(missing) > 0 || int64(len(local[p])) != n {
			t.Errorf("%s[%d] on %s: of the %d records its load wrote there, %d are missing (%s), and %d others are there",
				s.topic, p, sf.f.src.Name, n, len(missing), strings.Join(missing[:min(5, len(missing))], ", "), int64(len(local[p]))-(n-int64(len(missing))))
		}
	}
	t.Logf("%s: %d records, %d duplicates (the uncommitted windows at the faults held %d)", what, records, dups, bound)
}

// checkSkipsNothing checks every group committed on sf's source X, checkpointed on its
// target Y: a consumer failing over to Y at the checkpoint's downstream offset reads
// every record the group had not read on X, whichever cluster wrote it. A record
// counts as read when any copy of it on X is before the committed offset: a record
// copied to X twice (at least once) was read at its first copy. It logs how many records
// such a consumer reads again.
func (s *soak) checkSkipsNothing(t *testing.T, sf *soakFlow, cps map[string]wire.Checkpoint, onX, onY map[int32][]placed) {
	type id struct {
		origin string
		seq    int64
	}
	firstOnX := map[int32]map[id]int64{}
	lastOnY := map[int32]map[id]int64{}
	for p := range int32(soakPartitions) {
		firstOnX[p], lastOnY[p] = map[id]int64{}, map[id]int64{}
		for _, r := range onX[p] {
			if _, ok := firstOnX[p][id{r.origin, r.seq}]; !ok {
				firstOnX[p][id{r.origin, r.seq}] = r.offset
			}
		}
		for _, r := range onY[p] {
			lastOnY[p][id{r.origin, r.seq}] = r.offset
		}
	}
	checked, reread := 0, 0
	for _, g := range s.commits.done {
		if g.sf != sf {
			continue
		}
		for _, p := range slices.Sorted(maps.Keys(g.at)) {
			u := g.at[p]
			d := cps[checkpointKey(g.group, sf.f.remote(s.topic), p)].DownstreamOffset
			var missing []string
			unread := 0
			for _, r := range onX[p] {
				k := id{r.origin, r.seq}
				if r.offset < u || firstOnX[p][k] < u {
					continue
				}
				unread++
				switch last, ok := lastOnY[p][k]; {
				case !ok:
					missing = append(missing, fmt.Sprintf("%s/%d (offset %d on %s, no copy on %s)", k.origin, k.seq, r.offset, sf.f.src.Name, sf.f.dst.Name))
				case last < d:
					missing = append(missing, fmt.Sprintf("%s/%d (offset %d on %s, last copy on %s at %d)", k.origin, k.seq, r.offset, sf.f.src.Name, sf.f.dst.Name, last))
				}
			}
			for _, r := range onY[p] {
				if at, ok := firstOnX[p][id{r.origin, r.seq}]; r.offset >= d && ok && at < u {
					reread++
				}
			}
			checked++
			if len(missing) > 0 {
				t.Errorf("group %s: committed at %d of %s[%d] on %s, checkpointed at %d on %s: a consumer failing over never reads %d of the %d records it had not read, e.g. %s",
					g.group, u, s.topic, p, sf.f.src.Name, d, sf.f.dst.Name, len(missing), unread, strings.Join(missing[:min(3, len(missing))], "; "))
			}
		}
	}
	t.Logf("%s: %d checkpoints checked, none skips a record; consumers failing over at them read %d records again", sf.f.name(), checked, reread)
}
