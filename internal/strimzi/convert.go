package strimzi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	apiV1beta2 = "kafka.strimzi.io/v1beta2"
	apiV1      = "kafka.strimzi.io/v1"
	kindMM2    = "KafkaMirrorMaker2"
)

// converter holds one conversion: what goes into the properties and what
// the user is told.
type converter struct {
	opts      Options
	file      string
	findings  []Finding
	resources []string            // `"name" (apiVersion)` of each resource, for the header
	clusters  map[string]*cluster // by alias
	aliases   []string            // output order
	flows     []*flow
	directory bool                // a ${directory:...} reference was written
	secrets   map[string][]string // Secret name -> the keys read from it
	secretUse []string            // Secret names in order of first use
	takeover  bool                // the note on Strimzi's stored progress was given
	api       string              // apiVersion of the resource being read
	resource  string              // metadata.name of the resource being read
}

// prop is one key = value line of the output.
type prop struct{ key, value string }

// cluster is one alias with its settings, without the alias prefix.
type cluster struct {
	alias string
	from  string // the field that defined it
	res   string // the resource that defined it
	line  int
	props []prop
}

// flow is one <source>-><target> pair with its settings, without the prefix.
type flow struct {
	source, target string
	from           string
	res            string
	props          []prop
	origin         map[string]string // key -> connector field that set it
	line           map[string]int    // key -> line of that field
}

func (f *flow) name() string { return f.source + "->" + f.target }

func (c *converter) unmapped(line int, path, format string, args ...any) {
	c.findings = append(c.findings, Finding{Kind: Unmapped, Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *converter) note(line int, path, format string, args ...any) {
	c.findings = append(c.findings, Finding{Kind: Note, Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *converter) inputError(line int, format string, args ...any) error {
	return &InputError{File: c.file, Line: line, Message: fmt.Sprintf(format, args...)}
}

// run reads every document of the stream.
func (c *converter) run(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	found := 0
	for doc := 1; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c.inputError(0, "not valid YAML: %v", err)
		}
		if len(n.Content) == 0 {
			continue
		}
		root := resolveAlias(n.Content[0])
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document between two ---
		}
		if root.Kind != yaml.MappingNode {
			return c.inputError(root.Line, "document %d is not a Kubernetes resource (an object with apiVersion, kind, metadata and spec)", doc)
		}
		ok, err := c.document(doc, root)
		if err != nil {
			return err
		}
		if ok {
			found++
		}
	}
	if found == 0 {
		return c.inputError(0, "no %s resource in the file (kind: %s, apiVersion: %s or %s)", kindMM2, kindMM2, apiV1beta2, apiV1)
	}
	if len(c.flows) == 0 {
		return c.inputError(0, "no mirror could be converted (see the findings above)")
	}
	if !c.takeover {
		c.note(0, "", "Strimzi's MirrorMaker 2 kept its progress in its Kafka Connect offsets topic under connector names like %q; Strait takes over only MM2 dedicated mode's progress (connector MirrorSourceConnector), so it starts each partition by auto.offset.reset (earliest by default: the target receives the records again); to start at the end instead, set <source alias>.consumer.auto.offset.reset = latest for the first run", "<source>-><target>.MirrorSourceConnector")
	}
	for _, s := range c.secretUse {
		c.note(0, "", "mount Secret %q at %s (Strait reads its keys %s there)", s, path.Join(c.opts.SecretsDir, s), strings.Join(c.secrets[s], ", "))
	}
	return nil
}

// document converts one resource; other kinds are skipped with a note.
func (c *converter) document(doc int, root *yaml.Node) (bool, error) {
	top := c.newObject("", root)
	kind, _ := top.scalar("kind")
	api, _ := top.scalar("apiVersion")
	name := ""
	if md := top.object("metadata"); md != nil {
		name, _ = md.scalar("name")
		// The rest of metadata (namespace, labels, annotations, ...) is the
		// object's identity in Kubernetes, not replication settings.
	}
	if kind != kindMM2 {
		c.note(root.Line, "", "document %d (%s %q) skipped: not a %s", doc, kind, name, kindMM2)
		return false, nil
	}
	switch api {
	case apiV1beta2, apiV1:
	default:
		return false, c.inputError(top.lineOf("apiVersion"), "apiVersion %q: strait import strimzi reads %s and %s (convert older resources with Strimzi's api-conversion tool first)", api, apiV1beta2, apiV1)
	}
	c.api, c.resource = api, name
	c.resources = append(c.resources, fmt.Sprintf("%q (%s)", name, api))
	top.take("status") // what the operator observed, not settings
	spec := top.object("spec")
	if spec == nil {
		return false, c.inputError(root.Line, "%s %q has no spec", kindMM2, name)
	}
	top.done("apiVersion", "kind", "metadata", "spec", "status")
	return true, c.spec(name, spec)
}

// spec converts the spec of one resource.
func (c *converter) spec(name string, s *object) error {
	c.deployment(s)
	oldLayout := s.has("clusters") || s.has("connectCluster")
	newLayout := s.has("target")
	var known []string
	switch {
	case oldLayout && newLayout:
		return c.inputError(s.line, "%s %q mixes the two layouts: spec.target with mirrors[].source, or (v1beta2 only) spec.connectCluster with spec.clusters; use one", kindMM2, name)
	case oldLayout && c.api == apiV1:
		for _, f := range []string{"clusters", "connectCluster"} {
			s.unmapped(f, "removed in %s: describe the clusters with spec.target and spec.mirrors[].source", apiV1)
		}
		return c.inputError(s.line, "%s %q has no spec.target: %s resources describe the target cluster there", kindMM2, name, apiV1)
	case oldLayout:
		known = []string{"connectCluster", "clusters", "mirrors"}
		if err := c.clustersLayout(name, s); err != nil {
			return err
		}
	case newLayout:
		known = []string{"target", "mirrors"}
		if err := c.targetLayout(name, s); err != nil {
			return err
		}
	default:
		return c.inputError(s.line, "%s %q names no clusters: set spec.target and spec.mirrors[].source", kindMM2, name)
	}
	s.done(append(known, deploymentFields...)...)
	return nil
}

// deploymentFields are the fields of the Connect deployment Strimzi builds.
var deploymentFields = []string{"version", "replicas", "image", "resources", "livenessProbe", "readinessProbe",
	"jvmOptions", "jmxOptions", "logging", "clientRackInitImage", "rack", "metricsConfig", "tracing", "template",
	"externalConfiguration"}

// deployment reports the fields about how Strimzi runs Kafka Connect: none
// of them is an MM2 setting.
func (c *converter) deployment(s *object) {
	s.note("version", "the Kafka Connect version of Strimzi's image; Strait needs none")
	if v := s.take("replicas"); v != nil {
		n, ok := c.scalarValue(s.sub("replicas"), v)
		switch {
		case !ok:
		case n == "1":
			c.note(v.Line, s.sub("replicas"), "run one Strait process with these properties, as replicas: 1 does (set replicas: 1 on Strait's Deployment, deploy/kubernetes/deployment.yaml); more processes with the same properties share each flow")
		case n == "0":
			c.unmapped(v.Line, s.sub("replicas"), "replicas: 0 keeps Strimzi's MirrorMaker 2 stopped; the properties replicate as soon as Strait runs: do not start Strait until you want replication")
		default:
			c.note(v.Line, s.sub("replicas"), "run %s Strait processes with these properties (set replicas: %s on Strait's Deployment, deploy/kubernetes/deployment.yaml): they share each flow's partitions through the flow's group on the target, as MM2's %s workers share its tasks", n, n, n)
		}
	}
	s.note("image", "the container image of Strimzi's Kafka Connect; Strait is its own binary")
	s.unmapped("resources", "CPU and memory of the Connect pods: set them on Strait's container (deploy/kubernetes/deployment.yaml); Strait sets the Go runtime's soft memory limit from the container's limit")
	s.unmapped("livenessProbe", "Strait's probes are HTTP GET /healthz (liveness) and /readyz (readiness) on strait.api.listen: set them on its Deployment")
	s.unmapped("readinessProbe", "Strait's probes are HTTP GET /healthz (liveness) and /readyz (readiness) on strait.api.listen: set them on its Deployment")
	s.unmapped("jvmOptions", "Strait is not a Java process: there is no heap to size; limit its memory with the container's limit or GOMEMLIMIT")
	s.unmapped("jmxOptions", "Strait has no JMX: it serves Prometheus metrics at /metrics on strait.api.listen, with MM2's series named as the JMX exporter names them")
	s.unmapped("logging", "Strait logs with --log-level (debug, info, warn, error) and --log-format (text, json); there are no log4j loggers")
	s.unmapped("metricsConfig", "Strait serves Prometheus metrics itself at /metrics on strait.api.listen; no JMX exporter rules are needed: scrape that endpoint")
	s.unmapped("tracing", "Strait emits no OpenTelemetry traces")
	s.unmapped("template", "templates for the pods, containers and services Strimzi creates: apply what you need to Strait's Deployment")
	s.unmapped("rack", "Strimzi sets the source consumer's client.rack from a node label; set <source alias>.consumer.client.rack in the properties yourself (for example through ${env:...} from the downward API)")
	s.unmapped("clientRackInitImage", "the init container Strimzi uses for rack awareness; Strait needs none")
	if c.api == apiV1beta2 {
		s.unmapped("externalConfiguration", "environment variables and volumes from Secrets and ConfigMaps: mount them on Strait's pod yourself; ${file:...}, ${directory:...} and ${env:...} references in the config work with the paths you mount them at (Strimzi used /opt/kafka/external-configuration/<name>)")
	}
}

// clustersLayout reads spec.connectCluster, spec.clusters and mirrors with
// sourceCluster/targetCluster (v1beta2).
func (c *converter) clustersLayout(name string, s *object) error {
	defined := map[string]*cluster{}
	var order []string
	for i, it := range s.list("clusters") {
		path := fmt.Sprintf("%s[%d]", s.sub("clusters"), i)
		cl, err := c.clusterSpec(path, it, false)
		if err != nil {
			return err
		}
		if cl == nil {
			continue
		}
		if _, dup := defined[cl.alias]; dup {
			return c.inputError(cl.line, "%s %q defines cluster alias %q twice in spec.clusters", kindMM2, name, cl.alias)
		}
		defined[cl.alias] = cl
		order = append(order, cl.alias)
	}
	connect, _ := s.scalar("connectCluster")
	if connect != "" {
		c.note(s.lineOf("connectCluster"), s.sub("connectCluster"), "Strait has no Kafka Connect cluster; it keeps its progress in each flow's target cluster")
	}
	used := map[string]bool{}
	for i, it := range s.list("mirrors") {
		path := fmt.Sprintf("%s[%d]", s.sub("mirrors"), i)
		m := c.newObject(path, it)
		if m == nil {
			continue
		}
		src, _ := m.scalar("sourceCluster")
		tgt, _ := m.scalar("targetCluster")
		var ok = true
		for _, a := range []struct{ field, alias string }{{"sourceCluster", src}, {"targetCluster", tgt}} {
			switch {
			case a.alias == "":
				c.unmapped(m.line, m.sub(a.field), "missing: every mirror names its source and target cluster; mirror not converted")
				ok = false
			case defined[a.alias] == nil:
				c.unmapped(m.lineOf(a.field), m.sub(a.field), "no cluster with alias %q in spec.clusters; mirror not converted", a.alias)
				ok = false
			}
		}
		if ok && src == tgt {
			c.unmapped(m.lineOf("targetCluster"), m.sub("targetCluster"), "the source and the target are both %q; mirror not converted", src)
			ok = false
		}
		if !ok {
			m.skip()
			continue
		}
		if c.mirror(m, src, tgt, true) {
			used[src], used[tgt] = true, true
		}
		m.done(mirrorFields...)
	}
	for _, a := range order {
		if used[a] {
			c.addCluster(defined[a])
		} else {
			c.note(defined[a].line, defined[a].from, "cluster %q is in no mirror; left out of the properties", a)
		}
	}
	return nil
}

// targetLayout reads spec.target and mirrors with source inline (v1, and
// v1beta2 since Strimzi 0.49).
func (c *converter) targetLayout(name string, s *object) error {
	tgt, err := c.clusterSpec(s.sub("target"), s.take("target"), true)
	if err != nil || tgt == nil {
		return err
	}
	for i, it := range s.list("mirrors") {
		path := fmt.Sprintf("%s[%d]", s.sub("mirrors"), i)
		m := c.newObject(path, it)
		if m == nil {
			continue
		}
		v := m.take("source")
		if v == nil {
			c.unmapped(m.line, m.sub("source"), "missing: every mirror describes its source cluster; mirror not converted")
			m.skip()
			continue
		}
		src, err := c.clusterSpec(m.sub("source"), v, false)
		if err != nil {
			return err
		}
		if src == nil {
			m.skip()
			continue
		}
		if src.alias == tgt.alias {
			c.unmapped(src.line, m.sub("source.alias"), "the source and the target are both %q; mirror not converted", src.alias)
			m.skip()
			continue
		}
		known := mirrorFields
		if c.mirror(m, src.alias, tgt.alias, c.api == apiV1beta2) {
			c.addCluster(src)
			c.addCluster(tgt)
		}
		if c.api == apiV1 {
			known = slices.DeleteFunc(slices.Clone(mirrorFields), func(f string) bool { return f == "heartbeatConnector" })
		}
		m.done(known...)
	}
	return nil
}

// addCluster puts a cluster into the output once. The same alias in two
// resources (the halves of an active-active pair) must mean the same
// cluster: mm2.properties has one definition per alias.
func (c *converter) addCluster(cl *cluster) {
	prev := c.clusters[cl.alias]
	if prev == nil {
		c.clusters[cl.alias] = cl
		c.aliases = append(c.aliases, cl.alias)
		return
	}
	if prev == cl {
		return
	}
	have := map[string]string{}
	for _, p := range prev.props {
		have[p.key] = p.value
	}
	for _, p := range cl.props {
		v, ok := have[p.key]
		switch {
		case !ok:
			prev.props = append(prev.props, p)
		case v != p.value:
			c.unmapped(cl.line, cl.from, "cluster %q is also defined at %s with %s = %q, here %q; mm2.properties has one definition per alias, so the first is kept: make them agree", cl.alias, prev.from, p.key, v, p.value)
		}
	}
}
