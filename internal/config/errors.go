package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem found in a configuration file: the key and line that
// caused it and what to do about it.
type Error struct {
	File    string // the name given to Load or Parse
	Origin  Origin // the key at fault; Line is 0 when the problem is a missing key
	Message string
}

// Error formats the problem as `mm2.properties:12: key "A->B.topics": message`.
func (e Error) Error() string {
	var b strings.Builder
	b.WriteString(cmp.Or(e.Origin.File, e.File, "config"))
	if e.Origin.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Origin.Line)
	}
	b.WriteString(": ")
	if e.Origin.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Origin.Key)
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem Load or Parse found, in line order. Load and Parse
// return it as *Errors, so callers can list the problems one by one with
// errors.As.
type Errors []Error

// Error lists every problem, one per line.
func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

// Problem is a client setting that cannot be honoured, found when the
// settings are mapped to a client: the key at fault and what to do.
type Problem struct {
	Origin  Origin
	Message string
}

// Error formats the problem as `key "B.producer.linger.ms" (line 3): message`.
func (p Problem) Error() string { return p.Origin.String() + ": " + p.Message }

// report collects errors and warnings while a file is loaded. Problems found
// once per flow for a key shared by several flows are reported once.
type report struct {
	file     string
	errs     []Error
	warnings []Warning
	seen     map[string]bool
}

func newReport(file string) *report {
	return &report{file: file, seen: map[string]bool{}}
}

// errorf records an error at origin o.
func (r *report) errorf(o Origin, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.once("E", o, msg) {
		r.errs = append(r.errs, Error{File: r.file, Origin: o, Message: msg})
	}
}

// warnf records a warning at origin o.
func (r *report) warnf(o Origin, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.once("W", o, msg) {
		r.warnings = append(r.warnings, Warning{Origin: o, Message: msg})
	}
}

func (r *report) once(kind string, o Origin, msg string) bool {
	k := fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%s", kind, o.File, o.Key, o.Line, msg)
	if r.seen[k] {
		return false
	}
	r.seen[k] = true
	return true
}

// sorted returns the errors and warnings in line order, the file's before
// the overlays'; problems that are not tied to a line (a missing key, the
// whole file) come first.
func (r *report) sorted() (Errors, []Warning) {
	byLine := func(a, b Origin) int { return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line)) }
	errs := slices.Clone(r.errs)
	slices.SortStableFunc(errs, func(a, b Error) int { return byLine(a.Origin, b.Origin) })
	ws := slices.Clone(r.warnings)
	slices.SortStableFunc(ws, func(a, b Warning) int { return byLine(a.Origin, b.Origin) })
	return errs, ws
}
