package strimzi

import (
	"slices"
)

// mirrorFields are the fields of spec.mirrors[] in either layout.
var mirrorFields = []string{"sourceCluster", "targetCluster", "source", "sourceConnector", "checkpointConnector",
	"heartbeatConnector", "topicsPattern", "topicsBlacklistPattern", "topicsExcludePattern", "groupsPattern",
	"groupsBlacklistPattern", "groupsExcludePattern"}

// Connector config keys that MM2's dedicated mode applies to the whole
// flow, while Strimzi applies a connector's config to that connector only.
var flowWideKeys = []string{"replication.policy.class", "replication.policy.separator", "offset-syncs.topic.location"}

// Strimzi's AbstractConnectorSpec.FORBIDDEN_PARAMETERS.
var forbiddenConnectorKeys = map[string]bool{"name": true, "connector.class": true, "tasks.max": true, "connector.plugin.version": true}

// mirror converts one spec.mirrors[] entry into the flow src->tgt, and
// reports whether there is one.
func (c *converter) mirror(m *object, src, tgt string, heartbeats bool) bool {
	f := &flow{source: src, target: tgt, from: m.path, res: c.resource, origin: map[string]string{}, line: map[string]int{}}
	sc := m.object("sourceConnector")
	cc := m.object("checkpointConnector")
	var hc *object
	if heartbeats {
		hc = m.object("heartbeatConnector")
	} else if m.has("heartbeatConnector") {
		m.unmapped("heartbeatConnector", "not in %s: Strimzi removed the heartbeat connector; Strait emits heartbeats when the flow sets emit.heartbeats.enabled = true, which these properties turn off to match Strimzi", apiV1)
	}
	if sc == nil && hc == nil {
		if cc == nil {
			c.unmapped(m.line, m.path, "no sourceConnector, checkpointConnector or heartbeatConnector: Strimzi runs nothing for this mirror; not converted")
		} else {
			c.unmapped(cc.line, cc.path, "a checkpoint connector without a sourceConnector: MM2 and Strait checkpoint only flows they copy (offset syncs come from the source connector), so this mirror is not converted; add a sourceConnector to replicate %s->%s", src, tgt)
			cc.skip()
		}
		for _, p := range []string{"topicsPattern", "topicsExcludePattern", "topicsBlacklistPattern", "groupsPattern", "groupsExcludePattern", "groupsBlacklistPattern"} {
			m.take(p)
		}
		return false
	}
	if sc != nil {
		c.set(f, "enabled", "true", m.path, m.line)
	}
	if hc != nil {
		c.set(f, "emit.heartbeats.enabled", "true", hc.path, hc.line)
	}
	c.patterns(f, m, "topics", "topicsPattern", "topicsExcludePattern", "topicsBlacklistPattern")
	if sc != nil && cc == nil {
		// Strimzi then runs no checkpoint connector. MM2 (3.9+) rejects
		// emit.checkpoints.enabled = false on a flow it copies; an empty
		// group list checkpoints nothing, which is the same.
		for _, p := range []string{"groupsPattern", "groupsExcludePattern", "groupsBlacklistPattern"} {
			m.note(p, "has no effect: the mirror has no checkpointConnector, so no group is checkpointed")
		}
		c.set(f, "groups", "", m.path, m.line)
	} else {
		c.patterns(f, m, "groups", "groupsPattern", "groupsExcludePattern", "groupsBlacklistPattern")
	}
	from := map[string]bool{}
	for _, conn := range []*object{sc, cc, hc} {
		if conn != nil {
			c.connector(f, conn, from)
		}
	}
	if sc != nil && cc != nil {
		for _, k := range flowWideKeys {
			if o, ok := f.origin[k]; ok && !from[sc.path+"\x00"+k] != !from[cc.path+"\x00"+k] {
				c.note(f.line[k], o, "%s applies to the whole flow %s in mm2.properties; Strimzi gave it to this connector only", k, f.name())
			}
		}
	}
	c.flows = append(c.flows, f)
	return true
}

// patterns maps a mirror's include and exclude patterns. Strimzi's are Java
// regex lists, joined with | and matched whole, as MM2's topics and groups.
func (c *converter) patterns(f *flow, m *object, key, include, exclude, blacklist string) {
	if v, ok := m.scalar(include); ok {
		c.set(f, key, v, m.sub(include), m.lineOf(include))
	}
	ex, hasEx := m.scalar(exclude)
	if hasEx {
		c.set(f, key+".exclude", ex, m.sub(exclude), m.lineOf(exclude))
	}
	if c.api == apiV1beta2 {
		if v, ok := m.scalar(blacklist); ok {
			if hasEx {
				c.note(m.lineOf(blacklist), m.sub(blacklist), "ignored: %s is set too, and Strimzi ignores the deprecated %s then", exclude, blacklist)
			} else {
				c.note(m.lineOf(blacklist), m.sub(blacklist), "deprecated name of %s; converted as %s.exclude", exclude, key)
				c.set(f, key+".exclude", v, m.sub(blacklist), m.lineOf(blacklist))
			}
		}
	}
}

// connector converts one connector spec. from records which connector set
// which key.
func (c *converter) connector(f *flow, o *object, from map[string]bool) {
	if v, ok := o.scalar("tasksMax"); ok {
		// Not written: Strait would only warn that it has no tasks.
		c.note(o.lineOf("tasksMax"), o.sub("tasksMax"), "not written (%s): Strait has no tasks; the processes that run these properties (replicas) share each flow's partitions", v)
	}
	if cfg := o.object("config"); cfg != nil {
		for _, k := range cfg.keys {
			v := cfg.take(k)
			if forbiddenConnectorKeys[k] {
				c.unmapped(cfg.lineOf(k), cfg.sub(k), "Strimzi does not allow this key in a connector's config and ignores it; not converted")
				continue
			}
			if s, ok := c.scalarValue(cfg.sub(k), v); ok {
				from[o.path+"\x00"+k] = true
				c.set(f, k, s, cfg.sub(k), cfg.lineOf(k))
			}
		}
	}
	if v, ok := o.scalar("state"); ok && v != "running" {
		c.unmapped(o.lineOf("state"), o.sub("state"), "state %s: Strait has no paused or stopped connectors, and the converted flow runs; to keep it from copying, remove %s.enabled = true", v, f.name())
	} else if ok {
		c.note(o.lineOf("state"), o.sub("state"), "running is what the converted flow does")
	}
	if c.api == apiV1beta2 {
		if p, ok := o.bool("pause"); ok && p {
			c.unmapped(o.lineOf("pause"), o.sub("pause"), "Strait has no paused connectors, and the converted flow runs; to keep it from copying, remove %s.enabled = true", f.name())
		} else if ok {
			c.note(o.lineOf("pause"), o.sub("pause"), "false is what the converted flow does")
		}
	}
	if ar := o.object("autoRestart"); ar != nil {
		enabled, ok := ar.bool("enabled")
		ar.take("maxRestarts")
		ar.done("enabled", "maxRestarts")
		if ok && !enabled {
			c.note(ar.line, ar.path, "disabled, as in Strait: nothing restarts by itself")
		} else {
			c.unmapped(ar.line, ar.path, "Strait restarts nothing by itself: a partition that stops keeps its error (visible in the log, /metrics and strait status) until the cause is fixed and Strait restarted; a failed flow ends the process, and Kubernetes restarts the pod")
		}
	}
	o.note("version", "the connector plugin version; Strait is the implementation")
	o.unmapped("listOffsets", "Strait has no offsets API: its progress is the consumer group strait-%s on %s (kafka-consumer-groups.sh --describe), and `strait offsets translate` translates a group's offsets", f.source, f.target)
	o.unmapped("alterOffsets", "Strait has no offsets API: its progress is the consumer group strait-%s on %s; with Strait stopped, kafka-consumer-groups.sh --reset-offsets on that group moves it", f.source, f.target)
	o.done("tasksMax", "config", "state", "pause", "autoRestart", "version", "listOffsets", "alterOffsets")
}

// set puts key = value into the flow. Strimzi gives each connector its own
// config, mm2.properties one value per flow: a second, different value is
// unmapped.
func (c *converter) set(f *flow, key, value, from string, line int) {
	if prev, ok := f.origin[key]; ok {
		if f.value(key) != value {
			c.unmapped(line, from, "%s is also set by %s to %q; mm2.properties has one value per flow (%s.%s), so %q is kept: make them agree", key, prev, f.value(key), f.name(), key, f.value(key))
		}
		return
	}
	f.origin[key], f.line[key] = from, line
	f.props = append(f.props, prop{key, value})
}

func (f *flow) value(key string) string {
	i := slices.IndexFunc(f.props, func(p prop) bool { return p.key == key })
	if i < 0 {
		return ""
	}
	return f.props[i].value
}
