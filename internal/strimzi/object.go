package strimzi

import (
	"fmt"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// object is one YAML mapping of the resource. The converter takes each
// field it knows through these methods; done reports every field left over
// as unmapped, so a typo never disappears.
type object struct {
	c     *converter
	path  string
	line  int
	keys  []string
	key   map[string]*yaml.Node
	value map[string]*yaml.Node
	used  map[string]bool
}

// newObject reads a mapping node, or reports that n is not one and
// returns nil.
func (c *converter) newObject(path string, n *yaml.Node) *object {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		c.unmapped(n.Line, path, "expected an object (key: value lines), found %s; not converted", describeNode(n))
		return nil
	}
	o := &object{c: c, path: path, line: n.Line, key: map[string]*yaml.Node{}, value: map[string]*yaml.Node{}, used: map[string]bool{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		name := k.Value
		if _, dup := o.key[name]; dup {
			c.unmapped(k.Line, o.sub(name), "set twice (the API server rejects a duplicate field); the first value is converted: keep one")
			continue
		}
		o.keys = append(o.keys, name)
		o.key[name], o.value[name] = k, v
	}
	return o
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "an object"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "no value"
		}
		return strconv.Quote(n.Value)
	}
	return "something else"
}

// sub is the path of a field of o.
func (o *object) sub(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

func (o *object) has(name string) bool { _, ok := o.value[name]; return ok }

// lineOf is the line of a field's key, or of the object.
func (o *object) lineOf(name string) int {
	if k := o.key[name]; k != nil {
		return k.Line
	}
	return o.line
}

// take marks a field as handled and returns its value node (nil if absent).
func (o *object) take(name string) *yaml.Node {
	v := o.value[name]
	if v != nil {
		o.used[name] = true
	}
	return v
}

// scalar takes a field that must be a string, number or boolean, as
// written. ok is false when the field is absent or not a scalar (reported).
func (o *object) scalar(name string) (string, bool) {
	v := o.take(name)
	if v == nil {
		return "", false
	}
	s, ok := o.c.scalarValue(o.sub(name), v)
	return s, ok
}

// scalarValue is the text of a scalar node as written (600 stays "600",
// "false" stays "false"), or a finding for anything else.
func (c *converter) scalarValue(path string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		c.unmapped(v.Line, path, "expected a string, number or boolean, found %s; not converted", describeNode(v))
		return "", false
	}
	return v.Value, true
}

// bool takes a boolean field.
func (o *object) bool(name string) (value, ok bool) {
	s, ok := o.scalar(name)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(s)
	if err != nil || o.value[name].Tag == "!!str" {
		o.c.unmapped(o.lineOf(name), o.sub(name), "expected true or false, found %q; not converted", s)
		return false, false
	}
	return b, true
}

// object takes a field that must be an object.
func (o *object) object(name string) *object {
	v := o.take(name)
	if v == nil {
		return nil
	}
	return o.c.newObject(o.sub(name), v)
}

// list takes a field that must be a list and returns its items.
func (o *object) list(name string) []*yaml.Node {
	v := o.take(name)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		o.c.unmapped(v.Line, o.sub(name), "expected a list, found %s; not converted", describeNode(v))
		return nil
	}
	items := make([]*yaml.Node, len(v.Content))
	for i, it := range v.Content {
		items[i] = resolveAlias(it)
	}
	return items
}

// unmapped takes a field that has no equivalent and reports why.
func (o *object) unmapped(name, format string, args ...any) {
	if o.take(name) != nil {
		o.c.unmapped(o.lineOf(name), o.sub(name), format, args...)
	}
}

// note takes a field that needs nothing in the properties and says so.
func (o *object) note(name, format string, args ...any) {
	if o.take(name) != nil {
		o.c.note(o.lineOf(name), o.sub(name), format, args...)
	}
}

// skip takes every field: the whole object is covered by one finding.
func (o *object) skip() {
	for _, k := range o.keys {
		o.used[k] = true
	}
}

// done reports every field not taken: not in the API (or not in this
// layout), so most likely a typo.
func (o *object) done(known ...string) {
	for _, name := range o.keys {
		if o.used[name] {
			continue
		}
		msg := "unknown field, not in Strimzi's KafkaMirrorMaker2 API here; not converted"
		if near := closest(name, append(known, o.keys...)); near != "" && near != name && !o.has(near) {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		o.c.unmapped(o.lineOf(name), o.sub(name), "%s", msg)
	}
}

// closest returns the candidate within edit distance 2 of name, if one is.
func closest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range slices.Compact(slices.Sorted(slices.Values(candidates))) {
		if d := editDistance(name, c); d < bestD && c != name {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance, enough to catch typos.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
