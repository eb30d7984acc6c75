package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// LoadOptions are the inputs of Load and Parse besides the file itself.
// The function fields let tests replace the environment and the file system;
// nil means the real one.
type LoadOptions struct {
	// Clusters is the --clusters selection: keep only the flows whose target
	// is one of these aliases (MM2's dedicated mode). Empty keeps every flow.
	Clusters []string
	// Env looks up ${env:NAME} references; default os.LookupEnv.
	Env func(name string) (string, bool)
	// ReadFile reads ${file:...} and ${dir:...} references and, in Load, the
	// configuration file itself; default os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Stat checks that ssl.*.location files exist; default os.Stat.
	Stat func(path string) (fs.FileInfo, error)
	// Overlays are keys given besides the file, read after it in order:
	// the per-cluster files and flags of the MM2 guide's command line.
	Overlays []Overlay
}

func (o LoadOptions) withDefaults() LoadOptions {
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	if o.Stat == nil {
		o.Stat = os.Stat
	}
	return o
}

// Load reads an MM2 properties file and resolves it as Parse does. When the
// file cannot be read it returns a nil Config and an *Errors.
func Load(path string, opts LoadOptions) (*Config, error) {
	opts = opts.withDefaults()
	data, err := opts.ReadFile(path)
	if err != nil {
		return nil, &Errors{{File: path, Message: readError(path, err).Error()}}
	}
	return Parse(path, data, opts)
}

// Parse reads MM2 properties from data and resolves them into a Config with
// MM2's precedence rules (spec §1.5), applying every check that `strait
// check` reports. name is used in messages (usually the file path).
//
// Every problem is collected: the error, if any, is an *Errors listing each
// one with its key and line. The Config is returned even then, resolved as
// far as possible, so that a caller can show its warnings and Describe it;
// it must not be run.
func Parse(name string, data []byte, opts LoadOptions) (*Config, error) {
	opts = opts.withDefaults()
	l := &loader{
		opts:         opts,
		rep:          newReport(name),
		cfg:          &Config{Path: name, Cluster: map[string]*Cluster{}, secrets: map[string]bool{}},
		clusterCache: map[string]props{},
	}
	l.load(data)
	errs, warnings := l.rep.sorted()
	l.cfg.Warnings = warnings
	if len(errs) > 0 {
		return l.cfg, &errs
	}
	return l.cfg, nil
}

// loader holds the state of one Parse.
type loader struct {
	opts         LoadOptions
	rep          *report
	cfg          *Config
	raw          props    // every key of the file, after provider resolution
	order        []*entry // the same entries in line order
	aliases      []string // valid, distinct aliases in file order
	aliasSet     map[string]bool
	clusterCache map[string]props
}

func (l *loader) load(data []byte) {
	l.raw, l.order = fileEntries(data,
		func(line int, err error) {
			l.rep.errorf(Origin{Line: line}, "cannot parse the line: %v", err)
		},
		func(first, again *entry) {
			l.rep.warnf(again.origin(), "the key is set again; this value replaces the one on line %d (the last one wins, as in MM2)", first.line)
		})
	l.overlay()

	res := newResolver(l.rep, &l.opts, l.raw)
	for _, e := range l.order {
		res.resolve(e)
		if e.secret {
			l.cfg.secrets[e.key] = true
		}
	}

	l.readClusters()
	l.scanKeys()
	l.readNode()
	if len(l.aliases) == 0 {
		l.checkFiles()
		return
	}
	for _, a := range l.aliases {
		l.cfg.Cluster[a] = l.cluster(a)
	}
	all := l.flows()
	l.checkBootstrap(all)
	l.checkFiles()
	l.selectFlows(all)
	l.warnNotHonoured(l.cfg.Flows) // about the flows this node runs
}

// readClusters parses the `clusters` list.
func (l *loader) readClusters() {
	l.aliasSet = map[string]bool{}
	ce := l.raw["clusters"]
	if ce == nil {
		l.rep.errorf(Origin{Key: "clusters"}, "missing: list the cluster aliases, e.g. clusters = A, B")
		return
	}
	list := parseList(ce.trimmed())
	if len(list) == 0 {
		l.rep.errorf(ce.origin(), "empty: list the cluster aliases, e.g. clusters = A, B")
		return
	}
	for _, a := range list {
		switch {
		case a == "":
			l.rep.errorf(ce.origin(), "empty alias in the list: remove the extra comma")
			continue
		case l.aliasSet[a]:
			l.rep.errorf(ce.origin(), "alias %q is listed twice: list each cluster once", a)
			continue
		case strings.Contains(a, "->"):
			l.rep.errorf(ce.origin(), `alias %q contains "->", which separates source and target in flow keys: rename the cluster`, a)
			continue
		case strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' }):
			l.rep.errorf(ce.origin(), "alias %q contains whitespace: rename the cluster", a)
			continue
		}
		l.aliasSet[a] = true
		l.aliases = append(l.aliases, a)
		l.cfg.Clusters = append(l.cfg.Clusters, a)
	}
	// An alias that contains the separator breaks remote topic names and
	// MM2's cycle detection (KAFKA-9914). Check every separator in use.
	seps := map[string]bool{".": true}
	if e := l.raw["replication.policy.separator"]; e != nil {
		seps = map[string]bool{e.value: true}
	}
	for _, s := range l.aliases {
		for _, t := range l.aliases {
			if e := l.raw[s+"->"+t+".replication.policy.separator"]; e != nil {
				seps[e.value] = true
			}
		}
	}
	for _, a := range l.aliases {
		for _, sep := range slices.Sorted(maps.Keys(seps)) {
			if sep != "" && strings.Contains(a, sep) {
				l.rep.errorf(ce.origin(), "alias %q contains the replication separator %q: remote topics would be named like %q and MM2's cycle detection would misread them (KAFKA-9914); rename the cluster or choose another replication.policy.separator",
					a, sep, a+sep+"orders")
				break
			}
		}
	}
}

// clusterProps is MirrorMakerConfig.clusterProps: the keys under
// `<alias>.`, then connection keys copied put-if-absent into producer.,
// consumer. and admin., first from the cluster scope, then from the top
// level. So a consumer connection key resolves as c.consumer.k > c.k > k.
func (l *loader) clusterProps(alias string) props {
	if p, ok := l.clusterCache[alias]; ok {
		return p
	}
	p := l.raw.stripped(alias + ".")
	for _, k := range connectionKeyList {
		if e := p[k]; e != nil {
			p.putIfAbsent("producer."+k, e)
			p.putIfAbsent("consumer."+k, e)
			p.putIfAbsent("admin."+k, e)
		}
	}
	for _, k := range connectionKeyList {
		if e := l.raw[k]; e != nil {
			p.putIfAbsent("producer."+k, e)
			p.putIfAbsent("consumer."+k, e)
			p.putIfAbsent("admin."+k, e)
			p.putIfAbsent(k, e)
		}
	}
	l.clusterCache[alias] = p
	return p
}

// cluster resolves one alias's connection settings.
func (l *loader) cluster(alias string) *Cluster {
	cp := l.clusterProps(alias)
	c := &Cluster{Alias: alias, SecurityProtocol: "PLAINTEXT"}
	if e := cp["bootstrap.servers"]; e != nil {
		c.BootstrapServers = bootstrapList(e.trimmed())
		for _, s := range c.BootstrapServers {
			if err := checkHostPort(s); err != nil {
				l.rep.errorf(e.origin(), "bootstrap server %s %v: write host:port[,host:port...]", showPart(e, s), err)
			}
		}
	}
	if e := cp["security.protocol"]; e != nil {
		if p, ok := securityProtocol(e.trimmed()); ok {
			c.SecurityProtocol = p
		} else {
			l.rep.errorf(e.origin(), "security.protocol %s is not valid: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", e.show())
		}
	}
	connection := cp.only(connectionKeys)
	c.Admin = l.buildClient(alias, "", []layer{{"", connection}, {alias + ".admin.", cp.stripped("admin.")}}, nil)
	c.Consumer = l.buildClient(alias, "", []layer{{"", connection}, {alias + ".consumer.", cp.stripped("consumer.")}}, nil)
	c.Producer = l.buildClient(alias, "", []layer{{"", connection}, {alias + ".producer.", cp.stripped("producer.")}}, nil)
	for _, cl := range []Client{c.Admin, c.Consumer, c.Producer} {
		l.checkClient(cl)
	}
	return c
}

// showPart shows part of a value, unless the value is secret.
func showPart(e *entry, s string) string {
	if e.secret {
		return "[redacted]"
	}
	return fmt.Sprintf("%q", s)
}

func securityProtocol(s string) (string, bool) {
	u := strings.ToUpper(s)
	switch u {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		return u, true
	}
	return "", false
}

// only returns the keys of p that are in keys.
func (p props) only(keys map[string]bool) props {
	out := props{}
	for k, e := range p {
		if keys[k] {
			out[k] = e
		}
	}
	return out
}

// herder reports whether MM2's driver creates a herder for s->t
// (MirrorMakerConfig.clusterPairs): s->t.enabled is true, or heartbeats are
// enabled for the pair. The driver reads both with Boolean.parseBoolean on
// the raw value, untrimmed.
func (l *loader) herder(s, t string) bool {
	prefix := s + "->" + t + "."
	if e := l.raw[prefix+"enabled"]; e != nil && parseBoolean(e.value) {
		return true
	}
	hb := true
	if e := l.raw["emit.heartbeats.enabled"]; e != nil {
		hb = parseBoolean(e.value)
	}
	if e := l.raw[prefix+"emit.heartbeats.enabled"]; e != nil {
		hb = parseBoolean(e.value)
	}
	return hb
}

// checkBootstrap requires bootstrap.servers for every cluster an enabled
// flow reads or writes, and warns for clusters only heartbeats would use.
func (l *loader) checkBootstrap(all []*Flow) {
	for _, a := range l.aliases {
		if len(l.cfg.Cluster[a].BootstrapServers) > 0 {
			continue
		}
		var enabled, heartbeat []string
		for _, f := range all {
			if f.Source == a || f.Target == a {
				if f.Enabled {
					enabled = append(enabled, f.Name())
				} else if f.Target == a {
					heartbeat = append(heartbeat, f.Name())
				}
			}
		}
		o := Origin{Key: a + ".bootstrap.servers"}
		if e := l.clusterProps(a)["bootstrap.servers"]; e != nil {
			o = e.origin()
		}
		switch {
		case len(enabled) > 0:
			l.rep.errorf(o, "missing: cluster %q is used by enabled flow %s; set %s.bootstrap.servers = host:port[,host:port...]",
				a, strings.Join(enabled, ", "), a)
		case len(heartbeat) > 0:
			l.rep.warnf(o, "missing: cluster %q has no bootstrap servers, so heartbeats into it (%s) cannot be emitted; set %s.bootstrap.servers, or emit.heartbeats.enabled = false",
				a, strings.Join(heartbeat, ", "), a)
		}
	}
}

// checkFiles checks that every ssl.*.location names an existing file.
func (l *loader) checkFiles() {
	for _, e := range l.order {
		if !strings.HasSuffix(e.key, "ssl.truststore.location") && !strings.HasSuffix(e.key, "ssl.keystore.location") && e.key != keyAPITLSCert && e.key != keyAPITLSKey {
			continue
		}
		path := e.trimmed()
		if path == "" {
			continue
		}
		fi, err := l.opts.Stat(path)
		name := showPart(e, path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.rep.errorf(e.origin(), "file %s does not exist: fix the path or remove the key", name)
		case errors.Is(err, fs.ErrPermission):
			l.rep.errorf(e.origin(), "file %s is not readable by this user: fix its permissions", name)
		case err != nil && e.secret:
			l.rep.errorf(e.origin(), "cannot check file %s", name)
		case err != nil:
			l.rep.errorf(e.origin(), "cannot check file %s: %v", name, err)
		case fi.IsDir():
			l.rep.errorf(e.origin(), "%s is a directory, not a key store file: name the file", name)
		}
	}
}

// selectFlows applies --clusters and the checks on the set of flows.
func (l *loader) selectFlows(all []*Flow) {
	names := func(fs []*Flow) string {
		var n []string
		for _, f := range fs {
			n = append(n, f.Name())
		}
		return strings.Join(n, ", ")
	}
	if len(all) == 0 {
		hint := fmt.Sprintf("Every pair is disabled and heartbeats are off; set e.g. %s->%s.enabled = true", l.aliases[0], l.aliases[len(l.aliases)-1])
		if len(l.aliases) < 2 {
			hint = fmt.Sprintf("The clusters key lists only %q; list at least two clusters", l.aliases[0])
		}
		l.rep.errorf(Origin{}, "No source->target replication flows. %s", hint)
		return
	}
	var enabled []*Flow
	for _, f := range all {
		if f.Enabled {
			enabled = append(enabled, f)
		}
	}
	markReverse(all)
	for _, f := range all {
		if f.Enabled && f.PreserveOffsets && f.ReverseEnabled && f.Policy.Class == IdentityPolicyClass {
			l.rep.errorf(f.Origins[keyPreserve], "%s = true on %s cannot keep offsets with %s->%s enabled and IdentityReplicationPolicy: each remote topic on %s is also the topic that %s->%s copies from and applications on %s write to, so it does not hold %s's records alone; use DefaultReplicationPolicy (remote topics named %s.<topic>) or disable %s->%s",
				keyPreserve, f.Name(), f.Target, f.Source, f.Target, f.Target, f.Source, f.Target, f.Source, f.Source, f.Target, f.Source)
		}
	}
	if c := nameCycle(all); c != "" {
		l.rep.errorf(Origin{}, "the enabled flows %s form a cycle, and a policy other than DefaultReplicationPolicy, or strait.rename.rules, may keep topic names on it: records would be copied round forever (Strait breaks only two-way pairs such as A->B with B->A). Disable one flow of the cycle, or use DefaultReplicationPolicy without rename rules on it", c)
	}
	if len(enabled) == 0 {
		l.rep.warnf(Origin{}, "no flow is enabled: MM2 and Strait replicate data only for pairs with `<source>-><target>.enabled = true`; add e.g. `%s->%s.enabled = true`",
			all[0].Source, all[0].Target)
	}
	selected := all
	if len(l.opts.Clusters) > 0 {
		want := map[string]bool{}
		for _, c := range l.opts.Clusters {
			if !l.aliasSet[c] {
				l.rep.errorf(Origin{}, "--clusters names %q, which is not in clusters (%s)", c, strings.Join(l.aliases, ", "))
			}
			want[c] = true
		}
		selected = nil
		for _, f := range all {
			if want[f.Target] {
				selected = append(selected, f)
			}
		}
		if len(selected) == 0 {
			l.rep.errorf(Origin{}, "No source->target replication flows. --clusters %s keeps only the flows whose target it names, and none does (flows: %s)",
				strings.Join(l.opts.Clusters, " "), names(all))
			return
		}
		n := 0
		for _, f := range selected {
			if f.Enabled {
				n++
			}
		}
		if n == 0 && len(enabled) > 0 {
			l.rep.warnf(Origin{}, "--clusters %s selects only heartbeat flows (%s): this node replicates no data; the enabled flows are %s",
				strings.Join(l.opts.Clusters, " "), names(selected), names(enabled))
		}
	}
	l.cfg.Flows = selected
}
