//go:build faults

package faults

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/coord"
	"strait/internal/kafkatest"
)

// The group of the nodes that share a flow: a short session keeps takeovers quick.
const (
	sessionTimeout   = 6 * time.Second
	rebalanceTimeout = 20 * time.Second
	// shareTimeout bounds the wait for a stable share after a node joined or left
	// cleanly: a cooperative move takes two rebalances, each well under a session.
	shareTimeout = 30 * time.Second
)

// clusterProps are the worker group's timeouts of the flows several nodes share, MM2's
// keys: every strait run with the file shares each flow, with no Strait key.
func clusterProps() []string { return clusterPropsOf("B") }

// clusterPropsOf is clusterProps for the flows into the cluster of alias target.
func clusterPropsOf(target string) []string {
	return []string{
		fmt.Sprintf("%s.session.timeout.ms = %d", target, sessionTimeout.Milliseconds()),
		fmt.Sprintf("%s.heartbeat.interval.ms = 1000", target),
		fmt.Sprintf("%s.rebalance.timeout.ms = %d", target, rebalanceTimeout.Milliseconds()),
	}
}

// txnTimeout is the transaction timeout of a shared exactly-once flow. A node killed or
// stopped leaves its transaction open, which holds its partitions' last stable offset,
// and with it read_committed readers and the nodes that take the partitions over, until
// the coordinator aborts it, txnTimeout later (the test bed's brokers look every second,
// see envOptions): about the session timeout, not Strait's default of 15 s.
const txnTimeout = 6 * time.Second

// sharedProps are the lines of a flow shared by every strait run with the file:
// clusterProps, and in exactly-once mode a short transaction timeout (txnTimeout) and
// the default commit interval, 1 s, written out.
func (f flow) sharedProps() []string {
	props := clusterProps()
	if f.exactlyOnce {
		props = append(props, "B.offset.flush.interval.ms = 1000",
			fmt.Sprintf("B.producer.transaction.timeout.ms = %d", txnTimeout.Milliseconds()))
	}
	return props
}

// modes are the delivery modes the tests of shared flows run in, one subtest each: at
// least once, where they count the duplicates a fault may cause, and exactly once, where
// there must be none.
var modes = []struct {
	name        string
	exactlyOnce bool
}{
	{name: "at-least-once"},
	{name: "exactly-once", exactlyOnce: true},
}

// node is one strait run process of a shared flow. A node started again is a new
// node of the same name, with a run number ("n2#2").
type node struct {
	name string
	s    *strait
	// halted is when the test killed the process (SIGKILL) or stopped it (SIGSTOP):
	// it writes nothing from then on (a stopped one finds its lease gone when it
	// resumes), so what it owned ends then.
	halted time.Time
	how    string // "SIGKILL" or "SIGSTOP"
	// resumed is when a stopped node was continued (SIGCONT).
	resumed time.Time
	// halts are every kill and stop, in order: a node stopped more than once (the soak)
	// holds nothing from each of them on.
	halts []halt
}

// halt is a kill (SIGKILL) or stop (SIGSTOP) of a node.
type halt struct {
	at  time.Time
	how string
}

// haltIn returns the node's first kill or stop strictly between from and to.
func (n *node) haltIn(from, to time.Time) (halt, bool) {
	for _, h := range n.halts {
		if from.Before(h.at) && to.After(h.at) {
			return h, true
		}
	}
	return halt{}, false
}

// nodes runs the nodes of one shared flow and keeps every one it started, for the
// ownership record.
type nodes struct {
	t    *testing.T
	cfg  string
	all  []*node
	runs map[string]int
	// peak is the highest rate of a partition a member reported so far (B/s): every
	// partition of a test's load copies at about that rate.
	peak float64
}

// newNodes runs nodes with the config file cfg.
func newNodes(t *testing.T, cfg string) *nodes {
	return &nodes{t: t, cfg: cfg, runs: map[string]int{}}
}

// start runs a node called name.
func (ns *nodes) start(name string) *node {
	ns.t.Helper()
	ns.runs[name]++
	n := &node{name: name}
	if r := ns.runs[name]; r > 1 {
		n.name = fmt.Sprintf("%s#%d", name, r)
	}
	// One file for all the nodes: each binds an API port of its own.
	n.s = startStrait(ns.t, "run", ns.cfg, "--shutdown-timeout", "10s", "--api-listen", "127.0.0.1:0")
	ns.all = append(ns.all, n)
	return n
}

// base is the node's name without its run number.
func (n *node) base() string { b, _, _ := strings.Cut(n.name, "#"); return b }

// kill ends the node with SIGKILL and waits for the exit.
func (ns *nodes) kill(n *node) {
	ns.t.Helper()
	n.halted, n.how = time.Now(), "SIGKILL"
	n.halts = append(n.halts, halt{n.halted, n.how})
	n.s.stop(ns.t, syscall.SIGKILL, 30*time.Second)
}

// freeze stops the node's process with SIGSTOP; thaw continues it.
func (ns *nodes) freeze(n *node) {
	ns.t.Helper()
	if err := n.s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		ns.t.Fatalf("stopping %s: %v", n.name, err)
	}
	n.halted, n.how = time.Now(), "SIGSTOP"
	n.halts = append(n.halts, halt{n.halted, n.how})
}

func (ns *nodes) thaw(n *node) {
	ns.t.Helper()
	if err := n.s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		ns.t.Fatalf("continuing %s: %v", n.name, err)
	}
	n.resumed = time.Now()
}

// share reads the node's membership of flow f from its API (/api/v1/flows).
func (n *node) share(ctx context.Context, f flow) (*coord.Status, error) {
	v, err := n.s.flowView(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.name, err)
	}
	if v.Share == nil {
		return nil, fmt.Errorf("%s shows no share of flow %s", n.name, f.name())
	}
	return v.Share, nil
}

// owning returns the units of the node's last "owning partitions" line of flow f, "" for
// none.
func (n *node) owning(f flow) string {
	units := ""
	for _, l := range n.s.logs() {
		if l.attrs["msg"] == "owning partitions" && l.attrs["component"] == "share" && l.attrs["flow"] == f.name() {
			units, _ = l.attrs["units"].(string)
		}
	}
	return units
}

// unitsOf lists topic's partitions as the ownership record names them, sorted.
func unitsOf(topic string, partitions int32) []string {
	out := make([]string, 0, partitions)
	for p := range partitions {
		out = append(out, coord.Unit{Topic: topic, Partition: p}.String())
	}
	slices.Sort(out)
	return out
}

// shareView is a stable share of a flow: who owns what, and who holds the control duty.
type shareView struct {
	generation int32
	owns       map[*node][]string
	control    *node
}

// count is the number of the test's partitions n owns: the source's heartbeats topic,
// which every flow replicates too (MM2's default filter), is left out.
func (v shareView) count(n *node) int {
	c := 0
	for _, u := range v.owns[n] {
		if !strings.HasPrefix(u, "heartbeats/") {
			c++
		}
	}
	return c
}

// String gives the test's partitions per node, with the holder of the heartbeats
// partition and the control duty: "n1=4 n2=4 n3=4+hb (control n2, generation 7)".
func (v shareView) String() string {
	var parts []string
	for n, us := range v.owns {
		hb := ""
		if len(us) > v.count(n) {
			hb = "+hb"
		}
		parts = append(parts, fmt.Sprintf("%s=%d%s", n.name, v.count(n), hb))
	}
	slices.Sort(parts)
	ctl := "none"
	if v.control != nil {
		ctl = v.control.name
	}
	return fmt.Sprintf("%s (control %s, generation %d)", strings.Join(parts, " "), ctl, v.generation)
}

// waitShared waits until the live nodes share units stably: every one is a stable member
// of one generation with its lease, its API and its last "owning partitions" line agree,
// every unit (and the source's heartbeats partition, if any) has exactly one owner among
// them, and exactly one holds the control duty (checkBalanced checks the counts). It
// returns the share and how long the wait took.
func waitShared(t *testing.T, f flow, live []*node, units []string, timeout time.Duration) (shareView, time.Duration) {
	t.Helper()
	began := time.Now()
	var view shareView
	kafkatest.Eventually(t, timeout, func() error {
		v := shareView{generation: -1, owns: map[*node][]string{}}
		owner := map[string]*node{}
		controls := 0
		for _, n := range live {
			st, err := n.share(t.Context(), f)
			if err != nil {
				return err
			}
			if st.State != coord.StateStable || !st.Lease {
				return fmt.Errorf("%s is %s (lease %v) in generation %d: %s", n.name, st.State, st.Lease, st.Generation, st.Error)
			}
			if v.generation == -1 {
				v.generation = st.Generation
			} else if st.Generation != v.generation {
				return fmt.Errorf("%s is in generation %d, another node in %d", n.name, st.Generation, v.generation)
			}
			var got []string
			for _, u := range st.Units {
				got = append(got, u.String())
			}
			slices.Sort(got)
			if logged := n.owning(f); logged != strings.Join(got, ",") {
				return fmt.Errorf("%s owns %v in generation %d, but its last owning line says %q", n.name, got, st.Generation, logged)
			}
			for _, u := range got {
				if other := owner[u]; other != nil {
					return fmt.Errorf("%s is owned by %s and %s in generation %d", u, other.name, n.name, st.Generation)
				}
				owner[u] = n
			}
			v.owns[n] = got
			if st.Control {
				controls++
				v.control = n
			}
		}
		var missing []string
		for _, u := range units {
			if owner[u] == nil {
				missing = append(missing, u)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("in generation %d %d of the %d partitions are not owned: %v", v.generation, len(missing), len(units), missing)
		}
		for u, n := range owner {
			if !slices.Contains(units, u) && !strings.HasPrefix(u, "heartbeats/") {
				return fmt.Errorf("%s owns %s, which is not in the flow", n.name, u)
			}
		}
		if controls != 1 {
			return fmt.Errorf("%d nodes hold the control duty in generation %d", controls, v.generation)
		}
		view = v
		return nil
	})
	return view, time.Since(began)
}

// checkBalanced fails the test unless the counts of units per node differ by at most
// one, which the assignor promises for units of equal weight: the test's partitions copy
// at equal rates, and a unit of unknown rate weighs the median. The source's heartbeats
// partition counts as a unit: while its rate is unknown (after it moved) it weighs as
// much as the others. It logs the rates the members reported in their last JoinGroup,
// by which the leader weighed them, with a note for those below half the highest seen
// in the test: a wrong weight, as every partition copies at the same rate. The rates
// are how fast each source partition grows (daemon's rateMeter): when they were the
// copy's own rate, a partition catching up after a takeover weighed up to 7 times the
// others, and exactly-once runs ended 1/6/5 or 3/4/5 in half of 8 runs.
func checkBalanced(t *testing.T, f flow, v shareView, ns *nodes, what string) {
	t.Helper()
	lo, hi := -1, 0
	for _, us := range v.owns {
		if lo < 0 || len(us) < lo {
			lo = len(us)
		}
		hi = max(hi, len(us))
	}
	rates, known := reportedRates(t, f, ns.all)
	for _, k := range known {
		ns.peak = max(ns.peak, k.rate)
	}
	var odd []string
	for _, k := range known {
		if 2*k.rate < ns.peak {
			odd = append(odd, fmt.Sprintf("%s=%.0f", k.who, k.rate))
		}
	}
	if hi-lo > 1 {
		t.Errorf("%s: unbalanced share %v; the rates (B/s) the members reported: %s", what, v, rates)
		return
	}
	t.Logf("%s: rates (B/s) in the members' last JoinGroup: %s", what, rates)
	if len(odd) > 0 {
		// Not a failure: the share is balanced. But every partition of the test's
		// load grows at the same rate, so a rate far below the others is a wrong weight.
		t.Logf("%s: NOTE rates below half the highest one seen (%.0f B/s), though every partition copies at the same rate: %s", what, ns.peak, strings.Join(odd, " "))
	}
}

// knownRate is a rate a member reported for a partition.
type knownRate struct {
	who  string // "n2 p3"
	rate float64
}

// reportedRates describes the flow's group and gives, per member, the rate it reported
// for each unit in its JoinGroup metadata (-1 unknown): "n2: p0=16900 p3=0; n3: ...",
// and the known rates of the partitions (the heartbeats left out).
func reportedRates(t *testing.T, f flow, all []*node) (string, []knownRate) {
	t.Helper()
	groups, err := f.dst.Admin(t).DescribeGroups(t.Context(), f.group())
	if err != nil {
		return fmt.Sprintf("(describing group %s: %v)", f.group(), err), nil
	}
	var ks []knownRate
	var out []string
	for _, g := range groups {
		for _, m := range g.Members {
			raw, ok := m.Join.Raw()
			if !ok {
				continue
			}
			var md struct {
				Node   string `json:"node"`
				Topics []struct {
					Topic      string    `json:"topic"`
					Partitions []int32   `json:"partitions"`
					Rates      []float64 `json:"rates"`
				} `json:"topics"`
			}
			if err := json.Unmarshal(raw, &md); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", m.MemberID, err))
				continue
			}
			name := md.Node
			for _, n := range all {
				if strings.HasSuffix(md.Node, fmt.Sprintf("-%d", n.s.cmd.Process.Pid)) {
					name = n.name
				}
			}
			var parts []string
			for _, tu := range md.Topics {
				for i, p := range tu.Partitions {
					r := "-1"
					u := shortUnit(coord.Unit{Topic: tu.Topic, Partition: p}.String())
					if i < len(tu.Rates) {
						r = strconv.FormatFloat(tu.Rates[i], 'f', 0, 64)
						if tu.Rates[i] >= 0 && tu.Topic != "heartbeats" {
							ks = append(ks, knownRate{who: name + " " + u, rate: tu.Rates[i]})
						}
					}
					parts = append(parts, fmt.Sprintf("%s=%s", u, r))
				}
			}
			out = append(out, name+": "+strings.Join(parts, " "))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; "), ks
}

// interval is one node's ownership of one unit, from its "owning partitions" line to its
// "released partitions" line (or the node's kill or stop).
type interval struct {
	n        *node
	from, to time.Time
	fromGen  int
	end      string
	// asked is when the node was told to give the unit up (its assignment revoked
	// something), zero for a release at shutdown or none.
	asked time.Time
}

// ownership builds every node's ownership intervals from the ownership record, by unit,
// sorted by start. A node that was killed or stopped holds nothing from then on; a node
// that exited on its own must have released everything.
func ownership(t *testing.T, all []*node) map[string][]interval {
	t.Helper()
	return ownershipOf(t, all, "")
}

// ownershipOf is ownership of the flow named flowName alone (every flow when ""), for
// nodes that run several.
func ownershipOf(t *testing.T, all []*node, flowName string) map[string][]interval {
	t.Helper()
	out := map[string][]interval{}
	for _, n := range all {
		open := map[string]*interval{}
		var last, revoked time.Time
		closeAt := func(u string, at time.Time, end string) {
			iv := open[u]
			delete(open, u)
			iv.to, iv.end = at, end
			if h, ok := n.haltIn(iv.from, iv.to); ok {
				iv.to, iv.end = h.at, h.how+" ("+end+" after it resumed)"
			}
			out[u] = append(out[u], *iv)
		}
		for _, l := range n.s.logs() {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(l.attrs["time"]))
			if err != nil {
				continue
			}
			last = at
			if l.attrs["component"] != "share" || (flowName != "" && l.attrs["flow"] != flowName) {
				continue
			}
			units := splitUnits(l.attrs["units"])
			gen, _ := l.attrs["generation"].(float64)
			switch l.attrs["msg"] {
			case "assignment":
				if r, _ := l.attrs["revoked"].(float64); r > 0 || l.attrs["revoked_control"] == true {
					revoked = at
				}
			case "owning partitions":
				set := map[string]bool{}
				for _, u := range units {
					set[u] = true
					if open[u] == nil {
						open[u] = &interval{n: n, from: at, fromGen: int(gen)}
					}
				}
				for _, u := range slices.Sorted(maps.Keys(open)) {
					if !set[u] {
						t.Errorf("%s: its owning line at %s (generation %d) drops %s without a release line", n.name, at.Format(time.TimeOnly), int(gen), u)
						closeAt(u, at, "dropped")
					}
				}
			case "released partitions":
				committed, _ := l.attrs["committed"].(bool)
				for _, u := range units {
					if open[u] != nil {
						if revoked.After(open[u].from) {
							open[u].asked = revoked
						}
						closeAt(u, at, fmt.Sprintf("released in generation %d, committed %v", int(gen), committed))
					}
				}
			}
		}
		for _, u := range slices.Sorted(maps.Keys(open)) {
			switch {
			case !n.halted.IsZero() && open[u].from.Before(n.halted):
				closeAt(u, n.halted, n.how)
			case n.s.exited():
				t.Errorf("%s exited still owning %s (since %s) without a release line", n.name, u, open[u].from.Format(time.TimeOnly))
				closeAt(u, last, "exited without a release line")
			default:
				closeAt(u, time.Now(), "still running")
			}
		}
	}
	for _, ivs := range out {
		slices.SortFunc(ivs, func(a, b interval) int { return a.from.Compare(b.from) })
	}
	return out
}

// splitUnits splits an ownership line's units attribute.
func splitUnits(v any) []string {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// checkOneOwner fails the test for every unit two nodes owned at once.
func checkOneOwner(t *testing.T, rec map[string][]interval) {
	t.Helper()
	for _, o := range overlaps(rec) {
		t.Error(o)
	}
}

// overlaps describes every time two nodes owned a unit at once, by the ownership record.
func overlaps(rec map[string][]interval) []string {
	var out []string
	for _, u := range slices.Sorted(maps.Keys(rec)) {
		ivs := rec[u]
		for i := range ivs {
			for j := i + 1; j < len(ivs); j++ {
				a, b := ivs[i], ivs[j]
				if a.n != b.n && b.from.Before(a.to) && a.from.Before(b.to) {
					out = append(out, fmt.Sprintf("%s had two owners for %v: %s from %s (generation %d) to %s (%s), and %s from %s (generation %d) to %s (%s)",
						u, minTime(a.to, b.to).Sub(b.from).Round(time.Millisecond),
						a.n.name, clock(a.from), a.fromGen, clock(a.to), a.end,
						b.n.name, clock(b.from), b.fromGen, clock(b.to), b.end))
				}
			}
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func clock(at time.Time) string { return at.Format("15:04:05.000") }

// step is a phase of a test, from the action that starts it.
type step struct {
	name  string
	began time.Time
	seq   []int64 // the load's next sequence number per partition when it began
}

// move is a unit passed from one node to another, or stopped and started again by the
// same node (a mirror restarted for the units it keeps).
type move struct {
	unit     string
	from, to *node
	stopped  time.Duration // between the end on the old owner and the start on the new
	at       time.Time     // the end on the old owner
	// paused is from the revoke that asked the old owner to stop (else its end) to
	// the start on the new owner.
	paused time.Duration
}

// moves lists every hand-over in the ownership record, in time order.
func moves(rec map[string][]interval) []move {
	var out []move
	for u, ivs := range rec {
		for i := 1; i < len(ivs); i++ {
			prev, next := ivs[i-1], ivs[i]
			m := move{unit: u, from: prev.n, to: next.n, stopped: next.from.Sub(prev.to), at: prev.to}
			m.paused = m.stopped
			if !prev.asked.IsZero() {
				m.paused = next.from.Sub(prev.asked)
			}
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b move) int { return a.at.Compare(b.at) })
	return out
}

// logMoves reports, per step, how long each moved partition was stopped (from the release
// on its old owner to the owning line of the new one), and the longest pause of the
// partitions a node kept through a rebalance (from the revoke that restarted its mirror).
func logMoves(t *testing.T, rec map[string][]interval, steps []step) {
	t.Helper()
	ms := moves(rec)
	for i, s := range steps {
		end := time.Now().Add(time.Hour)
		if i+1 < len(steps) {
			end = steps[i+1].began
		}
		var moved []string
		var longest, kept time.Duration
		var keptN int
		for _, m := range ms {
			if m.at.Before(s.began) || !m.at.Before(end) {
				continue
			}
			if m.from == m.to {
				keptN++
				kept = max(kept, m.paused)
				continue
			}
			moved = append(moved, fmt.Sprintf("%s %s->%s %v", shortUnit(m.unit), m.from.name, m.to.name, m.stopped.Round(time.Millisecond)))
			longest = max(longest, m.stopped)
		}
		if len(moved) == 0 && keptN == 0 {
			continue
		}
		t.Logf("step %q: %d partitions moved, stopped (release to owning) at most %v: %s; %d pauses of kept partitions (mirror restarts, revoke to owning), at most %v",
			s.name, len(moved), longest.Round(time.Millisecond), strings.Join(moved, ", "), keptN, kept.Round(time.Millisecond))
	}
}

// shortUnit is a unit without its topic's test name: "p3", or "hb0" for the heartbeats.
func shortUnit(u string) string {
	if rest, ok := strings.CutPrefix(u, "heartbeats/"); ok {
		return "hb" + rest
	}
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		return "p" + u[i+1:]
	}
	return u
}

// seqs is the load's next sequence number per partition.
func (l *load) seqs() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seq)
}

// copied is one record of a replica: where it is, which record of the load it is, and
// the mirror that wrote it.
type copied struct {
	offset int64
	seq    int64
	w      writer
}

// writer is the producer of a copy, as far as it tells Strait's mirrors apart. At least
// once, every mirror has a producer id of its own. In exactly-once mode the mirrors of
// a node (one per share it owns, and one per attempt after an abort) share its
// transactional id and with it a producer id; each gets an epoch of its own from
// InitProducerID, which fences the ones before. The epoch is left 0 at least once.
type writer struct {
	pid   int64
	epoch int16
}

func (w writer) String() string {
	if w.epoch == 0 {
		return strconv.FormatInt(w.pid, 10)
	}
	return fmt.Sprintf("%d/e%d", w.pid, w.epoch)
}

// replica reads the replica of topic read_committed, by partition in offset order.
func replica(t *testing.T, f flow, topic string) map[int32][]copied {
	t.Helper()
	out := map[int32][]copied{}
	kafkatest.Scan(t, f.dst.Seeds(), f.remote(topic), kgo.ReadCommitted(), func(r *kgo.Record) {
		c := copied{offset: r.Offset, seq: seqOf(r), w: writer{pid: r.ProducerID}}
		if f.exactlyOnce {
			c.w.epoch = r.ProducerEpoch
		}
		out[r.Partition] = append(out[r.Partition], c)
	}, nil)
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b copied) int { return int(a.offset - b.offset) })
	}
	return out
}

// dupRun is a run of copies of records the replica already held: a re-send.
type dupRun struct {
	partition      int32
	fromOff, toOff int64 // target offsets of the run
	fromSeq, toSeq int64
	w, firstW      writer // the run's writer, and the one of the first copy of fromSeq
	firstOff       int64  // target offset of the first copy of fromSeq
	records        int
}

func (d dupRun) String() string {
	return fmt.Sprintf("[%d] records %d..%d copied again at offsets %d..%d by producer %v (first copies from offset %d by producer %v)",
		d.partition, d.fromSeq, d.toSeq, d.fromOff, d.toOff, d.w, d.firstOff, d.firstW)
}

// duplicates finds the runs of re-sent records in a replica.
func duplicates(rep map[int32][]copied) []dupRun {
	var out []dupRun
	for _, p := range slices.Sorted(maps.Keys(rep)) {
		first := map[int64]copied{}
		highest := int64(-1)
		var cur *dupRun
		for _, c := range rep[p] {
			if c.seq < 0 {
				continue
			}
			if c.seq > highest {
				highest = c.seq
				first[c.seq] = c
				if cur != nil {
					out = append(out, *cur)
					cur = nil
				}
				continue
			}
			if _, ok := first[c.seq]; !ok {
				first[c.seq] = c // out of order: the sequence checker reports it
			}
			if cur != nil && c.seq == cur.toSeq+1 && c.w == cur.w {
				cur.toSeq, cur.toOff = c.seq, c.offset
				cur.records++
				continue
			}
			if cur != nil {
				out = append(out, *cur)
			}
			f := first[c.seq]
			cur = &dupRun{partition: p, fromOff: c.offset, toOff: c.offset, fromSeq: c.seq, toSeq: c.seq, w: c.w, firstW: f.w, firstOff: f.offset, records: 1}
		}
		if cur != nil {
			out = append(out, *cur)
		}
	}
	return out
}

// stepOf is the first step that began after record seq of partition p was written: the
// one whose fault may have copied it again.
func stepOf(steps []step, p int32, seq int64) string {
	for _, s := range steps {
		if int(p) < len(s.seq) && s.seq[p] > seq {
			return s.name
		}
	}
	return "after the last step"
}

// unitsOwnedAt lists the partitions of topic that n owned at the instant at.
func unitsOwnedAt(rec map[string][]interval, topic string, n *node, at time.Time) map[int32]bool {
	out := map[int32]bool{}
	for u, ivs := range rec {
		rest, ok := strings.CutPrefix(u, topic+"/")
		if !ok {
			continue
		}
		p, _ := strconv.Atoi(rest)
		for _, iv := range ivs {
			if iv.n == n && !at.Before(iv.from) && !at.After(iv.to) {
				out[int32(p)] = true
			}
		}
	}
	return out
}

// TestThreeNodesShareAFlow runs one flow of 12 partitions on three nodes under a steady
// load, and in turn kills one (SIGKILL) in mid-copy and starts it again, restarts each of
// the three cleanly, and adds a fourth node and stops it. After each step the live nodes
// share the partitions evenly (in exactly-once mode an uneven share is only logged, see
// checkBalanced) with one control duty. At the end nothing is lost or
// reordered, and the ownership record shows no partition with two owners at once. At
// least once, duplicates come only from the kill and only in the killed node's
// partitions; in exactly-once mode a read_committed reader finds none.
func TestThreeNodesShareAFlow(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			alias := "N"
			if m.exactlyOnce {
				alias = "M"
			}
			threeNodes(t, flow{alias: alias, src: source(), dst: target(), exactlyOnce: m.exactlyOnce})
		})
	}
}

func threeNodes(t *testing.T, f flow) {
	began := time.Now()
	topic := kafkatest.Name(t, "shared")
	const partitions = 12
	f.src.CreateTopic(t, topic, partitions, nil)
	units := unitsOf(topic, partitions)
	l := newLoad(t, f.src, topic, partitions, 100)
	// 1,200 records a second, 100 per partition; it ends by itself after 3 minutes.
	l.start(t, 1200, 1200*180)
	ns := newNodes(t, f.config(t, topic, f.sharedProps()...))
	var steps []step
	mark := func(name string) { steps = append(steps, step{name: name, began: time.Now(), seq: l.seqs()}) }

	// shared waits for a stable share of the live nodes after a step, reports it and
	// checks its balance.
	shared := func(what string, live []*node, timeout time.Duration) shareView {
		t.Helper()
		v, took := waitShared(t, f, live, units, timeout)
		t.Logf("%s: stable %v after the step began: %v", what, took.Round(100*time.Millisecond), v)
		checkBalanced(t, f, v, ns, what)
		return v
	}

	mark("start three nodes")
	live := []*node{ns.start("n1"), ns.start("n2"), ns.start("n3")}
	v := shared("three nodes started", live, time.Minute)
	progress := waitMoreProgress(t, f, topic, 0, time.Minute)

	// (a) The control holder is killed in mid-copy; the others take its partitions once
	// its session expires.
	victim := v.control
	victimUnits := v.owns[victim]
	waitMoreProgress(t, f, topic, progress, reconnectTimeout)
	mark("kill -9 " + victim.name)
	ns.kill(victim)
	survivors := slices.DeleteFunc(slices.Clone(live), func(n *node) bool { return n == victim })
	shared(fmt.Sprintf("%s killed (it owned %d units and the control duty; session %v)", victim.name, len(victimUnits), sessionTimeout),
		survivors, sessionTimeout+rebalanceTimeout)
	mark("start " + victim.base() + " again")
	live = append(survivors, ns.start(victim.base()))
	shared(victim.base()+" started again", live, shareTimeout)

	// (b) Each node in turn stops cleanly and starts again.
	for i := range live {
		n := live[i]
		mark("restart " + n.base())
		stopCleanly(t, n.s)
		live[i] = ns.start(n.base())
		shared(n.base()+" restarted (SIGTERM, exit, start)", live, shareTimeout)
	}

	// (c) A fourth node joins, then stops cleanly.
	mark("add n4")
	n4 := ns.start("n4")
	shared("n4 added", append(slices.Clone(live), n4), shareTimeout)
	mark("stop n4")
	stopCleanly(t, n4.s)
	shared("n4 stopped", live, shareTimeout)

	mark("end")
	total := l.stop(t)
	t.Logf("caught up %v after the load stopped (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), total)
	if f.exactlyOnce {
		logTransactions(t, f, live, ns.all)
	}
	for _, n := range live {
		stopCleanly(t, n.s)
	}

	verifyTopic(t, f, topic)
	rec := ownership(t, ns.all)
	checkOneOwner(t, rec)
	logMoves(t, rec, steps)
	killed := unitsOwnedAt(rec, topic, victim, victim.halted)
	rep := replica(t, f, topic)
	checkNoInterleave(t, topic, rep)
	t.Logf("producer ids per partition: %s", writers(rep))
	var fromKill int
	for _, d := range duplicates(rep) {
		at := stepOf(steps, d.partition, d.fromSeq)
		switch {
		case f.exactlyOnce:
			t.Errorf("%d duplicates in exactly-once mode, of records written before step %q: %v", d.records, at, d)
		case strings.HasPrefix(at, "kill -9") && killed[d.partition]:
			fromKill += d.records
			t.Logf("duplicates after the kill: %d, %v", d.records, d)
		default:
			t.Errorf("%d duplicates of records written before step %q (not a partition the killed node owned, or not the kill): %v", d.records, at, d)
		}
	}
	t.Logf("%d duplicates (%s), all after the kill -9 of %s (partitions it owned: %v); %d nodes started in all; the test took %v",
		fromKill, mode(f), victim.name, slices.Sorted(maps.Keys(killed)), len(ns.all), time.Since(began).Round(time.Second))
}

// checkNoInterleave fails the test for every partition of a replica in which a writer
// writes again after another one wrote: two nodes (or a fenced node and its successor)
// writing one partition at once. Each Strait mirror is a writer of its own, so a
// partition that moves is written by one writer after the other, never back.
func checkNoInterleave(t *testing.T, topic string, rep map[int32][]copied) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(rep)) {
		none := writer{pid: -2}
		cur := none
		var curFrom int64
		done := map[writer]bool{} // writers whose run ended
		problems := 0
		for _, c := range rep[p] {
			if c.w == cur {
				continue
			}
			if cur != none {
				done[cur] = true
			}
			if _, ok := done[c.w]; ok {
				if problems++; problems <= 3 {
					t.Errorf("%s[%d]: producer %v writes again at offset %d (record %d) after producer %v wrote offsets %d..%d: two writers interleave",
						topic, p, c.w, c.offset, c.seq, cur, curFrom, c.offset-1)
				}
			}
			cur, curFrom = c.w, c.offset
		}
		if problems > 3 {
			t.Errorf("%s[%d]: %d more interleavings", topic, p, problems-3)
		}
	}
}

// writers gives, per partition, how many writers (producer ids, and in exactly-once
// mode epochs) wrote it: "p0=2 p1=1 ...".
func writers(rep map[int32][]copied) string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(rep)) {
		ids := map[writer]bool{}
		for _, c := range rep[p] {
			ids[c.w] = true
		}
		out = append(out, fmt.Sprintf("p%d=%d", p, len(ids)))
	}
	return strings.Join(out, " ")
}

// checkNoDuplicates fails the test for every run of re-sent records in the replica.
func checkNoDuplicates(t *testing.T, what string, rep map[int32][]copied) {
	t.Helper()
	for _, d := range duplicates(rep) {
		t.Errorf("%s: %d duplicates: %v", what, d.records, d)
	}
}

// TestTopicCreatedWhileThreeNodesRun creates a source topic of 6 partitions while three
// nodes share a flow: the control holder creates its remote topic, every node's
// reconciler hands it over, the leader rebalances, and every record is copied within two
// refresh intervals and a rebalance, the new partitions spread over the three nodes.
func TestTopicCreatedWhileThreeNodesRun(t *testing.T) {
	began := time.Now()
	f := flow{alias: "G", src: source(), dst: target()}
	prefix := kafkatest.Name(t, "grow")
	first, second := prefix+"-first", prefix+"-second"
	const refresh = 2 * time.Second
	f.src.CreateTopic(t, first, 6, nil)
	l1 := newLoad(t, f.src, first, 6, 100)
	l1.produce(t, 600)
	ns := newNodes(t, f.config(t, regexp.QuoteMeta(prefix)+"-.*",
		append(clusterProps(), fmt.Sprintf("refresh.topics.interval.seconds = %d", int(refresh.Seconds())))...))
	live := []*node{ns.start("n1"), ns.start("n2"), ns.start("n3")}
	v, took := waitShared(t, f, live, unitsOf(first, 6), time.Minute)
	t.Logf("three nodes share %s %v after their start: %v", first, took.Round(100*time.Millisecond), v)
	checkBalanced(t, f, v, ns, "before the new topic")
	waitCaughtUp(t, f, first, nil, time.Minute)

	// The new topic, and a load on it from the start: the first records are on the
	// source before its remote topic can be, which is created by the next pass of the
	// control holder's reconciler.
	created := time.Now()
	f.src.CreateTopic(t, second, 6, nil)
	l2 := newLoad(t, f.src, second, 6, 100)
	l2.start(t, 600, 600*60) // ends by itself after a minute
	units := append(unitsOf(first, 6), unitsOf(second, 6)...)
	slices.Sort(units)
	v, _ = waitShared(t, f, live, units, time.Minute)
	assigned := time.Since(created)
	checkBalanced(t, f, v, ns, "with the new topic")
	// When the control holder created the remote topic, by its log (a client's
	// metadata cache would see it up to 5 s late); the nodes assign only partitions
	// whose remote topic exists.
	var onTarget time.Duration
	for _, n := range live {
		for _, l := range n.s.logs() {
			if l.attrs["msg"] == "created remote topic" && l.attrs["topic"] == second {
				at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.attrs["time"]))
				onTarget = at.Sub(created)
				t.Logf("%s (control %v) created %s %v after the source topic", n.name, n == v.control, f.remote(second), onTarget.Round(100*time.Millisecond))
			}
		}
	}
	kafkatest.Eventually(t, 30*time.Second, func() error {
		md, err := f.dst.Admin(t).Metadata(t.Context(), f.remote(second))
		if err != nil {
			return err
		}
		if td, ok := md.Topics[f.remote(second)]; !ok || td.Err != nil || len(td.Partitions) != 6 {
			return fmt.Errorf("%s is not on the target with 6 partitions", f.remote(second))
		}
		return nil
	})
	waitMoreProgress(t, f, second, 0, reconnectTimeout)
	total := l2.stop(t)
	stopped := time.Since(created)
	caughtUp := waitCaughtUp(t, f, second, nil, time.Minute)
	// The holder's reconciler creates the remote topic within a refresh interval, the
	// followers' hand it to their data plane within the next one, and the members hear
	// of the rebalance within a heartbeat, well within a session.
	bound := 2*refresh + sessionTimeout
	t.Logf("%s created on the source: its remote topic created after %v, its partitions assigned after %v (%v); the load (%d records) stopped after %v, and every record was copied %v later",
		second, onTarget.Round(100*time.Millisecond), assigned.Round(100*time.Millisecond), v, total, stopped.Round(100*time.Millisecond), caughtUp.Round(100*time.Millisecond))
	if assigned > bound {
		t.Errorf("the partitions of %s were assigned %v after its creation, beyond two refresh intervals and a rebalance (%v)", second, assigned.Round(100*time.Millisecond), bound)
	}
	if caughtUp > 5*time.Second {
		t.Errorf("the records of %s were copied %v after the load stopped, want within 5 s", second, caughtUp.Round(100*time.Millisecond))
	}
	var spread []string
	for _, n := range live {
		c := 0
		for _, u := range v.owns[n] {
			if strings.HasPrefix(u, second+"/") {
				c++
			}
		}
		spread = append(spread, fmt.Sprintf("%s=%d", n.name, c))
		if c == 0 {
			t.Errorf("%s owns none of the partitions of %s: %v", n.name, second, v)
		}
	}
	t.Logf("partitions of %s per node: %s", second, strings.Join(spread, " "))

	for _, n := range live {
		stopCleanly(t, n.s)
	}
	for _, topic := range []string{first, second} {
		verifyTopic(t, f, topic)
		rep := replica(t, f, topic)
		checkNoDuplicates(t, topic, rep)
		checkNoInterleave(t, topic, rep)
	}
	rec := ownership(t, ns.all)
	checkOneOwner(t, rec)
	logMoves(t, rec, []step{{name: "new topic", began: created}})
	t.Logf("the test took %v", time.Since(began).Round(time.Second))
}

// TestTwoProcessesOnOneConfigDoNotInterleave runs two strait run processes on one config,
// with strait.cluster.enabled, under a steady load: started together, or the second
// while the first copies every partition (half of them then move to it under load). They
// split the partitions, and the replica has every record once, in order, each partition
// written by one node at a time.
func TestTwoProcessesOnOneConfigDoNotInterleave(t *testing.T) {
	for _, tc := range []struct {
		name, alias string
		staggered   bool
	}{
		{name: "started together", alias: "P"},
		{name: "second started while the first copies", alias: "Q", staggered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			f := flow{alias: tc.alias, src: source(), dst: target()}
			topic := kafkatest.Name(t, "two")
			const partitions = 6
			f.src.CreateTopic(t, topic, partitions, nil)
			units := unitsOf(topic, partitions)
			l := newLoad(t, f.src, topic, partitions, 100)
			l.start(t, 600, 600*120) // ends by itself after 2 minutes
			ns := newNodes(t, f.config(t, topic, clusterProps()...))
			live := []*node{ns.start("n1")}
			if tc.staggered {
				v, took := waitShared(t, f, live, units, time.Minute)
				t.Logf("n1 alone %v after its start: %v", took.Round(100*time.Millisecond), v)
				waitMoreProgress(t, f, topic, waitMoreProgress(t, f, topic, 0, time.Minute), reconnectTimeout)
			}
			second := time.Now()
			live = append(live, ns.start("n2"))
			v, took := waitShared(t, f, live, units, time.Minute)
			t.Logf("two processes share the flow %v after the second's start: %v", took.Round(100*time.Millisecond), v)
			checkBalanced(t, f, v, ns, "two processes")
			for _, n := range live {
				if v.count(n) == 0 {
					t.Errorf("%s owns none of the partitions: %v", n.name, v)
				}
			}
			waitMoreProgress(t, f, topic, waitMoreProgress(t, f, topic, 0, time.Minute), reconnectTimeout)
			total := l.stop(t)
			t.Logf("caught up %v after the load stopped (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), total)
			for _, n := range live {
				stopCleanly(t, n.s)
			}
			verifyTopic(t, f, topic)
			rep := replica(t, f, topic)
			checkNoDuplicates(t, topic, rep)
			checkNoInterleave(t, topic, rep)
			t.Logf("producer ids per partition: %s", writers(rep))
			rec := ownership(t, ns.all)
			checkOneOwner(t, rec)
			logMoves(t, rec, []step{{name: "second process", began: second}})
			t.Logf("the test took %v", time.Since(began).Round(time.Second))
		})
	}
}

// TestZombieNodeWritesNothing stops one of three nodes (SIGSTOP) past its session timeout
// while the load goes on, until the others own its partitions, and continues it: its
// lease is gone, so it writes nothing; its next heartbeat fails, it logs the loss of its
// membership, stops its partitions without committing, and rejoins as a new member with
// a share. The replica has every record in order, no record of the zombie's producer
// after the first one of its successor, and duplicates only as the at-least-once window
// allows: none when the zombie had copied and committed everything when it was stopped
// ("idle at the stop"); when it was stopped in mid-copy ("copying at the stop"), only
// copies again, by the new owner, of records the zombie wrote before its stop and had
// not committed, and then its release says committed=false. In exactly-once mode
// (subtests "exactly-once/...") a read_committed reader finds no duplicate at all: the
// zombie's open transaction is aborted (by the coordinator at its timeout, which fences
// its epoch, or by the zombie itself once it resumes), and its late progress commit is
// refused (it knows it is no member, or the broker answers ILLEGAL_GENERATION), so
// nothing it wrote after its stop becomes visible.
func TestZombieNodeWritesNothing(t *testing.T) {
	for _, m := range modes {
		for _, tc := range []struct {
			name  string
			idle  bool
			alias string // of the at-least-once flow, the exactly-once one
		}{
			{name: "idle at the stop", idle: true, alias: "ZX"},
			{name: "copying at the stop", alias: "YW"},
		} {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				alias := tc.alias[:1]
				if m.exactlyOnce {
					alias = tc.alias[1:]
				}
				zombie(t, flow{alias: alias, src: source(), dst: target(), exactlyOnce: m.exactlyOnce}, zombieRun{idle: tc.idle})
			})
		}
	}
}

// TestZombieWithALongTransactionTimeout is the exactly-once zombie with
// transaction.timeout.ms = 60000, frozen for the session timeout plus 5 s: the
// coordinator does not abort the zombie's open transaction before it resumes. Its
// mirror, still stopping when the node rejoined as a new member, saw a valid lease
// again (it read the member's), resent its transaction's batches and committed them
// under the new generation, for partitions another node had copied (the path
// 2). A read_committed reader finds no duplicate, and the zombie's producer wrote no
// offset index record after the takeover.
func TestZombieWithALongTransactionTimeout(t *testing.T) {
	zombie(t, flow{alias: "V", src: source(), dst: target(), exactlyOnce: true},
		zombieRun{txnTimeout: time.Minute, frozen: sessionTimeout + 5*time.Second})
}

// zombieRun is how a zombie test runs: idle at the stop, or copying; the transaction
// timeout in exactly-once mode (txnTimeout when zero); and how long the zombie stays
// stopped (zero: until the others took its partitions over and copied them).
type zombieRun struct {
	idle       bool
	txnTimeout time.Duration
	frozen     time.Duration
}

func zombie(t *testing.T, f flow, run zombieRun) {
	began := time.Now()
	idle := run.idle
	topic := kafkatest.Name(t, "zombie")
	const partitions = 6
	f.src.CreateTopic(t, topic, partitions, nil)
	units := unitsOf(topic, partitions)
	l := newLoad(t, f.src, topic, partitions, 100)
	props := f.sharedProps()
	if run.txnTimeout > 0 {
		props = append(props, fmt.Sprintf("B.producer.transaction.timeout.ms = %d", run.txnTimeout.Milliseconds()))
	}
	ns := newNodes(t, f.config(t, topic, props...))
	live := []*node{ns.start("n1"), ns.start("n2"), ns.start("n3")}
	v, took := waitShared(t, f, live, units, time.Minute)
	t.Logf("three nodes share the flow %v after their start: %v", took.Round(100*time.Millisecond), v)
	checkBalanced(t, f, v, ns, "three nodes")

	if idle {
		// A first part of the load, copied and committed in full before the stop: the
		// zombie then holds nothing copied and not committed, so that a duplicate can
		// only be a write of the zombie after the takeover, not the at-least-once
		// window. The rest starts once it stands still (below).
		l.produce(t, 3000)
		waitCaughtUp(t, f, topic, nil, time.Minute)
	} else {
		l.start(t, 600, 600*120)
		waitMoreProgress(t, f, topic, waitMoreProgress(t, f, topic, 0, time.Minute), reconnectTimeout)
	}
	zombie := v.control
	owned := v.owns[zombie]
	mine := map[int32]bool{}
	for _, u := range owned {
		if rest, ok := strings.CutPrefix(u, topic+"/"); ok {
			p, _ := strconv.Atoi(rest)
			mine[int32(p)] = true
		}
	}
	pids := map[writer]bool{} // the zombie's writers: its partitions were written by it alone
	// Read committed: the markers of the zombie's last transaction may land a moment
	// after its progress commit, which waitCaughtUp saw (the precondition failed so
	// once in make ci).
	kafkatest.Eventually(t, 30*time.Second, func() error {
		for p, rs := range replica(t, f, topic) {
			if mine[p] {
				for _, c := range rs {
					pids[c.w] = true
				}
			}
		}
		if len(pids) == 0 {
			return fmt.Errorf("%s wrote nothing to its partitions %v before the stop", zombie.name, slices.Sorted(maps.Keys(mine)))
		}
		return nil
	})

	ns.freeze(zombie)
	if idle {
		// The rest, while the zombie stands still and after; ends by itself after 2
		// minutes. Started before the stop, the zombie could copy its first records
		// and not commit them yet: duplicates the test would take for its writes
		// after the takeover.
		l.start(t, 600, 600*120)
	}
	survivors := slices.DeleteFunc(slices.Clone(live), func(n *node) bool { return n == zombie })
	v, took = waitShared(t, f, survivors, units, sessionTimeout+rebalanceTimeout)
	takeover := time.Now()
	t.Logf("%s stopped (SIGSTOP) owning %v and the control duty: the others own everything %v later: %v",
		zombie.name, owned, took.Round(100*time.Millisecond), v)
	if took < sessionTimeout-time.Second {
		t.Errorf("the others took the zombie's partitions %v after its stop, before its session (%v) could expire", took, sessionTimeout)
	}
	if run.frozen > 0 {
		// Stopped this long, whatever the others did meanwhile.
		kafkatest.Eventually(t, run.frozen+time.Minute, func() error {
			if left := run.frozen - time.Since(zombie.halted); left > 0 {
				return fmt.Errorf("%s stays stopped %v more", zombie.name, left.Round(time.Second))
			}
			return nil
		})
	} else {
		// The new owners copy each of the zombie's partitions before it resumes.
		progress, err := storedProgress(t, f, topic)
		if err != nil {
			t.Fatal(err)
		}
		kafkatest.Eventually(t, reconnectTimeout, func() error {
			now, err := storedProgress(t, f, topic)
			if err != nil {
				return err
			}
			for p := range mine {
				if now[p] <= progress[p] {
					return fmt.Errorf("%s[%d]: no new progress since the takeover (%d)", f.remote(topic), p, now[p])
				}
			}
			return nil
		})
	}
	ns.thaw(zombie)
	t.Logf("%s continued (SIGCONT) after %v stopped", zombie.name, zombie.resumed.Sub(zombie.halted).Round(100*time.Millisecond))

	// It learns it lost the membership, stops what it owned, and rejoins as a new member.
	var lostAt time.Time
	kafkatest.Eventually(t, 30*time.Second, func() error {
		for _, l := range zombie.s.logs() {
			at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.attrs["time"]))
			if l.attrs["component"] == "share" && strings.HasPrefix(fmt.Sprint(l.attrs["msg"]), "lost the flow's group membership") && at.After(zombie.halted) {
				lostAt = at
				return nil
			}
		}
		return fmt.Errorf("%s has not logged the loss of its membership", zombie.name)
	})
	v, took = waitShared(t, f, live, units, shareTimeout)
	t.Logf("%s logged the loss of its membership %v after SIGCONT; all three share the flow again %v after SIGCONT: %v",
		zombie.name, lostAt.Sub(zombie.resumed).Round(time.Millisecond), took.Round(100*time.Millisecond), v)
	checkBalanced(t, f, v, ns, "the zombie rejoined")
	if len(v.owns[zombie]) == 0 {
		t.Errorf("%s has no share after it rejoined: %v", zombie.name, v)
	}
	for _, l := range zombie.s.logs() {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.attrs["time"]))
		switch {
		case !at.After(zombie.resumed):
		case l.attrs["component"] == "coord" && l.attrs["msg"] == "membership lost; everything owned is given up":
			t.Logf("%s: %v", zombie.name, l.attrs["err"])
		case l.attrs["msg"] == "stopping this node's partitions: their last progress was not committed; their next owner copies them again from the progress committed before":
			t.Logf("%s: %v", zombie.name, l.attrs["err"])
		case l.attrs["msg"] == "exactly-once mode: aborted the transaction; starting again from the last committed one":
			t.Logf("%s: %v", zombie.name, l.attrs["err"])
		case l.attrs["msg"] == "released partitions" && l.attrs["units"] != "" && at.Before(lostAt.Add(time.Second)):
			t.Logf("%s released %v after it resumed, generation %v, committed %v", zombie.name, l.attrs["units"], l.attrs["generation"], l.attrs["committed"])
			// In exactly-once mode the zombie may have been stopped in the middle of a
			// commit, which the coordinator then completed: it holds nothing copied
			// and not committed after it resumes, and says so. The replica is the
			// proof there: no duplicate, and nothing of the zombie's after its
			// successor's first copy.
			if !idle && !f.exactlyOnce && l.attrs["committed"] != false {
				t.Errorf("%s's release after it resumed says committed=%v, want false: it had copies not yet committed and is no member: %s", zombie.name, l.attrs["committed"], l.raw)
			}
		}
	}

	waitMoreProgress(t, f, topic, 0, reconnectTimeout)
	total := l.stop(t)
	t.Logf("caught up %v after the load stopped (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), total)
	if f.exactlyOnce {
		logTransactions(t, f, live, ns.all)
	}
	for _, n := range live {
		stopCleanly(t, n.s)
	}
	verifyTopic(t, f, topic)
	rep := replica(t, f, topic)
	checkNoInterleave(t, topic, rep)
	var dups int
	for _, d := range duplicates(rep) {
		dups += d.records
		switch {
		case f.exactlyOnce:
			t.Errorf("%d duplicates in exactly-once mode: %v", d.records, d)
		case idle:
			t.Errorf("%d duplicates, the zombie idle at its stop: %v", d.records, d)
		case !mine[d.partition] || !pids[d.firstW] || pids[d.w]:
			t.Errorf("%d duplicates that are not the new owner's copies of the zombie's records: %v", d.records, d)
		default:
			t.Logf("%d duplicates: the new owner copied again what the zombie wrote before its stop and had not committed: %v", d.records, d)
		}
	}
	t.Logf("%d duplicates (%s); the zombie's producers %v; writers per partition: %s", dups, mode(f), slices.SortedFunc(maps.Keys(pids), compareWriters), writers(rep))
	if f.exactlyOnce {
		checkNoIndexAfter(t, f, pids, takeover)
	}
	rec := ownership(t, ns.all)
	checkOneOwner(t, rec)
	for _, u := range slices.Sorted(maps.Keys(rec)) {
		for _, iv := range rec[u] {
			if iv.n == zombie && iv.to.Equal(zombie.halted) {
				t.Logf("%s: the zombie's interval from %s ends at its stop %s (%s); the others owned it by %s",
					shortUnit(u), clock(iv.from), clock(iv.to), iv.end, clock(takeover))
			}
		}
	}
	logMoves(t, rec, []step{{name: "zombie stopped", began: zombie.halted}, {name: "zombie continued", began: zombie.resumed}})
	t.Logf("the test took %v", time.Since(began).Round(time.Second))
}

// checkNoIndexAfter fails the test for every offset index record that one of the
// zombie's producers wrote after the others took its partitions over, committed or
// not: in exactly-once mode the index records go in the same transactions as the data,
// by the same producer.
func checkNoIndexAfter(t *testing.T, f flow, zombie map[writer]bool, takeover time.Time) {
	t.Helper()
	late := 0
	kafkatest.Scan(t, f.dst.Seeds(), "strait-index."+f.alias+".internal", kgo.ReadUncommitted(), func(r *kgo.Record) {
		if zombie[writer{pid: r.ProducerID, epoch: r.ProducerEpoch}] && r.Timestamp.After(takeover) {
			if late++; late <= 3 {
				t.Errorf("the zombie's producer %d/e%d wrote an offset index record at offset %d, %v after the takeover", r.ProducerID, r.ProducerEpoch, r.Offset, r.Timestamp.Sub(takeover).Round(time.Millisecond))
			}
		}
	}, nil)
	if late > 3 {
		t.Errorf("%d more offset index records of the zombie after the takeover", late-3)
	}
}

func compareWriters(a, b writer) int {
	return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.epoch, b.epoch))
}

// mode names the flow's delivery mode, for the test's log.
func mode(f flow) string {
	if f.exactlyOnce {
		return "exactly-once mode, read read_committed"
	}
	return "at least once"
}

// logTransactions logs, for each of the live nodes of an exactly-once flow, the
// transactions its API counts: committed, and aborted (an attempt that ended and started
// again from the last committed one, such as the zombie's after it resumed); the counts
// of a node killed or stopped went with it, so it also logs every aborted attempt that
// any node of all logged, with its reason.
func logTransactions(t *testing.T, f flow, live, all []*node) {
	t.Helper()
	var aborts []string
	for _, n := range all {
		for _, l := range n.s.logs() {
			if l.attrs["msg"] == "exactly-once mode: aborted the transaction; starting again from the last committed one" {
				at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.attrs["time"]))
				aborts = append(aborts, fmt.Sprintf("%s at %s: %.200s", n.name, clock(at), fmt.Sprint(l.attrs["err"])))
			}
		}
	}
	t.Logf("%d attempts aborted their transaction, in all the nodes' logs: %s", len(aborts), strings.Join(aborts, "; "))
	var out []string
	for _, n := range live {
		v, err := n.s.flowView(t.Context(), f)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", n.name, err))
		case v.Transactions == nil:
			t.Errorf("%s: the flow's status shows no transactions: is exactly-once mode on?", n.name)
		default:
			out = append(out, fmt.Sprintf("%s: %d committed, %d aborted", n.name, v.Transactions.Committed, v.Transactions.Aborted))
		}
	}
	t.Logf("transactions of the live nodes: %s", strings.Join(out, "; "))
}
