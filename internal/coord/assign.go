package coord

import (
	"cmp"
	"math"
	"slices"
)

// Claim is what one member reports in its JoinGroup metadata, the leader's input to
// Assign: the units and control duty it holds now, and the rates of its units.
type Claim struct {
	MemberID string
	Node     string
	// Settings is the member's Config.Settings.
	Settings string
	Units    []Unit
	Control  bool
	// Leader marks the group's leader, the member computing the
	// assignment; it is not sent in the metadata.
	Leader bool
	// Slot is the slot the member holds (see Plan.Slot); negative for none.
	Slot int
	// Rates holds the throughput of some of Units, in bytes per second; a unit without
	// a rate (or with a negative, infinite or NaN one) has an unknown rate. It may also
	// hold the rates of units the member released since it last joined, which it no
	// longer claims: so a unit's rate follows it to its next owner, and a move does not
	// change the weights the next generation balances.
	Rates map[Unit]float64
}

// Plan is one member's assignment for one generation.
type Plan struct {
	// Units is what the member owns in this generation, sorted: what it claimed and
	// keeps, and what it gains.
	Units []Unit
	// Control says the member holds the control duty.
	Control bool
	// Rejoin asks the member to rejoin once it has released what it claimed and was
	// not given, because another member is to take some of it in the next generation.
	Rejoin bool
	// Rates holds the known rates of Units (nil when none is known), which the member
	// reports as its own until it has measured them.
	Rates map[Unit]float64
	// Slot is a small number no other member of the generation holds: the member's
	// place in the group, which names its transactional producer (a node that takes
	// the slot of one that died fences that node's producer at once, as a restarted
	// single node does). A member keeps its slot while it is a member; a new member
	// takes the lowest free one. Negative when the leader assigned none (an older
	// version's leader).
	Slot int
}

// minWeight is the least a unit weighs, 1 KiB/s: every unit costs its partition's
// fetches and commits whatever its bytes, so idle and slow units spread by count, and a
// trickle such as heartbeats (about 200 B/s) does not outweigh idle partitions many times
// over and keep a new topic's partitions off its owner.
const minWeight = 1024

// Assign shares work among the members of one generation (the leader's assignor). It is
// a pure function, deterministic for the same members and work in any order, and keeps
// these rules:
//
//   - No unit is in two plans, and a unit claimed by a member is in no other member's
//     plan: a unit that moves from X to Y is in neither plan in this generation, X's
//     plan has Rejoin set, and once X has released it and rejoined (its claim no longer
//     lists it) it is assigned in the next generation (KIP-429's cooperative protocol).
//   - A unit claimed by two members or more (one of them is stale) is in none of their
//     plans; each of them releases it and rejoins, and the next generation assigns it.
//   - Units claimed by no current member (new units, units of members that left) are
//     assigned at once.
//   - Sticky: a unit stays with the member that claims it unless balance requires moving
//     it, which is when its owner's load exceeds another member's load by more than the
//     weight of the owner's heaviest unit.
//   - Balanced by weight, then count: a unit weighs its rate (minimum minWeight), and a unit of
//     unknown rate weighs the median of the known rates, or minWeight if none is known. A unit's
//     rate is the one its claimant reports; for an unclaimed unit, the one a member that
//     released it reports (the lowest member id's); for a contested one, unknown. In the
//     target assignment (which the plans reach once the moving units are released), for
//     every two members the heavier one's load exceeds the lighter one's by at most the
//     heavier one's heaviest unit: so the heaviest member exceeds the lightest by at most
//     the heaviest unit's weight, and with equal weights counts differ by at most one.
//   - Claimed units that are not in work are in no plan: their owners release them.
//   - Every member gets a slot no other member holds: the one it claims, unless a member
//     of a lower id claims it too; else the lowest slot nobody holds, in member id order.
//   - Control goes to the leader (the claim marked Leader, else the lowest member id):
//     the duty creates the remote topics and the leader lists the work, so a topic the
//     duty creates is shared at once. Another member that claims it releases it and
//     rejoins; while it does, the leader gets the duty only if it claims it too (it
//     already runs it). It never moves for balance.
//
// The result has a plan for every member id in claims (the first claim of a duplicate id
// counts).
func Assign(claims []Claim, work []Unit) map[string]Plan {
	ms := slices.Clone(claims)
	slices.SortStableFunc(ms, func(a, b Claim) int { return cmp.Compare(a.MemberID, b.MemberID) })
	ms = slices.CompactFunc(ms, func(a, b Claim) bool { return a.MemberID == b.MemberID })
	out := make(map[string]Plan, len(ms))
	if len(ms) == 0 {
		return out
	}
	units := sortedUnits(work)
	wanted := make(map[Unit]bool, len(units))
	for _, u := range units {
		wanted[u] = true
	}
	// claimants[u] lists the members (indices into ms, ascending) that claim wanted u.
	claimants := make(map[Unit][]int, len(units))
	for i, c := range ms {
		for _, u := range sortedUnits(c.Units) {
			if wanted[u] {
				claimants[u] = append(claimants[u], i)
			}
		}
	}
	rate, weight := weights(ms, units, claimants)

	w := make([]float64, len(units))
	for k, u := range units {
		w[k] = weight[u]
	}
	b := newBalancer(len(ms), w)
	var free []int
	for k, u := range units {
		if cs := claimants[u]; len(cs) == 1 {
			b.place(cs[0], k, true)
		} else {
			free = append(free, k) // unclaimed, or contested: placed like new units
		}
	}
	// Heaviest first onto the lightest member, then moves until balanced.
	slices.SortStableFunc(free, func(a, b int) int { return cmp.Compare(w[b], w[a]) })
	for _, k := range free {
		b.place(b.lightest(), k, false)
	}
	b.balance()

	plans := make([]Plan, len(ms))
	for i, h := range b.members {
		slices.Sort(h.units) // unit order
		for _, k := range h.units {
			u := units[k]
			cs := claimants[u]
			if len(cs) > 1 || len(cs) == 1 && cs[0] != i {
				continue // moving or contested: withheld until its claimants released it
			}
			plans[i].Units = append(plans[i].Units, u)
			if r, ok := rate[u]; ok {
				if plans[i].Rates == nil {
					plans[i].Rates = map[Unit]float64{}
				}
				plans[i].Rates[u] = r
			}
		}
	}
	for k, u := range units {
		cs := claimants[u]
		for _, c := range cs {
			if len(cs) > 1 || b.owner[k] != c {
				plans[c].Rejoin = true
			}
		}
	}

	leader := max(0, slices.IndexFunc(ms, func(c Claim) bool { return c.Leader }))
	others := false
	for i, c := range ms {
		if c.Control && i != leader {
			plans[i].Rejoin = true // releases the duty first
			others = true
		}
	}
	plans[leader].Control = !others || ms[leader].Control

	for i, slot := range assignSlots(ms) {
		plans[i].Slot = slot
	}
	for i, c := range ms {
		out[c.MemberID] = plans[i]
	}
	return out
}

// assignSlots gives each member (sorted by id) a slot no other holds: the one it
// claims, unless a member of a lower id claims it too, else the lowest free one.
func assignSlots(ms []Claim) []int {
	out := make([]int, len(ms))
	taken := map[int]bool{}
	for i, c := range ms {
		out[i] = -1
		if c.Slot >= 0 && !taken[c.Slot] {
			out[i] = c.Slot
			taken[c.Slot] = true
		}
	}
	free := 0
	for i := range out {
		if out[i] >= 0 {
			continue
		}
		for taken[free] {
			free++
		}
		out[i] = free
		taken[free] = true
	}
	return out
}

// weights returns the known rate of every unit that has one, and the weight of every
// unit: its rate (at least minWeight), else the median of the known rates, or minWeight.
func weights(ms []Claim, units []Unit, claimants map[Unit][]int) (rate, weight map[Unit]float64) {
	valid := func(c Claim, u Unit) (float64, bool) {
		r, ok := c.Rates[u]
		return r, ok && r >= 0 && !math.IsNaN(r) && !math.IsInf(r, 0)
	}
	rate = make(map[Unit]float64, len(units))
	var known []float64
	for _, u := range units {
		var r float64
		ok := false
		switch cs := claimants[u]; len(cs) {
		case 0:
			// A unit released since its last generation: its releaser's rate.
			for _, c := range ms {
				if r, ok = valid(c, u); ok {
					break
				}
			}
		case 1:
			r, ok = valid(ms[cs[0]], u)
		default:
			// A contested unit's rates may be stale.
		}
		if ok {
			rate[u] = r
			known = append(known, r)
		}
	}
	unknown := float64(minWeight)
	if n := len(known); n > 0 {
		slices.Sort(known)
		unknown = known[n/2]
		if n%2 == 0 {
			unknown = (known[n/2-1] + known[n/2]) / 2
		}
	}
	weight = make(map[Unit]float64, len(units))
	for _, u := range units {
		r, ok := rate[u]
		if !ok {
			r = unknown
		}
		weight[u] = max(r, minWeight)
	}
	return rate, weight
}

// holder is one member's target set while the balancer works.
type holder struct {
	units []int // indices into the sorted units
	load  float64
}

// balancer computes the target assignment, where every unit should end up. Units are
// indices into the sorted work list, so index order is unit order.
type balancer struct {
	members []*holder // by member id
	weight  []float64 // by unit
	owner   []int     // by unit: the member it is placed on
	sticky  []bool    // by unit: placed on the member that claims it, and not moved
}

func newBalancer(n int, weight []float64) *balancer {
	b := &balancer{members: make([]*holder, n), weight: weight, owner: make([]int, len(weight)), sticky: make([]bool, len(weight))}
	for i := range b.members {
		b.members[i] = &holder{}
	}
	return b
}

func (b *balancer) place(i, k int, sticky bool) {
	h := b.members[i]
	h.units = append(h.units, k)
	h.load += b.weight[k]
	b.owner[k], b.sticky[k] = i, sticky
}

func (b *balancer) remove(i, k int) {
	h := b.members[i]
	h.units = slices.DeleteFunc(h.units, func(v int) bool { return v == k })
	h.load -= b.weight[k]
}

// lighter orders members by load, count and id (index), lightest first.
func (b *balancer) lighter(i, j int) int {
	hi, hj := b.members[i], b.members[j]
	if c := cmp.Compare(hi.load, hj.load); c != 0 {
		return c
	}
	if c := cmp.Compare(len(hi.units), len(hj.units)); c != 0 {
		return c
	}
	return cmp.Compare(i, j)
}

func (b *balancer) lightest() int {
	best := 0
	for i := 1; i < len(b.members); i++ {
		if b.lighter(i, best) < 0 {
			best = i
		}
	}
	return best
}

// balance moves units from heavier to lighter members while some pair (H, L) has H's
// load exceeding L's by more than H's heaviest unit. Every move takes a unit u of
// weight w ≤ heaviest(H) < gap from H to L, which strictly lowers the sum of the squared
// loads, so the loop ends; the cap is a guard against float rounding.
func (b *balancer) balance() {
	n := len(b.members)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	heaviest := make([]float64, n)
	for range 4*len(b.weight)*n + 16 {
		slices.SortFunc(order, b.lighter)
		for i, h := range b.members {
			heaviest[i] = 0
			for _, k := range h.units {
				heaviest[i] = max(heaviest[i], b.weight[k])
			}
		}
		moved := false
	pairs:
		for hi := n - 1; hi > 0; hi-- {
			h := order[hi]
			for li := 0; li < hi; li++ {
				l := order[li]
				gap := b.members[h].load - b.members[l].load
				if gap <= heaviest[h]*(1+1e-9)+1e-9 {
					continue
				}
				k := b.pick(h, gap)
				b.remove(h, k)
				b.place(l, k, false)
				moved = true
				break pairs
			}
		}
		if !moved {
			return
		}
	}
}

// pick chooses the unit of member h to move across a gap: units that h did not claim
// first (moving them costs no revocation), then the one that evens the pair best, then
// the first in unit order.
func (b *balancer) pick(h int, gap float64) int {
	best, bestSticky, bestDiff := -1, true, math.Inf(1)
	for _, k := range b.members[h].units {
		sticky := b.sticky[k]
		diff := math.Abs(gap - 2*b.weight[k])
		better := false
		switch {
		case best < 0:
			better = true
		case sticky != bestSticky:
			better = !sticky
		case diff != bestDiff:
			better = diff < bestDiff
		default:
			better = k < best
		}
		if better {
			best, bestSticky, bestDiff = k, sticky, diff
		}
	}
	return best
}
