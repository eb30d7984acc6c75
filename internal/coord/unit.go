package coord

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Unit is one unit of work of a flow: a source partition. Units are assigned to one
// member at a time.
type Unit struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// String returns "topic/partition", for logs.
func (u Unit) String() string { return fmt.Sprintf("%s/%d", u.Topic, u.Partition) }

// compareUnits orders units by topic, then partition: the one order every list of
// units in this package is kept in, so that assignments are deterministic.
func compareUnits(a, b Unit) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// CompareUnits is the order of units this package keeps every list in, for
// callers that list units themselves.
func CompareUnits(a, b Unit) int { return compareUnits(a, b) }

// sortedUnits returns a sorted copy of us without duplicates.
func sortedUnits(us []Unit) []Unit {
	out := slices.Clone(us)
	slices.SortFunc(out, compareUnits)
	return slices.Compact(out)
}

// minus returns the units of a (sorted) that are not in b.
func minus(a, b []Unit) []Unit {
	in := make(map[Unit]bool, len(b))
	for _, u := range b {
		in[u] = true
	}
	var out []Unit
	for _, u := range a {
		if !in[u] {
			out = append(out, u)
		}
	}
	return out
}
