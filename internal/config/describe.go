package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Describe prints the resolved configuration for humans (`strait check`):
// the clusters, every flow this node runs with its effective settings and
// where each came from, each client role's properties, and the warnings.
// Secret values print as [redacted]. The output is deterministic.
func (c *Config) Describe(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }

	p("Configuration %s", c.Path)
	p("")
	p("Clusters:")
	for _, a := range c.Clusters {
		cl := c.Cluster[a]
		if cl == nil {
			continue
		}
		bs := bootstrapShown(cl)
		if bs == "" {
			bs = "(none)"
		}
		p("  %s\tbootstrap.servers=%s\tsecurity.protocol=%s", a, bs, cl.SecurityProtocol)
	}
	if len(c.Flows) == 0 {
		p("")
		p("Flows: none")
	}
	for _, f := range c.Flows {
		p("")
		if f.Enabled {
			p("Flow %s: enabled", f.Name())
		} else {
			p("Flow %s: heartbeats only (%s.enabled is not true)", f.Name(), f.Name())
		}
		for _, s := range c.settings(f) {
			p("  %s\t%s  (%s)", s.key, s.value, s.from)
		}
		for _, r := range flowRoles(f) {
			p("  %s (%s):", r.name, r.client.Cluster)
			for _, cp := range r.client.Props {
				p("    %s\t%s  (%s)", cp.Key, cp.Display(), originText(cp.Origin))
			}
		}
	}
	p("")
	if len(c.Warnings) == 0 {
		p("Warnings: none")
		return
	}
	p("Warnings:")
	for _, wn := range c.Warnings {
		// Warnings are single lines; keep tabwriter out of them.
		p("  %s", strings.ReplaceAll(wn.String(), "\t", " "))
	}
}

// bootstrapShown is a cluster's bootstrap list for humans: [redacted] when
// a config provider supplied it.
func bootstrapShown(cl *Cluster) string {
	if o, ok := cl.Consumer.Prop("bootstrap.servers"); ok && o.Secret {
		return "[redacted]"
	}
	return strings.Join(cl.BootstrapServers, ",")
}

type role struct {
	name   string
	client Client
}

// flowRoles lists the clients a flow uses: a heartbeat-only flow only
// writes heartbeats to its target.
func flowRoles(f *Flow) []role {
	if !f.Enabled {
		return []role{{"target producer", f.TargetProducer}, {"target admin", f.TargetAdmin}}
	}
	return []role{
		{"source consumer", f.SourceConsumer}, {"source admin", f.SourceAdmin},
		{"source producer", f.SourceProducer}, {"target producer", f.TargetProducer},
		{"target admin", f.TargetAdmin}, {"target consumer", f.TargetConsumer},
	}
}

type setting struct{ key, value, from string }

// settings lists a flow's effective settings by MM2 key.
func (c *Config) settings(f *Flow) []setting {
	var out []setting
	ignored := map[string]bool{}
	if f.Enabled {
		for _, u := range notHonoured(f) {
			ignored[u.key] = true
		}
	}
	add := func(key, value string, def ...string) {
		from := "default"
		if len(def) > 0 {
			from = def[0]
		}
		if o, ok := f.Origins[key]; ok {
			from = originText(o)
			if c.secrets[o.Key] {
				value = "[redacted]"
			}
		}
		if ignored[key] {
			from += "; not honoured, see Warnings"
		}
		out = append(out, setting{key, value, from})
	}
	// decided says where a value that other keys decide came from; a
	// secret among them hides the value.
	decided := func(value string, origins ...Origin) (string, string) {
		var texts []string
		for _, o := range origins {
			texts = append(texts, originText(o))
			if c.secrets[o.Key] {
				value = "[redacted]"
			}
		}
		return value, strings.Join(texts, "; ")
	}
	b := strconv.FormatBool
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	i := func(v int) string { return strconv.Itoa(v) }
	list := func(l []string) string {
		if len(l) == 0 {
			return "(empty: matches nothing)"
		}
		return strings.Join(l, ", ")
	}
	sched := func(feature string, on bool, every time.Duration, def ...string) {
		add(feature+".enabled", b(on))
		add(feature+".interval.seconds", seconds(every), def...)
	}

	if !f.Enabled {
		sched("emit.heartbeats", f.EmitHeartbeatsEnabled, f.EmitHeartbeatsInterval)
		add("heartbeats.topic.replication.factor", i(f.HeartbeatsTopicReplicationFactor))
		return out
	}
	add("replication.policy.class", f.Policy.Class)
	add("replication.policy.separator", strconv.Quote(f.Policy.Separator))
	add("replication.policy.internal.topic.separator.enabled", b(f.Policy.InternalSeparatorEnabled))
	rules := "(none)"
	if f.Policy.Rules != nil {
		rules = f.Policy.Rules.String()
	}
	add(keyRenameRules, rules)
	add("topics", list(f.Topics))
	add("topics.exclude", list(f.TopicsExclude))
	add("replication.factor", i(f.ReplicationFactor))
	sched("refresh.topics", f.RefreshTopicsEnabled, f.RefreshTopicsInterval, "Strait default; MM2: 600s")
	sched("sync.topic.configs", f.SyncTopicConfigsEnabled, f.SyncTopicConfigsInterval)
	add("config.properties.exclude", list(f.ConfigPropertiesExclude))
	add("use.defaults.from", f.UseDefaultsFrom)
	sched("sync.topic.acls", f.SyncTopicACLsEnabled, f.SyncTopicACLsInterval)
	add("heartbeats.replication.enabled", b(f.HeartbeatsReplication))
	add("emit.offset-syncs.enabled", b(f.EmitOffsetSyncsEnabled))
	add("offset-syncs.topic.location", f.OffsetSyncsTopicLocation)
	add("offset-syncs.topic.replication.factor", i(f.OffsetSyncsTopicReplicationFactor))
	add("offset.lag.max", strconv.FormatInt(f.OffsetLagMax, 10))
	add("groups", list(f.Groups))
	add("groups.exclude", list(f.GroupsExclude))
	sched("refresh.groups", f.RefreshGroupsEnabled, f.RefreshGroupsInterval, "Strait default; MM2: 600s")
	sched("emit.checkpoints", f.EmitCheckpointsEnabled, f.EmitCheckpointsInterval, "Strait default; MM2: 60s")
	sched("sync.group.offsets", f.SyncGroupOffsetsEnabled, f.SyncGroupOffsetsInterval, "Strait default; MM2: 60s")
	add("checkpoints.topic.replication.factor", i(f.CheckpointsTopicReplicationFactor))
	sched("emit.heartbeats", f.EmitHeartbeatsEnabled, f.EmitHeartbeatsInterval)
	add("heartbeats.topic.replication.factor", i(f.HeartbeatsTopicReplicationFactor))
	add("tasks.max", i(f.TasksMax))
	add("admin.timeout.ms", strconv.FormatInt(f.AdminTimeout.Milliseconds(), 10))
	add("offset.flush.interval.ms", strconv.FormatInt(f.FlushInterval.Milliseconds(), 10), "Strait default; Connect: 60000")
	add("exactly.once.source.support", f.ExactlyOnceSourceSupport)
	if f.ExactlyOnce {
		// strait.exactly.once shows the mode, and the keys that turn it on.
		var on []Origin
		if o, ok := f.Origins["exactly.once.source.support"]; ok && f.ExactlyOnceSourceSupport == "enabled" {
			on = append(on, o)
		}
		if o, ok := f.Origins[keyExactlyOnce]; ok {
			on = append(on, o)
		}
		v, fr := decided("true", on...)
		out = append(out, setting{keyExactlyOnce, v, fr})
		add("transaction.boundary", f.TransactionBoundary)
		o, ok := f.Origins["transaction.boundary.interval.ms"]
		if ok && f.TransactionBoundary == "interval" {
			v, fr = decided(ms(f.TransactionInterval), o)
		} else {
			v, fr = ms(f.TransactionInterval), "offset.flush.interval.ms, Strait default"
			if fo, fok := f.Origins["offset.flush.interval.ms"]; fok {
				v, fr = decided(v, fo)
			}
			if ok {
				fr += "; " + o.Key + " has no effect, see Warnings"
			}
		}
		out = append(out, setting{"transaction.boundary.interval.ms", v, fr})
		add("transaction.timeout.ms", ms(f.TransactionTimeout), "Strait default; Java producer: 60000")
	} else if _, ok := f.Origins[keyExactlyOnce]; ok {
		// Off by default shows as exactly.once.source.support above
		// (disabled or preparing).
		add(keyExactlyOnce, "false")
	}
	add("exactly.once.support", f.ExactlyOnceSupport)
	add("offset.storage.topic", f.OffsetStorageTopic)
	throttle := "unlimited"
	if f.ThrottleBytesPerSecond > 0 {
		throttle = strconv.FormatInt(f.ThrottleBytesPerSecond, 10)
	}
	add(keyThrottle, throttle)
	add(keyFastPath, b(f.FastPath))
	add(keyIndexMaxSegments, i(f.IndexMaxSegments))
	add(keyTopicDeletion, b(f.SyncTopicDeletion))
	add("session.timeout.ms", strconv.FormatInt(f.SessionTimeout.Milliseconds(), 10))
	add("heartbeat.interval.ms", strconv.FormatInt(f.HeartbeatInterval.Milliseconds(), 10))
	add("rebalance.timeout.ms", strconv.FormatInt(f.RebalanceTimeout.Milliseconds(), 10))
	add(keyGroupACLs, b(f.SyncGroupACLs))
	add(keyPreserve, b(f.PreserveOffsets))
	if f.PreserveOffsets {
		add(keyPreserveTopics, strings.Join(f.PreserveTopics, ","))
		add(keyRefuseGaps, strings.Join(f.RefuseGaps, ","))
	}
	return out
}

func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// MM2Value is the setting's value as MM2 writes it: the view shows a
// *.seconds key's value as a duration for people ("5s", by seconds), MM2
// and Connect as a number of seconds.
func (s SettingView) MM2Value() string {
	if !strings.HasSuffix(s.Key, ".seconds") {
		return s.Value
	}
	d, err := time.ParseDuration(s.Value)
	if err != nil {
		return s.Value // [redacted], or not written by seconds
	}
	return strconv.FormatInt(int64(d/time.Second), 10)
}

// originText says where a value came from, for Describe.
func originText(o Origin) string {
	switch {
	case o.Line == 0:
		return "default"
	case o.File != "":
		return fmt.Sprintf("%s line %d: %s", o.File, o.Line, o.Key)
	}
	return fmt.Sprintf("line %d: %s", o.Line, o.Key)
}

// View is the resolved configuration as data, for the REST API: what
// Describe prints, with the same redaction.
type View struct {
	Path     string                 `json:"path"`
	Clusters map[string]ClusterView `json:"clusters"`
	Flows    []FlowView             `json:"flows"`
	Warnings []string               `json:"warnings"`
}

// ClusterView is one cluster of a View.
type ClusterView struct {
	BootstrapServers string `json:"bootstrap.servers"`
	SecurityProtocol string `json:"security.protocol"`
}

// FlowView is one flow of a View: its effective settings and each client
// role's properties, by key, with where each came from.
type FlowView struct {
	Name     string                   `json:"name"`
	Enabled  bool                     `json:"enabled"`
	Settings []SettingView            `json:"settings"`
	Clients  map[string][]SettingView `json:"clients"`
}

// SettingView is one key's effective value and origin.
type SettingView struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	From  string `json:"from"`
}

// View returns the resolved configuration with every secret redacted.
func (c *Config) View() View {
	v := View{Path: c.Path, Clusters: map[string]ClusterView{}, Flows: []FlowView{}, Warnings: []string{}}
	for _, a := range c.Clusters {
		cl := c.Cluster[a]
		if cl == nil {
			continue
		}
		v.Clusters[a] = ClusterView{BootstrapServers: bootstrapShown(cl), SecurityProtocol: cl.SecurityProtocol}
	}
	for _, f := range c.Flows {
		fv := FlowView{Name: f.Name(), Enabled: f.Enabled, Settings: []SettingView{}, Clients: map[string][]SettingView{}}
		for _, s := range c.settings(f) {
			fv.Settings = append(fv.Settings, SettingView{s.key, s.value, s.from})
		}
		for _, r := range flowRoles(f) {
			props := []SettingView{}
			for _, cp := range r.client.Props {
				props = append(props, SettingView{cp.Key, cp.Display(), originText(cp.Origin)})
			}
			fv.Clients[r.name] = props
		}
		v.Flows = append(v.Flows, fv)
	}
	for _, w := range c.Warnings {
		v.Warnings = append(v.Warnings, w.String())
	}
	return v
}
