package config

import (
	"fmt"
	"strings"
)

// scanKeys looks at every key once: where it belongs (top level, cluster
// scope `<alias>.`, flow scope `<src>-><tgt>.`), whether MM2 reads it there,
// and whether it is a known, deprecated or mistyped name.
func (l *loader) scanKeys() {
	for _, e := range l.order {
		switch {
		case l.scanFlowKey(e):
		case l.scanClusterKey(e):
		default:
			l.scanTopKey(e)
		}
	}
}

func (l *loader) aliasList() string { return strings.Join(l.aliases, ", ") }

// example returns an example flow name for hints.
func (l *loader) example(source string) (string, string) {
	s, t := "<source>", "<target>"
	if len(l.aliases) >= 2 {
		s, t = l.aliases[0], l.aliases[1]
	}
	if source != "" {
		s = source
		for _, a := range l.aliases {
			if a != source {
				t = a
				break
			}
		}
	}
	return s, t
}

// scanFlowKey handles keys containing "->".
func (l *loader) scanFlowKey(e *entry) bool {
	k := e.key
	i := strings.Index(k, "->")
	if i < 0 {
		return false
	}
	// The longest known pair prefix wins.
	var s, t string
	for _, a := range l.aliases {
		for _, b := range l.aliases {
			p := a + "->" + b + "."
			if strings.HasPrefix(k, p) && len(p) > len(s)+len(t)+3 {
				s, t = a, b
			}
		}
	}
	if s == "" {
		if len(l.aliases) == 0 {
			return true // no clusters: already an error
		}
		src := k[:i]
		tgt, _, hasDot := strings.Cut(k[i+2:], ".")
		if !hasDot {
			l.rep.errorf(e.origin(), "a flow key needs a setting after the pair, e.g. %s.enabled", k)
			return true
		}
		var bad []string
		for _, a := range []string{src, tgt} {
			if !l.aliasSet[a] {
				msg := fmt.Sprintf("%q", a)
				if c := l.closestAlias(a); c != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", c)
				}
				bad = append(bad, msg)
			}
		}
		l.rep.errorf(e.origin(), "unknown cluster alias %s in a flow key: clusters lists %s", strings.Join(bad, " and "), l.aliasList())
		return true
	}
	rest := k[len(s)+len(t)+3:]
	if s == t {
		l.rep.errorf(e.origin(), "source and target are the same cluster %q: a flow copies between two different clusters", s)
		return true
	}
	l.checkFlowSetting(e, s, t, rest)
	return true
}

func (l *loader) closestAlias(a string) string {
	best, bestD := "", 3
	for _, c := range l.aliases {
		if len(a)-len(c) > 2 || len(c)-len(a) > 2 {
			continue
		}
		if d := editDistance(a, c); d < bestD && d < len([]rune(c)) {
			best, bestD = c, d
		}
	}
	return best
}

func (l *loader) checkFlowSetting(e *entry, s, t, rest string) {
	flow := s + "->" + t + "."
	switch {
	case rest == "enabled", rest == "emit.heartbeats.enabled":
		l.checkRawBool(e)
	case nodeKeys[rest]:
		l.rep.warnf(e.origin(), "has no effect: %s is a setting of the whole process; set it at the top level, without the %s prefix", rest, flow)
	case connectionKeys[rest]:
		l.rep.warnf(e.origin(), "has no effect: MM2's clients take connection settings from the clusters, not from a flow; set %s.%s or %s.%s",
			s, rest, t, rest)
	case connectorKeys[rest], flowOnlyKeys[rest], straitKeys[rest]:
		l.checkConnectorKey(e, rest)
	case whitelistAliases[rest] != "", removedKeys[rest] != "":
		l.checkConnectorKey(e, rest)
	case strings.HasPrefix(rest, "producer.override."):
		l.checkClientKey(e, "producer", strings.TrimPrefix(rest, "producer.override."), flow+"producer.override.")
	case strings.HasPrefix(rest, "consumer.override."), strings.HasPrefix(rest, "admin.override."):
		l.rep.warnf(e.origin(), "has no effect: MM2's connectors build their own consumers and admin clients; set %sconsumer.* or %sadmin.* instead", flow, flow)
	case strings.HasPrefix(rest, "transforms."), strings.HasPrefix(rest, "predicates."), strings.HasPrefix(rest, "topic.creation."):
		l.checkConnectorKey(e, rest)
	default:
		for _, side := range []string{"", "source.", "target."} {
			for _, role := range []string{"consumer", "producer", "admin"} {
				if k, ok := strings.CutPrefix(rest, side+role+"."); ok {
					l.checkClientKey(e, role, k, flow+side+role+".")
					return
				}
			}
			if side == "" {
				continue
			}
			if k, ok := strings.CutPrefix(rest, side+"cluster."); ok {
				if !connectionKeys[k] {
					l.rep.warnf(e.origin(), "has no effect: MM2's clients take only connection settings (bootstrap.servers, security.protocol, ssl.*, sasl.*) from %scluster.*", side)
				}
				return
			}
		}
		if workerKeys[rest] {
			l.rep.warnf(e.origin(), "has no effect: %s is a Connect worker setting, which MM2 reads per target cluster; set %s.%s", rest, t, rest)
			return
		}
		l.unknown(e, flow, rest, connectorKeys, flowOnlyKeys, straitKeys)
	}
}

// scanClusterKey handles keys under `<alias>.`.
func (l *loader) scanClusterKey(e *entry) bool {
	alias := ""
	for _, a := range l.aliases {
		if strings.HasPrefix(e.key, a+".") && len(a) > len(alias) {
			alias = a
		}
	}
	if alias == "" || connectionKeys[e.key] || connectorKeys[e.key] || driverKeys[e.key] {
		return false // an alias such as "ssl" must not hide a top-level key
	}
	rest := e.key[len(alias)+1:]
	switch {
	case rest == "transforms" || strings.HasPrefix(rest, "transforms."):
		// MM2 ignores transforms per cluster, but whoever wrote them
		// wanted records changed: refuse them as at any other scope.
		l.checkTransforms(e, rest)
	case converterKeys[rest]:
		// A worker setting of the herders whose target is alias.
		l.checkConverter(e)
	case connectionKeys[rest], workerKeys[rest], hasAnyPrefix(rest, workerKeyPrefixes):
		// Connection keys reach every client; worker keys configure the
		// herders whose target is alias.
	case nodeKeys[rest]:
		l.rep.warnf(e.origin(), "has no effect: %s is a setting of the whole process; set it at the top level, without the %s. prefix", rest, alias)
	case straitKeys[rest]:
		s, t := l.example(alias)
		l.rep.warnf(e.origin(), "has no effect: Strait reads %s at the top level or per flow (%s->%s.%s), not per cluster", rest, s, t, rest)
	case connectorKeys[rest], flowOnlyKeys[rest], whitelistAliases[rest] != "", deprecatedAliases[rest] != "":
		s, t := l.example(alias)
		l.rep.warnf(e.origin(), "has no effect: MM2 reads connector settings at the top level or per flow, not per cluster; set %s or %s->%s.%s",
			rest, s, t, rest)
	default:
		for _, role := range []string{"consumer", "producer", "admin"} {
			if k, ok := strings.CutPrefix(rest, role+"."); ok {
				l.checkClientKey(e, role, k, alias+"."+role+".")
				return true
			}
		}
		if anyClientKeys[rest] {
			role := "consumer"
			if clientKeys["producer"][rest] {
				role = "producer"
			}
			l.rep.warnf(e.origin(), "has no effect: MM2 passes only connection settings (bootstrap.servers, security.protocol, ssl.*, sasl.*) from a cluster to its clients; set %s.%s.%s",
				alias, role, rest)
			return true
		}
		l.unknown(e, alias+".", rest, connectionKeys, workerKeys)
	}
	return true
}

// scanTopKey handles keys with no alias prefix.
func (l *loader) scanTopKey(e *entry) {
	k := e.key
	s, t := l.example("")
	switch {
	case k == "enabled":
		l.rep.warnf(e.origin(), "a top-level enabled applies to every pair MM2 creates (all ordered pairs while heartbeats are on); set %s->%s.enabled = true for each flow instead",
			s, t)
	case k == "emit.heartbeats.enabled":
		l.checkRawBool(e)
	case straitKeys[k], connectorKeys[k], strings.HasPrefix(k, "transforms."), strings.HasPrefix(k, "predicates."):
		l.checkConnectorKey(e, k)
	case nodeKeys[k]:
		// readNode
	case driverKeys[k], connectionKeys[k], strings.HasPrefix(k, "config.providers."):
	case hasAnyPrefix(k, workerPrefixes):
		// Copied into every herder's worker config.
	case whitelistAliases[k] != "":
		l.checkConnectorKey(e, k)
	case flowOnlyKeys[k]:
		l.rep.warnf(e.origin(), "has no effect at the top level: MM2 reads %s only per flow; set %s->%s.%s", k, s, t, k)
	case workerKeys[k]:
		l.rep.warnf(e.origin(), "has no effect at the top level: %s is a Connect worker setting, which MM2 reads per target cluster; set %s.%s", k, t, k)
	case strings.HasPrefix(k, "producer.override."):
		l.rep.warnf(e.origin(), "has no effect at the top level: set it per flow, e.g. %s->%s.%s", s, t, k)
	case strings.HasPrefix(k, "consumer."), strings.HasPrefix(k, "producer."), strings.HasPrefix(k, "admin."):
		l.rep.warnf(e.origin(), "has no effect: MM2 ignores client settings at the top level; use <alias>.%s for the cluster it should apply to (e.g. %s.%s)", k, s, k)
	default:
		// A cluster key with a mistyped or unlisted alias?
		if p, rest, ok := strings.Cut(k, "."); ok && (connectionKeys[rest] || workerKeys[rest] || isClientPrefixed(rest)) && !strings.Contains(p, "->") {
			if c := l.closestAlias(p); c != "" {
				l.rep.warnf(e.origin(), "unknown key, ignored: %q is not in clusters (%s); did you mean %q?", p, l.aliasList(), c+"."+rest)
				return
			}
			list := l.aliasList()
			if list == "" {
				list = "none are listed"
			}
			l.rep.warnf(e.origin(), "unknown key, ignored: %q is not in clusters (%s)", p, list)
			return
		}
		l.unknown(e, "", k, connectorKeys, flowOnlyKeys, driverKeys, straitKeys)
	}
}

// checkConnectorKey handles known connector keys that need a warning or a
// check of their own.
func (l *loader) checkConnectorKey(e *entry, k string) {
	switch {
	case deprecatedAliases[k] != "":
		l.rep.warnf(e.origin(), "%s is deprecated since Kafka 2.8 and removed in 4.0: rename it to %s (Strait reads it as %s when %s is not set)",
			k, deprecatedAliases[k], deprecatedAliases[k], deprecatedAliases[k])
	case whitelistAliases[k] != "":
		l.rep.warnf(e.origin(), "MM2 has no %s (MirrorMaker 1 had --whitelist) and ignores it, replicating everything; the include list is %s: rename the key (Strait applies it as %s when %s is not set)",
			k, whitelistAliases[k], whitelistAliases[k], whitelistAliases[k])
	case removedKeys[k] != "":
		l.rep.warnf(e.origin(), "%s was removed in Kafka 4.0 (%s); it is ignored", k, removedKeys[k])
	case k == "transforms" || strings.HasPrefix(k, "transforms."):
		l.checkTransforms(e, k)
	case converterKeys[k]:
		l.checkConverter(e)
	case k == "predicates" || strings.HasPrefix(k, "predicates."):
		if e.trimmed() != "" {
			l.rep.warnf(e.origin(), "has no effect: predicates only choose the records a Connect transform applies to, and Strait runs no transforms; remove the key")
		}
	case k == "replication.policy.internal.topic.separator.enabled":
		l.checkRawBool(e)
	case classKeys[k].def != "":
		ck := classKeys[k]
		if v := e.trimmed(); v != ck.def {
			if ck.fatal {
				l.rep.errorf(e.origin(), "custom class %s is not supported: Strait implements only %s; remove the key", e.show(), ck.def)
			} else {
				l.rep.warnf(e.origin(), "custom class %s is ignored: Strait uses its own admin client", e.show())
			}
		}
	}
}

// checkTransforms refuses Connect transforms (SMTs): they change records,
// and Strait copies every record unchanged. An empty transforms list is
// no transforms, as in Connect.
//
// A RegexRouter at the top level or per flow is the exception: it renames
// topics, which Strait does with strait.rename.rules, so checkRouter refuses
// it per flow with the equivalent rule, and its keys get no error here.
func (l *loader) checkTransforms(e *entry, k string) {
	const notSupported = "Connect transforms are not supported: "
	scope := strings.TrimSuffix(e.key, k)
	router := func(name string) bool {
		return (scope == "" || strings.Contains(scope, "->")) && l.isRouter(scope, name)
	}
	if k == "transforms" {
		var names []string
		for _, n := range parseList(e.trimmed()) {
			if !router(n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return
		}
		what := "transform " + e.show()
		if !e.secret {
			quoted := make([]string, len(names))
			for i, n := range names {
				quoted[i] = fmt.Sprintf("%q", n)
			}
			what = "transform " + quoted[0]
			if len(quoted) > 1 {
				what = "transforms " + strings.Join(quoted, ", ")
			}
		}
		l.rep.errorf(e.origin(), "%sStrait copies every record unchanged and cannot run %s; remove the key and its transforms.* settings (a flow that needs transforms must stay on MM2)",
			notSupported, what)
		return
	}
	name, prop, _ := strings.Cut(strings.TrimPrefix(k, "transforms."), ".")
	if router(name) {
		return
	}
	class := ""
	if prop == "type" {
		class = fmt.Sprintf(" (class %s)", e.show())
	}
	l.rep.errorf(e.origin(), "%sStrait cannot run transform %q%s; remove the key", notSupported, name, class)
}

// converterKeys name Connect's converters, which MM2 sets to
// ByteArrayConverter unless the file chooses another one.
var converterKeys = set([]string{"key.converter", "value.converter", "header.converter"})

// byteArrayConverter is MM2's converter: bytes in, the same bytes out.
const byteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"

// checkConverter refuses a converter other than MM2's ByteArrayConverter:
// MM2 would write what that converter makes of the bytes, and Strait
// copies them unchanged.
func (l *loader) checkConverter(e *entry) {
	if v := e.trimmed(); v == byteArrayConverter || v == "" {
		return
	}
	l.rep.errorf(e.origin(), "converter %s is not supported: Strait copies keys, values and headers as bytes, as MM2's default %s does, and this converter would change them; remove the key",
		e.show(), byteArrayConverter)
}

// checkRawBool warns when whitespace makes Java's untrimmed
// Boolean.parseBoolean read a value differently from the trimmed
// BOOLEAN parse: MM2's driver (and the replication policies) use the first,
// its connectors the second.
func (l *loader) checkRawBool(e *entry) {
	v, ok := parseBool(e.trimmed())
	if ok && v != parseBoolean(e.value) {
		l.rep.warnf(e.origin(), "the value has whitespace around it: MM2 reads this key both untrimmed (as false) and trimmed (as true); remove the whitespace")
	}
}

// checkClientKey checks key k of a Java client role set under prefix.
func (l *loader) checkClientKey(e *entry, role, k, prefix string) {
	if clientKeys[role][k] {
		if k == "enable.auto.commit" {
			l.rep.warnf(e.origin(), "ignored: MM2 forces enable.auto.commit = false, and Strait never autocommits")
		}
		return
	}
	for _, other := range []string{"consumer", "producer", "admin"} {
		if other != role && clientKeys[other][k] {
			l.rep.warnf(e.origin(), "has no effect: %s is a %s setting, not a %s setting", k, other, role)
			return
		}
	}
	l.unknown(e, prefix, k, clientKeys[role])
}

// unknown warns about an unknown key, suggesting the closest known one.
func (l *loader) unknown(e *entry, prefix, k string, known ...map[string]bool) {
	msg := "unknown key (not an MM2, Connect or Kafka client setting), ignored"
	if c := closest(k, known...); c != "" {
		msg += fmt.Sprintf("; did you mean %s%s?", prefix, c)
	}
	l.rep.warnf(e.origin(), "%s", msg)
}
