// Package strimzi converts Strimzi KafkaMirrorMaker2 custom resources into
// the MM2 dedicated-mode properties Strait reads (`strait import strimzi`).
//
// Both layouts of the resource are read: kafka.strimzi.io/v1beta2 with
// spec.connectCluster, spec.clusters and mirrors[].sourceCluster/
// targetCluster, and the layout of kafka.strimzi.io/v1 (also accepted in
// v1beta2 since Strimzi 0.49), spec.target with mirrors[].source inline.
// Every field of the resource ends up in one of three places: in the
// properties, in a Note (mapped, but the user must do something, such as
// mounting a Secret), or in an Unmapped finding that says why it has no
// equivalent and what to do instead. A field the API does not have (a typo)
// is Unmapped too, never skipped.
package strimzi

import (
	"fmt"
	"path"
	"strings"
)

// DefaultSecretsDir is where the converted configuration expects the
// Kubernetes Secrets a resource names: Secret S mounted as a directory at
// DefaultSecretsDir/S, one file per key, as a Secret volume lays it out. It
// sits beside deploy/kubernetes' /etc/strait/secrets, not inside it, since
// a volume cannot be mounted inside another Secret volume.
const DefaultSecretsDir = "/etc/strait/strimzi-secrets"

// Options are the choices of a conversion.
type Options struct {
	// SecretsDir replaces DefaultSecretsDir.
	SecretsDir string
}

// Kind says whether a finding leaves the conversion complete.
type Kind int

const (
	// Note is mapped, with something for the user to do or know.
	Note Kind = iota
	// Unmapped has no equivalent in the properties.
	Unmapped
)

func (k Kind) String() string {
	if k == Unmapped {
		return "unmapped"
	}
	return "note"
}

// Finding is one field that needs the user's attention.
type Finding struct {
	Kind    Kind
	Line    int    // line in the input, 0 when not tied to one
	Path    string // the field, e.g. "spec.mirrors[0].sourceConnector.state"
	Message string // what it was, why, and what to do
}

// String formats the finding as one line: `mm2.yaml:12: unmapped: spec.x: message`.
func (f Finding) format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d", f.Line)
	}
	fmt.Fprintf(&b, ": %s: ", f.Kind)
	if f.Path != "" {
		b.WriteString(f.Path + ": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// Result is a converted resource.
type Result struct {
	// Properties is the mm2.properties text.
	Properties string
	// Findings are in input order, notes and unmapped fields together.
	Findings []Finding
	// Secrets are the Kubernetes Secrets the properties read, in order of
	// first use.
	Secrets []Secret
	file    string
}

// Secret is one Kubernetes Secret to mount for the converted configuration.
type Secret struct {
	Name string
	Dir  string   // where the properties expect it mounted
	Keys []string // the keys read from it, each a file in Dir
}

// Complete reports whether every field was mapped (notes allowed).
func (r *Result) Complete() bool {
	for _, f := range r.Findings {
		if f.Kind == Unmapped {
			return false
		}
	}
	return true
}

// Lines formats the findings, one line each, for stderr.
func (r *Result) Lines() []string {
	out := make([]string, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = f.format(r.file)
	}
	return out
}

// InputError is a file that cannot be converted at all: not YAML, no
// KafkaMirrorMaker2 in it, or a resource without its required fields.
type InputError struct {
	File    string
	Line    int
	Message string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return e.File + ": " + e.Message
}

// Convert reads the KafkaMirrorMaker2 resources in data (a YAML stream; other
// kinds are skipped with a note) and returns the equivalent properties.
// Several resources, such as the two halves of an active-active pair, become
// one configuration with all their flows. name is the file name shown in
// findings and errors. The error is an *InputError; the Result then has the
// findings up to it and no properties.
func Convert(name string, data []byte, opts Options) (*Result, error) {
	if opts.SecretsDir == "" {
		opts.SecretsDir = DefaultSecretsDir
	}
	opts.SecretsDir = path.Clean(opts.SecretsDir)
	c := &converter{opts: opts, file: name, clusters: map[string]*cluster{}, secrets: map[string][]string{}}
	err := c.run(data)
	res := &Result{Findings: c.findings, file: name}
	if err != nil {
		return res, err
	}
	res.Properties = c.render()
	for _, s := range c.secretUse {
		res.Secrets = append(res.Secrets, Secret{Name: s, Dir: path.Join(opts.SecretsDir, s), Keys: c.secrets[s]})
	}
	return res, nil
}
