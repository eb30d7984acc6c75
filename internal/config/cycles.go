package config

import (
	"slices"
	"strings"
)

// markReverse sets ReverseEnabled on every flow whose reverse flow is
// enabled in the file, whether or not this node runs it (--clusters): the
// pair is active-active, and the flow skips what the reverse flow wrote on
// its source (internal/provenance).
func markReverse(all []*Flow) {
	enabled := map[string]bool{}
	for _, f := range all {
		if f.Enabled {
			enabled[f.Name()] = true
		}
	}
	for _, f := range all {
		f.ReverseEnabled = f.Enabled && enabled[f.Target+"->"+f.Source]
	}
}

// nameCycle returns the first cycle of three or more enabled flows that a
// topic name cannot break, as "A->B, B->C, C->A", or "" when there is none.
// The default policy prefixes the source alias, so MM2's isCycle stops a
// record before it comes round (spec §3.4); any other policy may keep names,
// and only two-way pairs are broken by producer ids (internal/provenance),
// so a longer cycle with such a flow would copy records round forever.
func nameCycle(all []*Flow) string {
	next := map[string][]*Flow{}
	for _, f := range all {
		if f.Enabled {
			next[f.Source] = append(next[f.Source], f)
		}
	}
	starts := make([]string, 0, len(next))
	for s := range next {
		starts = append(starts, s)
		slices.SortFunc(next[s], func(a, b *Flow) int { return strings.Compare(a.Target, b.Target) })
	}
	slices.Sort(starts)
	for _, start := range starts {
		if c := cycleFrom(start, next); c != nil {
			names := make([]string, len(c))
			for i, f := range c {
				names[i] = f.Name()
			}
			return strings.Join(names, ", ")
		}
	}
	return ""
}

// cycleFrom finds a simple cycle through start of at least three flows,
// one of which may keep names (a policy other than the default, or rename
// rules, which can drop the alias the default policy adds). Cycles are found
// once, from their smallest alias.
func cycleFrom(start string, next map[string][]*Flow) []*Flow {
	var path []*Flow
	onPath := map[string]bool{start: true}
	var walk func(at string) []*Flow
	walk = func(at string) []*Flow {
		for _, f := range next[at] {
			if f.Target == start && len(path) >= 2 {
				c := append(slices.Clone(path), f)
				if slices.ContainsFunc(c, func(f *Flow) bool { return f.Policy.Class != DefaultPolicyClass || f.Policy.Rules != nil }) {
					return c
				}
				continue
			}
			if onPath[f.Target] || f.Target < start {
				continue
			}
			onPath[f.Target] = true
			path = append(path, f)
			if c := walk(f.Target); c != nil {
				return c
			}
			path = path[:len(path)-1]
			onPath[f.Target] = false
		}
		return nil
	}
	return walk(start)
}
