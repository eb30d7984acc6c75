package coord

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The group's protocol, as JoinGroup and SyncGroup name it. The protocol type keeps
// Strait's groups apart from consumer and Connect groups: the broker refuses a member of
// another type into the group (INCONSISTENT_GROUP_PROTOCOL).
const (
	ProtocolType = "strait"
	Protocol     = "strait-v1"
)

// encodingVersion is the version of the JSON documents below. A later version may only
// add fields, so that a member of version 1 still reads it; a change that version 1
// cannot read needs a new protocol name ("strait-v2"), which members then offer next to
// the old one, so that the broker picks one every member supports.
const encodingVersion = 1

// metadata is a member's JoinGroup protocol metadata, JSON:
//
//	{"version":1,"node":"host-4242","settings":"9f2c41d07a3b","rejoins":3,"control":true,"slot":1,
//	 "topics":[{"topic":"orders","partitions":[0,2],"rates":[120000,-1]}],
//	 "released":[{"topic":"orders","partitions":[1],"rates":[5000]}]}
//
// node is Config.NodeID; settings is Config.Settings, absent when empty; slot is the member's slot (Plan.Slot), absent when it holds none; rejoins counts the rebalances the member asked for (it makes
// the metadata differ, which is what makes the broker rebalance when a follower rejoins
// a stable group); control and topics are what it holds now; released lists the units it
// released since its last generation, only for their rates (Claim.Rates). rates, when
// present, has one entry per partition: bytes per second rounded to a whole number, -1
// when unknown.
type metadata struct {
	Version  int          `json:"version"`
	Node     string       `json:"node,omitempty"`
	Settings string       `json:"settings,omitempty"`
	Rejoins  int64        `json:"rejoins,omitempty"`
	Control  bool         `json:"control,omitempty"`
	Slot     *int         `json:"slot,omitempty"`
	Topics   []topicUnits `json:"topics,omitempty"`
	Released []topicUnits `json:"released,omitempty"`
}

// assignment is a member's SyncGroup assignment, JSON:
//
//	{"version":1,"control":true,"rejoin":true,"slot":0,
//	 "topics":[{"topic":"orders","partitions":[0,1],"rates":[120000,-1]}]}
//
// slot is the member's slot (Plan.Slot), absent from an older leader; topics is everything the member owns in the generation, with the rates the leader
// knew (Plan.Rates); rejoin asks it to rejoin after releasing what it held and was not
// given (Plan.Rejoin).
type assignment struct {
	Version int          `json:"version"`
	Control bool         `json:"control,omitempty"`
	Rejoin  bool         `json:"rejoin,omitempty"`
	Slot    *int         `json:"slot,omitempty"`
	Topics  []topicUnits `json:"topics,omitempty"`
}

// topicUnits is the units of one topic, grouped to keep the documents small: the broker
// stores every member's metadata and assignment in one record of __consumer_offsets.
type topicUnits struct {
	Topic      string    `json:"topic"`
	Partitions []int32   `json:"partitions"`
	Rates      []float64 `json:"rates,omitempty"`
}

// byTopic returns sorted units grouped by topic, with their rates when rates is not nil.
func byTopic(units []Unit, rates map[Unit]float64) []topicUnits {
	var out []topicUnits
	for _, u := range units {
		if len(out) == 0 || out[len(out)-1].Topic != u.Topic {
			out = append(out, topicUnits{Topic: u.Topic})
		}
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, u.Partition)
		if rates != nil {
			r, ok := rates[u]
			if !ok || r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
				r = -1
			}
			t.Rates = append(t.Rates, math.Round(r))
		}
	}
	if rates != nil {
		// A topic without a known rate needs no rates.
		for i := range out {
			if !slices.ContainsFunc(out[i].Rates, func(r float64) bool { return r >= 0 }) {
				out[i].Rates = nil
			}
		}
	}
	return out
}

// unitsOf returns the units of ts, sorted, and the known rates.
func unitsOf(ts []topicUnits) ([]Unit, map[Unit]float64, error) {
	var units []Unit
	var rates map[Unit]float64
	for _, t := range ts {
		if t.Rates != nil && len(t.Rates) != len(t.Partitions) {
			return nil, nil, fmt.Errorf("topic %q has %d partitions and %d rates", t.Topic, len(t.Partitions), len(t.Rates))
		}
		for i, p := range t.Partitions {
			if p < 0 {
				return nil, nil, fmt.Errorf("topic %q has partition %d", t.Topic, p)
			}
			u := Unit{Topic: t.Topic, Partition: p}
			units = append(units, u)
			if t.Rates != nil && t.Rates[i] >= 0 {
				if rates == nil {
					rates = map[Unit]float64{}
				}
				rates[u] = t.Rates[i]
			}
		}
	}
	return sortedUnits(units), rates, nil
}

// slotField is a slot as the documents carry it: absent when negative.
func slotField(slot int) *int {
	if slot < 0 {
		return nil
	}
	return &slot
}

// slotOf reads a slot field, -1 when absent.
func slotOf(p *int) int {
	if p == nil || *p < 0 {
		return -1
	}
	return *p
}

// encodeMetadata encodes what member c holds (its Units, with Rates), who it
// is (Node, Settings, Slot), how many rebalances it asked for and the rates of
// the units it released.
func encodeMetadata(c Claim, rejoins int64, released map[Unit]float64) []byte {
	rates := c.Rates
	if rates == nil {
		rates = map[Unit]float64{} // rates in the document only when some are known
	}
	var rel []Unit
	for u := range released {
		rel = append(rel, u)
	}
	md := metadata{
		Version: encodingVersion, Node: c.Node, Settings: c.Settings, Rejoins: rejoins, Control: c.Control, Slot: slotField(c.Slot),
		Topics: byTopic(c.Units, rates), Released: byTopic(sortedUnits(rel), released),
	}
	b, err := json.Marshal(md)
	if err != nil {
		panic(fmt.Sprintf("encoding group metadata: %v", err)) // plain strings and numbers: cannot fail
	}
	return b
}

// decodeMetadata reads a member's metadata into a Claim without its member id.
func decodeMetadata(b []byte) (Claim, error) {
	var md metadata
	if err := decode(b, &md, &md.Version); err != nil {
		return Claim{}, fmt.Errorf("decoding member metadata: %w", err)
	}
	units, rates, err := unitsOf(md.Topics)
	if err != nil {
		return Claim{}, fmt.Errorf("decoding member metadata: %w", err)
	}
	_, released, err := unitsOf(md.Released)
	if err != nil {
		return Claim{}, fmt.Errorf("decoding member metadata: %w", err)
	}
	for u, r := range released {
		if !slices.Contains(units, u) {
			if rates == nil {
				rates = map[Unit]float64{}
			}
			rates[u] = r
		}
	}
	return Claim{Node: md.Node, Settings: md.Settings, Units: units, Control: md.Control, Rates: rates, Slot: slotOf(md.Slot)}, nil
}

func encodeAssignment(p Plan) []byte {
	rates := p.Rates
	if rates == nil {
		rates = map[Unit]float64{}
	}
	b, err := json.Marshal(assignment{Version: encodingVersion, Control: p.Control, Rejoin: p.Rejoin, Slot: slotField(p.Slot), Topics: byTopic(p.Units, rates)})
	if err != nil {
		panic(fmt.Sprintf("encoding an assignment: %v", err))
	}
	return b
}

// decodeAssignment reads a SyncGroup assignment. An empty one (a member the leader
// did not know of when it assigned) assigns nothing.
func decodeAssignment(b []byte) (Plan, error) {
	if len(b) == 0 {
		return Plan{Slot: -1}, nil
	}
	var a assignment
	if err := decode(b, &a, &a.Version); err != nil {
		return Plan{}, fmt.Errorf("decoding an assignment: %w", err)
	}
	units, rates, err := unitsOf(a.Topics)
	if err != nil {
		return Plan{}, fmt.Errorf("decoding an assignment: %w", err)
	}
	return Plan{Units: units, Control: a.Control, Rejoin: a.Rejoin, Rates: rates, Slot: slotOf(a.Slot)}, nil
}

func decode(b []byte, v any, version *int) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	if *version < 1 {
		return errors.New("no version")
	}
	return nil
}
