package coord

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// us returns the units topic/p for each p.
func us(topic string, ps ...int32) []Unit {
	out := make([]Unit, len(ps))
	for i, p := range ps {
		out[i] = Unit{Topic: topic, Partition: p}
	}
	return out
}

func cat(lists ...[]Unit) []Unit {
	var out []Unit
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// kib is a rate of 1 KiB/s, minWeight: the tests' rates are counted in it.
const kib = minWeight

// rates returns the rate r for every unit of units.
func rates(r float64, units ...Unit) map[Unit]float64 {
	out := make(map[Unit]float64, len(units))
	for _, u := range units {
		out[u] = r
	}
	return out
}

func merge(ms ...map[Unit]float64) map[Unit]float64 {
	out := map[Unit]float64{}
	for _, m := range ms {
		for u, r := range m {
			out[u] = r
		}
	}
	return out
}

func TestAssign(t *testing.T) {
	a := func(ps ...int32) []Unit { return us("a", ps...) }
	tests := []struct {
		name   string
		claims []Claim
		work   []Unit
		want   map[string]Plan
	}{
		{
			name: "no members",
			work: a(0, 1),
			want: map[string]Plan{},
		},
		{
			name:   "a group of one takes everything and control",
			claims: []Claim{{MemberID: "m1"}},
			work:   a(0, 1, 2),
			want:   map[string]Plan{"m1": {Units: a(0, 1, 2), Control: true}},
		},
		{
			name:   "no work: control alone",
			claims: []Claim{{MemberID: "m2"}, {MemberID: "m1"}},
			want:   map[string]Plan{"m1": {Control: true}, "m2": {}},
		},
		{
			name:   "new units spread by count over empty members",
			claims: []Claim{{MemberID: "m1"}, {MemberID: "m2"}, {MemberID: "m3"}},
			work:   a(0, 1, 2, 3, 4, 5, 6),
			want: map[string]Plan{
				"m1": {Units: a(0, 3, 6), Control: true},
				"m2": {Units: a(1, 4)},
				"m3": {Units: a(2, 5)},
			},
		},
		{
			name:   "sticky: a balanced group keeps everything",
			claims: []Claim{{MemberID: "m1", Units: a(3, 0)}, {MemberID: "m2", Units: a(1, 2), Control: true, Leader: true}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0, 3)},
				"m2": {Units: a(1, 2), Control: true},
			},
		},
		{
			name:   "cooperative, first phase: units that move go to neither, the giver rejoins",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1, 2, 3), Control: true}, {MemberID: "m2"}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(2, 3), Control: true, Rejoin: true},
				"m2": {},
			},
		},
		{
			name:   "cooperative, second phase: the released units go to the taker",
			claims: []Claim{{MemberID: "m1", Units: a(2, 3), Control: true}, {MemberID: "m2"}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(2, 3), Control: true},
				"m2": {Units: a(0, 1)},
			},
		},
		{
			name: "units of a member that left are assigned at once",
			// m3 held a(2, 3) and control, and left.
			claims: []Claim{{MemberID: "m1", Units: a(0, 1)}, {MemberID: "m2"}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0, 1), Control: true},
				"m2": {Units: a(2, 3)},
			},
		},
		{
			name:   "counts differ by at most one with equal weights",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1, 2, 3, 4, 5, 6)}, {MemberID: "m2"}, {MemberID: "m3"}},
			work:   a(0, 1, 2, 3, 4, 5, 6),
			want: map[string]Plan{
				"m1": {Units: a(4, 5, 6), Control: true, Rejoin: true},
				"m2": {},
				"m3": {},
			},
		},
		{
			name: "balance by weight: a heavy unit moves to the empty member",
			claims: []Claim{
				{MemberID: "m1", Units: a(0, 1), Rates: rates(100*kib, a(0, 1)...)},
				{MemberID: "m2", Units: a(2, 3, 4), Rates: rates(1*kib, a(2, 3, 4)...)},
				{MemberID: "m3"},
			},
			work: a(0, 1, 2, 3, 4),
			want: map[string]Plan{
				"m1": {Units: a(1), Control: true, Rejoin: true, Rates: rates(100*kib, a(1)...)},
				"m2": {Units: a(2, 3, 4), Rates: rates(1*kib, a(2, 3, 4)...)},
				"m3": {},
			},
		},
		{
			name: "balance by weight, second phase: the released unit's rate follows it",
			claims: []Claim{
				{MemberID: "m1", Units: a(1), Control: true, Rates: rates(100*kib, a(0, 1)...)},
				{MemberID: "m2", Units: a(2, 3, 4), Rates: rates(1*kib, a(2, 3, 4)...)},
				{MemberID: "m3"},
			},
			work: a(0, 1, 2, 3, 4),
			want: map[string]Plan{
				"m1": {Units: a(1), Control: true, Rates: rates(100*kib, a(1)...)},
				"m2": {Units: a(2, 3, 4), Rates: rates(1*kib, a(2, 3, 4)...)},
				"m3": {Units: a(0), Rates: rates(100*kib, a(0)...)},
			},
		},
		{
			name: "balance by weight: a unit heavier than the rest stays, small ones spread",
			claims: []Claim{
				{MemberID: "m1", Units: a(0), Rates: rates(1000*kib, a(0)...)},
				{MemberID: "m2", Units: a(1, 2, 3, 4, 5, 6), Rates: rates(1*kib, a(1, 2, 3, 4, 5, 6)...)},
				{MemberID: "m3"},
			},
			work: a(0, 1, 2, 3, 4, 5, 6),
			want: map[string]Plan{
				"m1": {Units: a(0), Control: true, Rates: rates(1000*kib, a(0)...)},
				"m2": {Units: a(4, 5, 6), Rejoin: true, Rates: rates(1*kib, a(4, 5, 6)...)},
				"m3": {},
			},
		},
		{
			name: "rate noise moves nothing",
			claims: []Claim{
				{MemberID: "m1", Units: a(0, 1), Rates: map[Unit]float64{{"a", 0}: 1000.4 * kib, {"a", 1}: 1000.3 * kib}},
				{MemberID: "m2", Units: a(2, 3), Rates: map[Unit]float64{{"a", 2}: 999.9 * kib, {"a", 3}: 999.8 * kib}},
			},
			work: a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0, 1), Control: true, Rates: map[Unit]float64{{"a", 0}: 1000.4 * kib, {"a", 1}: 1000.3 * kib}},
				"m2": {Units: a(2, 3), Rates: map[Unit]float64{{"a", 2}: 999.9 * kib, {"a", 3}: 999.8 * kib}},
			},
		},
		{
			name: "a heavy new unit goes to the lightest member",
			claims: []Claim{
				{MemberID: "m1", Units: a(0, 1), Rates: rates(10*kib, a(0, 1)...)},
				{MemberID: "m2", Units: a(2), Rates: rates(10*kib, a(2)...)},
			},
			work: a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0, 1), Control: true, Rates: rates(10*kib, a(0, 1)...)},
				"m2": {Units: a(2, 3), Rates: rates(10*kib, a(2)...)},
			},
		},
		{
			name:   "a unit claimed by two members goes to neither, both rejoin",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1)}, {MemberID: "m2", Units: a(1, 2)}, {MemberID: "m3", Units: a(3)}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0), Control: true, Rejoin: true},
				"m2": {Units: a(2), Rejoin: true},
				"m3": {Units: a(3)},
			},
		},
		{
			name:   "after the stale claim is released the unit is assigned",
			claims: []Claim{{MemberID: "m1", Units: a(0)}, {MemberID: "m2", Units: a(2)}, {MemberID: "m3", Units: a(3)}},
			work:   a(0, 1, 2, 3),
			want: map[string]Plan{
				"m1": {Units: a(0, 1), Control: true},
				"m2": {Units: a(2)},
				"m3": {Units: a(3)},
			},
		},
		{
			name:   "units no longer in the work are dropped, with no follow-up",
			claims: []Claim{{MemberID: "m1", Units: cat(a(0, 1), us("gone", 0, 1)), Control: true}},
			work:   a(0, 1),
			want:   map[string]Plan{"m1": {Units: a(0, 1), Control: true}},
		},
		{
			name:   "control stays with the leader",
			claims: []Claim{{MemberID: "m1"}, {MemberID: "m2", Control: true, Leader: true}, {MemberID: "m3"}},
			want:   map[string]Plan{"m1": {}, "m2": {Control: true}, "m3": {}},
		},
		{
			name:   "control held by nobody goes to the leader",
			claims: []Claim{{MemberID: "m3", Leader: true}, {MemberID: "m2"}},
			want:   map[string]Plan{"m2": {}, "m3": {Control: true}},
		},
		{
			name:   "without a leader's claim, the lowest member id leads",
			claims: []Claim{{MemberID: "m3"}, {MemberID: "m2"}},
			want:   map[string]Plan{"m2": {Control: true}, "m3": {}},
		},
		{
			name:   "control moves to the leader once its holder released it",
			claims: []Claim{{MemberID: "m1", Control: true}, {MemberID: "m2", Leader: true}, {MemberID: "m3"}},
			want:   map[string]Plan{"m1": {Rejoin: true}, "m2": {}, "m3": {}},
		},
		{
			name:   "control claimed twice stays with the leader, the other rejoins",
			claims: []Claim{{MemberID: "m1", Control: true}, {MemberID: "m2", Control: true, Leader: true}, {MemberID: "m3"}},
			want:   map[string]Plan{"m1": {Rejoin: true}, "m2": {Control: true}, "m3": {}},
		},
		{
			name:   "duplicates in work, in a claim and of a member id count once",
			claims: []Claim{{MemberID: "m1", Units: a(0, 0, 1)}, {MemberID: "m1", Units: a(2)}, {MemberID: "m2", Units: a(2)}},
			work:   a(2, 1, 0, 1, 2),
			want: map[string]Plan{
				"m1": {Units: a(0, 1), Control: true},
				"m2": {Units: a(2)},
			},
		},
		{
			// A make ci run: the leader's data partitions were idle (0 B/s),
			// its heartbeats partition carried 200 B/s, the others' rates were
			// not measured yet. Unknown rates weighed the median, 0, so a unit
			// weighed 1 and the heartbeats 200: all six partitions of a new
			// topic went to the two other members. Every unit costs a
			// partition's fetches and commits, whatever its bytes: a floor of
			// 1 KiB/s spreads idle and slow units by count.
			name: "slow units spread by count",
			claims: []Claim{
				{MemberID: "m1", Leader: true, Control: true, Units: cat(a(4, 5), us("hb", 0)), Rates: merge(rates(0, a(4, 5)...), rates(200, us("hb", 0)...))},
				{MemberID: "m2", Units: a(0, 2)},
				{MemberID: "m3", Units: a(1, 3)},
			},
			work: cat(a(0, 1, 2, 3, 4, 5), us("b", 0, 1, 2, 3, 4, 5), us("hb", 0)),
			want: map[string]Plan{
				"m1": {Units: cat(a(4, 5), us("b", 2, 5), us("hb", 0)), Control: true, Rates: merge(rates(0, a(4, 5)...), rates(200, us("hb", 0)...))},
				"m2": {Units: cat(a(0, 2), us("b", 0, 3))},
				"m3": {Units: cat(a(1, 3), us("b", 1, 4))},
			},
		},
		{
			name: "units of several topics",
			claims: []Claim{
				{MemberID: "m1", Units: cat(a(0, 1), us("b", 0, 1))},
				{MemberID: "m2", Units: us("c", 0)},
			},
			work: cat(a(0, 1), us("b", 0, 1), us("c", 0, 1)),
			want: map[string]Plan{
				"m1": {Units: cat(a(1), us("b", 0, 1)), Control: true, Rejoin: true},
				"m2": {Units: us("c", 0, 1)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Assign(tt.claims, tt.work)
			checkPlans(t, tt.claims, tt.work, got)
			for id, p := range got {
				p.Slot = 0 // TestAssignSlots
				got[id] = p
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Assign:\ngot  %v\nwant %v", fmtPlans(got), fmtPlans(tt.want))
			}
		})
	}
}

// TestAssignSlots: every member gets a slot no other holds; a member keeps the
// one it claims unless a member of a lower id claims it too; the others take
// the lowest free slots in member id order.
func TestAssignSlots(t *testing.T) {
	tests := []struct {
		name   string
		claims []Claim
		want   map[string]int
	}{
		{"one member alone", []Claim{{MemberID: "m1", Slot: -1}}, map[string]int{"m1": 0}},
		{"new members take the lowest free slots", []Claim{{MemberID: "m3", Slot: -1}, {MemberID: "m1", Slot: 1}, {MemberID: "m2", Slot: -1}},
			map[string]int{"m1": 1, "m2": 0, "m3": 2}},
		{"held slots are kept, a gap is filled", []Claim{{MemberID: "m1", Slot: 2}, {MemberID: "m2", Slot: 0}, {MemberID: "m9", Slot: -1}},
			map[string]int{"m1": 2, "m2": 0, "m9": 1}},
		{"a slot claimed twice stays with the lower member id", []Claim{{MemberID: "m2", Slot: 0}, {MemberID: "m1", Slot: 0}},
			map[string]int{"m1": 0, "m2": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]int{}
			for id, p := range Assign(tt.claims, nil) {
				got[id] = p.Slot
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("slots %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWeights(t *testing.T) {
	a := func(ps ...int32) []Unit { return us("a", ps...) }
	tests := []struct {
		name   string
		claims []Claim
		units  []Unit
		want   map[Unit]float64
	}{
		{
			name: "an unclaimed unit has the rate its releaser reports",
			claims: []Claim{
				{MemberID: "m1", Units: a(0), Rates: map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 50 * kib}},
				{MemberID: "m2", Rates: rates(70*kib, a(1)...)},
			},
			units: a(0, 1),
			want:  map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 50 * kib},
		},
		{
			name:   "no known rate: every unit weighs the floor, 1 KiB/s",
			claims: []Claim{{MemberID: "m1", Units: a(0)}},
			units:  a(0, 1),
			want:   rates(1*kib, a(0, 1)...),
		},
		{
			name:   "unknown rates weigh the median of the known ones (odd count)",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1, 2, 3), Rates: map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 30 * kib, {"a", 2}: 500 * kib}}},
			units:  a(0, 1, 2, 3, 4),
			want:   merge(map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 30 * kib, {"a", 2}: 500 * kib}, rates(30*kib, a(3, 4)...)),
		},
		{
			name:   "median of an even count is the mean of the middle two",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1), Rates: map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 30 * kib}}},
			units:  a(0, 1, 2),
			want:   map[Unit]float64{{"a", 0}: 10 * kib, {"a", 1}: 30 * kib, {"a", 2}: 20 * kib},
		},
		{
			name: "idle and slow units weigh the floor; invalid rates are unknown",
			claims: []Claim{{MemberID: "m1", Units: a(0, 1, 2, 3, 4), Rates: map[Unit]float64{
				{"a", 0}: 0 * kib, {"a", 1}: 0.25 * kib, {"a", 2}: -5, {"a", 3}: math.NaN(), {"a", 4}: math.Inf(1),
			}}},
			units: a(0, 1, 2, 3, 4),
			want:  rates(1*kib, a(0, 1, 2, 3, 4)...),
		},
		{
			name: "only the sole claimant's rates count",
			claims: []Claim{
				{MemberID: "m1", Units: a(0, 1), Rates: rates(100*kib, a(0, 1, 2)...)},
				{MemberID: "m2", Units: a(1), Rates: rates(7*kib, a(1)...)},
			},
			units: a(0, 1, 2),
			want:  rates(100*kib, a(0, 1, 2)...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimants := map[Unit][]int{}
			for i, c := range tt.claims {
				for _, u := range c.Units {
					claimants[u] = append(claimants[u], i)
				}
			}
			if _, got := weights(tt.claims, tt.units, claimants); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("weights = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAssignIsDeterministic shuffles claims, their units and the work: the plans stay
// the same, and the inputs are not changed.
func TestAssignIsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		claims, work := randomGroup(r)
		want := Assign(claims, work)
		for range 5 {
			cs := deepCopyClaims(claims)
			r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			for _, c := range cs {
				r.Shuffle(len(c.Units), func(i, j int) { c.Units[i], c.Units[j] = c.Units[j], c.Units[i] })
			}
			w := slices.Clone(work)
			r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
			before := deepCopyClaims(cs)
			got := Assign(cs, w)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: shuffled input gave\n%v\nnot\n%v", round, fmtPlans(got), fmtPlans(want))
			}
			if !reflect.DeepEqual(cs, before) {
				t.Fatalf("round %d: Assign changed its input", round)
			}
		}
	}
}

func randomGroup(r *rand.Rand) ([]Claim, []Unit) {
	var work []Unit
	for tp := range 1 + r.IntN(3) {
		for p := range r.IntN(10) {
			work = append(work, Unit{Topic: fmt.Sprintf("t%d", tp), Partition: int32(p)})
		}
	}
	n := 1 + r.IntN(5)
	claims := make([]Claim, n)
	for i := range claims {
		claims[i] = Claim{MemberID: fmt.Sprintf("m%d", r.IntN(1000)*10+i), Rates: map[Unit]float64{}, Control: r.IntN(4) == 0}
	}
	for _, u := range append(slices.Clone(work), Unit{Topic: "gone", Partition: 0}) {
		for range r.IntN(3) { // 0, 1 or 2 claims: duplicates too
			c := &claims[r.IntN(n)]
			c.Units = append(c.Units, u)
			if r.IntN(3) > 0 {
				c.Rates[u] = float64(r.IntN(1000))
			}
		}
	}
	return claims, work
}

func deepCopyClaims(cs []Claim) []Claim {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Units = slices.Clone(cs[i].Units)
	}
	return out
}

// TestAssignRounds drives random rounds of joins, leaves, rate changes and work changes
// through assign, acquire, release and assign again, as the members do, and checks that
// no unit is ever held by two members, that every generation's plans keep Assign's
// rules, and that once no member is asked to rejoin every unit is held once, exactly one
// member holds control, and the loads are balanced.
func TestAssignRounds(t *testing.T) {
	for seed := range 300 {
		s := newGroupSim(uint64(seed))
		for round := range 40 {
			event := s.event()
			gens := s.settle(t)
			if t.Failed() {
				t.Fatalf("seed %d, round %d (%s)", seed, round, event)
			}
			if gens > 3 {
				t.Fatalf("seed %d, round %d (%s): %d generations to settle", seed, round, event, gens)
			}
			s.checkStable(t)
			if t.Failed() {
				t.Fatalf("seed %d, round %d (%s)", seed, round, event)
			}
		}
	}
}

// groupSim is a group of members, each holding units, as Assign's caller sees it.
type groupSim struct {
	r       *rand.Rand
	next    int
	members map[string]*simMember
	work    []Unit
	rate    map[Unit]float64 // the units' true rates
	topics  int
}

// simMember is one member as Member keeps it: what it holds, the rates it measured, the
// rates its last assignment gave, and the rates of what it released.
type simMember struct {
	held     []Unit
	control  bool
	measured map[Unit]float64
	hints    map[Unit]float64
	released map[Unit]float64
}

func newGroupSim(seed uint64) *groupSim {
	return &groupSim{r: rand.New(rand.NewPCG(seed, 7)), members: map[string]*simMember{}, rate: map[Unit]float64{}}
}

func (s *groupSim) event() string {
	switch k := s.r.IntN(10); {
	case k < 3 && len(s.members) < 7 || len(s.members) == 0:
		s.next++
		id := fmt.Sprintf("m%02d-%d", s.r.IntN(100), s.next)
		s.members[id] = &simMember{}
		return "join " + id
	case k < 5:
		ids := s.ids()
		id := ids[s.r.IntN(len(ids))]
		delete(s.members, id)
		return "leave " + id
	case k < 7:
		for u := range s.rate {
			if s.r.IntN(3) == 0 {
				s.rate[u] = s.randomRate()
			}
		}
		for _, m := range s.members {
			m.measured = map[Unit]float64{}
			for _, u := range m.held {
				if s.r.IntN(5) > 0 {
					m.measured[u] = s.rate[u]
				}
			}
		}
		return "rates"
	case k < 9 || len(s.work) == 0:
		s.topics++
		for p := range 1 + s.r.IntN(8) {
			u := Unit{Topic: fmt.Sprintf("t%d", s.topics), Partition: int32(p)}
			s.work = append(s.work, u)
			s.rate[u] = s.randomRate()
		}
		return "new topic"
	default:
		s.work = slices.DeleteFunc(s.work, func(Unit) bool { return s.r.IntN(4) == 0 })
		return "units removed"
	}
}

func (s *groupSim) randomRate() float64 {
	if s.r.IntN(4) == 0 {
		return 0 // idle
	}
	return float64(1 + s.r.IntN(10_000))
}

func (s *groupSim) ids() []string {
	ids := make([]string, 0, len(s.members))
	for id := range s.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// claims builds each member's claim as Member.metadata does.
func (s *groupSim) claims() []Claim {
	var cs []Claim
	for _, id := range s.ids() {
		m := s.members[id]
		c := Claim{MemberID: id, Units: m.held, Control: m.control, Rates: map[Unit]float64{}}
		for u, r := range m.released {
			c.Rates[u] = r
		}
		for _, u := range m.held {
			if r, ok := m.measured[u]; ok {
				c.Rates[u] = r
			} else if r, ok := m.hints[u]; ok {
				c.Rates[u] = r
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// settle runs generations until no member is asked to rejoin and returns how many it
// took. In each one, every member acquires its new units before any member releases
// what it gives up, the worst order.
func (s *groupSim) settle(t *testing.T) int {
	t.Helper()
	for gen := 1; gen <= 10; gen++ {
		claims := s.claims()
		plans := Assign(claims, s.work)
		checkPlans(t, claims, s.work, plans)
		holder := map[Unit]string{}
		controls := 0
		followUp := false
		for _, id := range s.ids() {
			m, p := s.members[id], plans[id]
			for _, u := range cat(m.held, p.Units) {
				if o, ok := holder[u]; ok && o != id {
					t.Errorf("generation %d: %v held by %s and %s", gen, u, o, id)
				}
				holder[u] = id
			}
			if m.control || p.Control {
				controls++
			}
			followUp = followUp || p.Rejoin
		}
		if controls > 1 {
			t.Errorf("generation %d: control held by %d members", gen, controls)
		}
		for i, id := range s.ids() {
			m, p := s.members[id], plans[id]
			reported := claims[i].Rates
			m.released = map[Unit]float64{}
			for _, u := range minus(m.held, p.Units) {
				if r, ok := reported[u]; ok {
					m.released[u] = r
				}
			}
			for u := range m.measured {
				if !slices.Contains(p.Units, u) {
					delete(m.measured, u)
				}
			}
			m.held, m.control, m.hints = p.Units, p.Control, p.Rates
		}
		if t.Failed() || !followUp {
			return gen
		}
	}
	t.Errorf("no stable generation after 10")
	return 10
}

func (s *groupSim) checkStable(t *testing.T) {
	t.Helper()
	if len(s.members) == 0 {
		return
	}
	holder := map[Unit]string{}
	controls := 0
	for id, m := range s.members {
		for _, u := range m.held {
			holder[u] = id
		}
		if m.control {
			controls++
		}
	}
	for _, u := range s.work {
		if _, ok := holder[u]; !ok {
			t.Errorf("stable, but %v is held by nobody", u)
		}
	}
	if len(holder) != len(sortedUnits(s.work)) {
		t.Errorf("stable, but %d units held for %d in the work", len(holder), len(s.work))
	}
	if controls != 1 {
		t.Errorf("stable, but %d members hold control", controls)
	}
	checkBalance(t, s.claims(), s.work)
}

// checkBalance checks that claims, taken as an assignment, are balanced as Assign
// promises.
func checkBalance(t *testing.T, claims []Claim, work []Unit) {
	t.Helper()
	units := sortedUnits(work)
	claimants := map[Unit][]int{}
	for i, c := range claims {
		for _, u := range c.Units {
			claimants[u] = append(claimants[u], i)
		}
	}
	_, w := weights(claims, units, claimants)
	loads := make([]float64, len(claims))
	heaviest := make([]float64, len(claims))
	var maxUnit float64
	equal := true
	for i, c := range claims {
		for _, u := range c.Units {
			loads[i] += w[u]
			heaviest[i] = max(heaviest[i], w[u])
			maxUnit = max(maxUnit, w[u])
			equal = equal && w[u] == w[units[0]]
		}
	}
	for i := range claims {
		for j := range claims {
			if gap := loads[i] - loads[j]; gap > heaviest[i]*(1+1e-9)+1e-9 {
				t.Errorf("unbalanced: %s weighs %g, %s %g, and the heaviest unit of %s %g", claims[i].MemberID, loads[i], claims[j].MemberID, loads[j], claims[i].MemberID, heaviest[i])
			}
			if equal && len(claims[i].Units)-len(claims[j].Units) > 1 {
				t.Errorf("unbalanced: equal weights, and %s holds %d units, %s %d", claims[i].MemberID, len(claims[i].Units), claims[j].MemberID, len(claims[j].Units))
			}
		}
	}
	if maxLoad, minLoad := slices.Max(loads), slices.Min(loads); maxLoad-minLoad > maxUnit*(1+1e-9)+1e-9 {
		t.Errorf("unbalanced: loads from %g to %g, heaviest unit %g", minLoad, maxLoad, maxUnit)
	}
}

// checkPlans checks the rules every result of Assign keeps, whatever its input.
func checkPlans(t *testing.T, claims []Claim, work []Unit, plans map[string]Plan) {
	t.Helper()
	wanted := map[Unit]bool{}
	for _, u := range work {
		wanted[u] = true
	}
	claimedBy := map[Unit]map[string]bool{}
	ids := map[string]bool{}
	for _, c := range claims {
		if ids[c.MemberID] {
			continue // a duplicate id: the first claim counts
		}
		ids[c.MemberID] = true
		for _, u := range c.Units {
			if claimedBy[u] == nil {
				claimedBy[u] = map[string]bool{}
			}
			claimedBy[u][c.MemberID] = true
		}
	}
	if len(plans) != len(ids) {
		t.Errorf("%d plans for %d members", len(plans), len(ids))
	}
	given := map[Unit]string{}
	slots := map[int]string{}
	controls := 0
	for id, p := range plans {
		if !ids[id] {
			t.Errorf("a plan for %s, no member", id)
		}
		if o, ok := slots[p.Slot]; ok || p.Slot < 0 {
			t.Errorf("%s has slot %d (also %q's)", id, p.Slot, o)
		}
		slots[p.Slot] = id
		if !slices.IsSortedFunc(p.Units, compareUnits) {
			t.Errorf("%s: units not sorted: %v", id, p.Units)
		}
		for _, u := range p.Units {
			if o, ok := given[u]; ok {
				t.Errorf("%v given to %s and %s", u, o, id)
			}
			given[u] = id
			if !wanted[u] {
				t.Errorf("%v given to %s is not in the work", u, id)
			}
			for c := range claimedBy[u] {
				if c != id {
					t.Errorf("%v given to %s while %s claims it", u, id, c)
				}
			}
		}
		if p.Control {
			controls++
		}
	}
	if controls > 1 || (controls == 0 && len(ids) > 0 && !anyRejoin(plans)) {
		t.Errorf("%d members hold control", controls)
	}
}

func anyRejoin(plans map[string]Plan) bool {
	for _, p := range plans {
		if p.Rejoin {
			return true
		}
	}
	return false
}

func fmtPlans(ps map[string]Plan) string {
	ids := make([]string, 0, len(ps))
	for id := range ps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		p := ps[id]
		fmt.Fprintf(&b, "%s:%v", id, p.Units)
		if p.Control {
			b.WriteString("+control")
		}
		if p.Rejoin {
			b.WriteString("+rejoin")
		}
		b.WriteString(" ")
	}
	return b.String()
}
