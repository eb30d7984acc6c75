package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"strait/internal/offsets"
	"strait/internal/policy"
)

// MM2's defaults for the filter lists (spec §1.6).
var (
	defaultTopics                  = []string{".*"}
	defaultTopicsExclude           = []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`}
	defaultGroups                  = []string{".*"}
	defaultGroupsExclude           = []string{"console-consumer-.*", "connect-.*", "__.*"}
	defaultConfigPropertiesExclude = []string{
		`follower\.replication\.throttled\.replicas`, `leader\.replication\.throttled\.replicas`,
		`message\.timestamp\.difference\.max\.ms`, `message\.timestamp\.type`,
		`unclean\.leader\.election\.enable`, `min\.insync\.replicas`,
	}
)

// Strait's defaults where they differ from MM2's.
const (
	// StraitRefreshTopicsInterval replaces MM2's 600 s topic refresh when
	// the file does not set refresh.topics.interval.seconds.
	StraitRefreshTopicsInterval = 5 * time.Second
	// StraitFlushInterval replaces Connect's 60 s offset flush when the file
	// does not set <target>.offset.flush.interval.ms.
	StraitFlushInterval = time.Second
	// StraitRefreshGroupsInterval replaces MM2's 600 s group refresh when
	// the file does not set refresh.groups.interval.seconds.
	StraitRefreshGroupsInterval = 10 * time.Second
	// StraitCheckpointInterval replaces MM2's 60 s for
	// emit.checkpoints.interval.seconds and
	// sync.group.offsets.interval.seconds when the file does not set them:
	// checkpoints are exact and cheap, and failover wants them fresh.
	StraitCheckpointInterval = 5 * time.Second
	// StraitTransactionTimeout replaces the Java producer's 60 s
	// transaction.timeout.ms for an exactly-once flow whose target producer
	// does not set it.
	StraitTransactionTimeout = 15 * time.Second
)

// flows resolves every pair MM2's driver would create a herder for.
func (l *loader) flows() []*Flow {
	var all []*Flow
	for _, s := range l.aliases {
		for _, t := range l.aliases {
			if s != t && l.herder(s, t) {
				all = append(all, l.flow(s, t))
			}
		}
	}
	linkInbound(all)
	return all
}

// connectorConfig is MirrorMakerConfig.connectorBaseConfig for s->t
// (spec §1.5): top-level connector keys, config.providers* and
// replication.policy*, the cluster props of s and t re-prefixed with
// source./source.cluster. and target./target.cluster., then the flow's own
// keys. Strait's keys and the whitelist look-alikes ride along with the
// connector keys.
func (l *loader) connectorConfig(s, t string) props {
	cc := props{}
	for k, e := range l.raw {
		if connectorKeys[k] || straitKeys[k] || whitelistAliases[k] != "" ||
			strings.HasPrefix(k, "config.providers") || strings.HasPrefix(k, "replication.policy") {
			cc[k] = e
		}
	}
	for _, side := range []struct{ alias, name string }{{s, "source."}, {t, "target."}} {
		for k, e := range l.clusterProps(side.alias) {
			if isClientPrefixed(k) {
				cc[side.name+k] = e
			} else {
				cc[side.name+"cluster."+k] = e
			}
		}
	}
	maps.Copy(cc, l.raw.stripped(s+"->"+t+"."))
	return cc
}

// flowReader reads the typed settings of one flow from its connector config
// and records where each came from.
type flowReader struct {
	l  *loader
	cc props
	f  *Flow
}

// get returns the connector setting key and records its origin.
func (r *flowReader) get(key string) *entry { return r.record(key, r.cc[key]) }

func (r *flowReader) record(key string, e *entry) *entry {
	if e != nil {
		r.f.Origins[key] = e.origin()
	}
	return e
}

func (r *flowReader) errorf(e *entry, format string, args ...any) {
	r.l.rep.errorf(e.origin(), format, args...)
}

func (r *flowReader) boolean(key string, def bool) bool { return r.boolOf(r.get(key), def) }

func (r *flowReader) boolOf(e *entry, def bool) bool {
	if e == nil {
		return def
	}
	v, ok := parseBool(e.trimmed())
	if !ok {
		r.errorf(e, "value %s is not a boolean: use true or false", e.show())
		return def
	}
	return v
}

// rawBool is for the keys a replication policy reads itself, untrimmed,
// with Boolean.parseBoolean (spec §1.1); the connector still requires a
// valid boolean.
func (r *flowReader) rawBool(key string, def bool) bool {
	e := r.get(key)
	if e == nil {
		return def
	}
	if _, ok := parseBool(e.trimmed()); !ok {
		r.errorf(e, "value %s is not a boolean: use true or false", e.show())
		return def
	}
	return parseBoolean(e.value)
}

func (r *flowReader) intOf(e *entry, bits int, def int64) int64 {
	if e == nil {
		return def
	}
	v, err := parseInt(e.trimmed(), bits)
	if err != nil {
		r.errorf(e, "value %s %v", e.show(), err)
		return def
	}
	return v
}

func (r *flowReader) integer(key string, bits int, def int64) int64 {
	return r.intOf(r.get(key), bits, def)
}

// atLeast reads an integer that must be >= lo.
func (r *flowReader) atLeast(key string, bits int, def, lo int64, why string) int64 {
	e := r.get(key)
	v := r.intOf(e, bits, def)
	if e != nil && v < lo {
		r.errorf(e, "value %s is too small: %s", e.show(), why)
		return def
	}
	return v
}

// replicationFactor reads a replication factor: positive, or -1 for the
// broker default (KIP-464).
func (r *flowReader) replicationFactor(key string, bits int, def int64) int {
	e := r.get(key)
	v := r.intOf(e, bits, def)
	if e != nil && (v == 0 || v < -1) {
		r.errorf(e, "replication factor %s is not valid: use a positive number, or -1 for the broker's default.replication.factor", e.show())
		return int(def)
	}
	return int(v)
}

// enum reads a string that must be one of allowed (case-insensitively when
// fold). It returns the allowed spelling.
func (r *flowReader) enum(key string, e *entry, def string, fold bool, allowed ...string) string {
	r.record(key, e)
	if e == nil {
		return def
	}
	v := e.trimmed()
	for _, a := range allowed {
		if v == a || (fold && strings.EqualFold(v, a)) {
			return a
		}
	}
	r.errorf(e, "value %s is not valid: use %s", e.show(), orList(allowed))
	return def
}

func orList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// schedule reads <feature>.enabled and <feature>.interval.seconds. MM2
// implements a disabled feature as a negative interval and never runs a
// task whose interval is negative, so a non-positive interval on a feature
// that runs is an error in Strait. The returned interval is always positive.
func (r *flowReader) schedule(feature string, defOn bool, defSecs int64, runs bool) (on bool, every time.Duration, set bool) {
	on = r.boolean(feature+".enabled", defOn)
	e := r.get(feature + ".interval.seconds")
	secs := r.intOf(e, 64, defSecs)
	switch {
	case e == nil:
	case secs <= 0:
		if on && runs {
			r.errorf(e, "interval %s must be at least 1 second while %s.enabled is true (MM2 never runs a task with a negative interval, and fails on 0); to turn the feature off, set %s.enabled = false",
				e.show(), feature, feature)
		}
		secs = defSecs
	case secs > math.MaxInt64/int64(time.Second):
		r.errorf(e, "interval %s is too large", e.show())
		secs = defSecs
	}
	return on, time.Duration(secs) * time.Second, e != nil
}

// regexList reads an MM2 filter list and checks each regex.
func (r *flowReader) regexList(key string, def []string) []string {
	e := r.get(key)
	if e == nil {
		return slices.Clone(def)
	}
	list := parseList(e.trimmed())
	if esc := e.lostRegexEscape(); esc != "" && !e.secret {
		r.l.rep.warnf(e.origin(), "%s in a properties file is an escape that reads as plain %q, not a regex class: write %s", esc, esc[1:], `\`+esc)
	}
	show := func(s string) string {
		if e.secret {
			return "[redacted]"
		}
		return fmt.Sprintf("%q", s)
	}
	msgs := checkRegexList(list, show)
	for _, msg := range msgs {
		r.errorf(e, "%s", msg)
	}
	if len(msgs) == 0 {
		// The daemon compiles the list with internal/policy, which also
		// refuses what Go and Java read differently: refuse it here too.
		if _, err := policy.CompilePattern(list); err != nil {
			if e.secret {
				r.errorf(e, "a regex in [redacted] is read differently by Java and by Strait's Go regex engine (RE2): check the value where it is defined")
			} else {
				r.errorf(e, "%v", err)
			}
		}
	}
	return list
}

// translate applies an alias key (a deprecated or never-existing name) as
// newKey when newKey is not set (ConfigUtils.translateDeprecatedConfigs).
func (r *flowReader) translate(newKey, alias string) {
	a := r.cc[alias]
	if a == nil {
		return
	}
	if n := r.cc[newKey]; n != nil {
		r.l.rep.warnf(a.origin(), "ignored: %q (%s) is set too and wins, as in MM2", n.key, n.where())
		return
	}
	r.cc[newKey] = a
}

func (r *flowReader) policyClass() string {
	e := r.get("replication.policy.class")
	if e == nil {
		return DefaultPolicyClass
	}
	v := e.trimmed()
	builtin, differs, ok := policy.BuiltinClass(v)
	switch {
	case !ok:
		r.errorf(e, "unknown replication policy class %s: a Java policy cannot run in Strait, which implements %s and %s (and reads Strimzi's and AWS's old identity policies as the latter); to rename topics as a custom policy does, remove the key and write %s (docs/configuration.md, Renaming topics), e.g. %s = orders=prod.orders, re:^legacy-(.*)$=new-$1",
			e.show(), DefaultPolicyClass, IdentityPolicyClass, keyRenameRules, keyRenameRules)
		return DefaultPolicyClass
	case v == builtin:
	case differs == "":
		r.l.rep.warnf(e.origin(), "MM2 loads the policy by its full class name: write %s so the file also works with MM2", builtin)
	default:
		r.l.rep.warnf(e.origin(), "Strait runs %s as %s: %s", e.show(), builtin, differs)
	}
	return builtin
}

// separator reads replication.policy.separator raw, as the policies do.
func (r *flowReader) separator() string {
	e := r.get("replication.policy.separator")
	if e == nil {
		return "."
	}
	if e.value == "" {
		r.errorf(e, `empty separator: remote topics would be named "<alias><topic>" and could not be traced back to their source; remove the key to use "." or set a separator`)
		return "."
	}
	if e.value != javaTrim(e.value) {
		r.l.rep.warnf(e.origin(), "the separator %s has whitespace around it, and MM2's replication policy uses it verbatim, whitespace included; remove the whitespace", quoteRaw(e))
	}
	return e.value
}

func quoteRaw(e *entry) string {
	if e.secret {
		return "[redacted]"
	}
	return fmt.Sprintf("%q", e.value)
}

// flow resolves the pair s->t.
func (l *loader) flow(s, t string) *Flow {
	cc := l.connectorConfig(s, t)
	f := &Flow{Source: s, Target: t, Origins: map[string]Origin{}}
	r := &flowReader{l: l, cc: cc, f: f}
	for _, alias := range slices.Sorted(maps.Keys(deprecatedAliases)) {
		r.translate(deprecatedAliases[alias], alias)
	}
	for _, alias := range slices.Sorted(maps.Keys(whitelistAliases)) {
		r.translate(whitelistAliases[alias], alias)
	}

	f.Enabled = r.boolean("enabled", false)
	runs := f.Enabled // source and checkpoint features run only on enabled flows

	f.Policy = Policy{
		Class:                    r.policyClass(),
		Separator:                r.separator(),
		InternalSeparatorEnabled: r.rawBool("replication.policy.internal.topic.separator.enabled", true),
	}
	f.Policy.Rules = r.renameRules()
	f.Transforms = r.transforms()

	f.Topics = r.regexList("topics", defaultTopics)
	f.TopicsExclude = r.regexList("topics.exclude", defaultTopicsExclude)
	f.ReplicationFactor = r.replicationFactor("replication.factor", 32, 2)
	f.RefreshTopicsEnabled, f.RefreshTopicsInterval, f.RefreshTopicsIntervalSet = r.schedule("refresh.topics", true, 600, runs)
	if !f.RefreshTopicsIntervalSet {
		f.RefreshTopicsInterval = StraitRefreshTopicsInterval
	}
	f.SyncTopicConfigsEnabled, f.SyncTopicConfigsInterval, _ = r.schedule("sync.topic.configs", true, 600, runs)
	f.ConfigPropertiesExclude = r.regexList("config.properties.exclude", defaultConfigPropertiesExclude)
	f.UseDefaultsFrom = r.enum("use.defaults.from", cc["use.defaults.from"], "target", false, "source", "target")
	f.SyncTopicACLsEnabled, f.SyncTopicACLsInterval, _ = r.schedule("sync.topic.acls", true, 600, runs)
	f.HeartbeatsReplication = r.boolean("heartbeats.replication.enabled", true)

	f.EmitOffsetSyncsEnabled = r.boolean("emit.offset-syncs.enabled", true)
	f.OffsetSyncsTopicLocation = r.enum("offset-syncs.topic.location", cc["offset-syncs.topic.location"], "source", false, "source", "target")
	f.OffsetSyncsTopicReplicationFactor = r.replicationFactor("offset-syncs.topic.replication.factor", 16, 3)
	f.OffsetLagMax = r.integer("offset.lag.max", 64, 100)

	f.Groups = r.regexList("groups", defaultGroups)
	f.GroupsExclude = r.regexList("groups.exclude", defaultGroupsExclude)
	var set bool
	if f.RefreshGroupsEnabled, f.RefreshGroupsInterval, set = r.schedule("refresh.groups", true, 600, runs); !set {
		f.RefreshGroupsInterval = StraitRefreshGroupsInterval
	}
	if f.EmitCheckpointsEnabled, f.EmitCheckpointsInterval, set = r.schedule("emit.checkpoints", true, 60, runs); !set {
		f.EmitCheckpointsInterval = StraitCheckpointInterval
	}
	if f.SyncGroupOffsetsEnabled, f.SyncGroupOffsetsInterval, set = r.schedule("sync.group.offsets", false, 60, runs); !set {
		f.SyncGroupOffsetsInterval = StraitCheckpointInterval
	}
	f.CheckpointsTopicReplicationFactor = r.replicationFactor("checkpoints.topic.replication.factor", 16, 3)

	f.EmitHeartbeatsEnabled, f.EmitHeartbeatsInterval, _ = r.schedule("emit.heartbeats", true, 1, true)
	f.HeartbeatsTopicReplicationFactor = r.replicationFactor("heartbeats.topic.replication.factor", 16, 3)

	f.TasksMax = int(r.atLeast("tasks.max", 32, 1, 1, "tasks.max must be at least 1"))
	f.AdminTimeout = time.Duration(r.atLeast("admin.timeout.ms", 64, 60000, 1, "the timeout must be at least 1 ms")) * time.Millisecond
	r.integer("consumer.poll.timeout.ms", 64, 1000)

	f.ExactlyOnceSupport = r.enum("exactly.once.support", cc["exactly.once.support"], "requested", true, "requested", "required")
	tb := cc["transaction.boundary"]
	if f.TransactionBoundary = r.enum("transaction.boundary", tb, "poll", true, "poll", "interval", "connector"); f.TransactionBoundary == "connector" {
		r.errorf(tb, "transaction.boundary = connector is not supported by MM2's source connector: use poll or interval")
		f.TransactionBoundary = "poll"
	}

	f.FastPath = r.boolean(keyFastPath, true)
	f.PreserveOffsets = r.boolean(keyPreserve, false)
	f.PreserveTopics = r.regexList(keyPreserveTopics, []string{".*"})
	f.RefuseGaps = r.regexList(keyRefuseGaps, nil)
	f.SyncTopicDeletion = r.boolean(keyTopicDeletion, false)
	r.clusterKey()
	f.SyncGroupACLs = r.boolean(keyGroupACLs, false)
	f.IndexMaxSegments = int(r.atLeast(keyIndexMaxSegments, 31, offsets.DefaultMaxSegments, 2,
		"an offset map needs at least 2 segments; the default is "+strconv.Itoa(offsets.DefaultMaxSegments)))
	if e := r.get(keyThrottle); e != nil {
		v, err := parseInt(e.trimmed(), 64)
		switch {
		case err != nil:
			r.errorf(e, "value %s %v: give a number of bytes per second (0 = unlimited)", e.show(), err)
		case v < 0:
			r.errorf(e, "value %s is negative: give a number of bytes per second (0 = unlimited)", e.show())
		default:
			f.ThrottleBytesPerSecond = v
		}
	}

	// Worker settings of the herder come from the target's cluster scope.
	worker := l.clusterProps(t)
	f.FlushInterval = StraitFlushInterval
	if e := r.record("offset.flush.interval.ms", l.workerKey(t, "offset.flush.interval.ms")); e != nil {
		v := r.intOf(e, 64, 0)
		switch {
		case v <= 0:
			r.errorf(e, "value %s must be at least 1 ms", e.show())
		case v > math.MaxInt64/int64(time.Millisecond):
			r.errorf(e, "value %s is too large", e.show())
		default:
			f.FlushInterval, f.FlushIntervalSet = time.Duration(v)*time.Millisecond, true
		}
	}
	// The worker group's timeouts (Connect's defaults): the group of the
	// nodes that share the flow (strait.cluster.enabled) uses them.
	for _, w := range []struct {
		key string
		def int64
		to  *time.Duration
	}{
		{"session.timeout.ms", 10_000, &f.SessionTimeout},
		{"heartbeat.interval.ms", 3_000, &f.HeartbeatInterval},
		{"rebalance.timeout.ms", 60_000, &f.RebalanceTimeout},
	} {
		*w.to = time.Duration(w.def) * time.Millisecond
		if e := r.record(w.key, l.workerKey(t, w.key)); e != nil {
			if v := r.intOf(e, 32, w.def); v < 1 {
				r.errorf(e, "value %s must be at least 1 ms", e.show())
			} else {
				*w.to = time.Duration(v) * time.Millisecond
			}
		}
	}
	if f.HeartbeatInterval*3 > f.SessionTimeout {
		if e := l.workerKey(t, "heartbeat.interval.ms"); e != nil {
			r.errorf(e, "heartbeat.interval.ms (%v) must be at most a third of session.timeout.ms (%v): a node that shares the flow may write only while its last heartbeat is less than two thirds of the session old", f.HeartbeatInterval, f.SessionTimeout)
		} else {
			f.HeartbeatInterval = f.SessionTimeout / 3 // unset: Connect's 3 s, or less for a short session
		}
	}
	if f.RebalanceTimeout < f.SessionTimeout {
		if e := l.workerKey(t, "rebalance.timeout.ms"); e != nil {
			r.errorf(e, "rebalance.timeout.ms (%v) must be at least session.timeout.ms (%v)", f.RebalanceTimeout, f.SessionTimeout)
		}
	}
	f.ExactlyOnceSourceSupport = r.enum("exactly.once.source.support", l.workerKey(t, "exactly.once.source.support"), "disabled", true, "disabled", "preparing", "enabled")
	f.ExactlyOnce = r.boolean(keyExactlyOnce, false) || f.ExactlyOnceSourceSupport == "enabled"
	r.get("offsets.storage.topic") // Connect's per-connector offsets topic (KIP-618): recorded to warn that it is not read
	f.OffsetStorageTopic = "mm2-offsets." + s + ".internal"
	if e := r.record("offset.storage.topic", l.workerKey(t, "offset.storage.topic")); e != nil {
		if v := e.trimmed(); v != "" {
			f.OffsetStorageTopic = v
		} else {
			r.errorf(e, "empty topic name: remove the key to use %s", f.OffsetStorageTopic)
		}
	}

	l.clients(f, cc, worker)
	r.transactions(runs)

	if runs {
		l.crossChecks(f, cc)
		l.checkRouter(f)
	}
	return f
}

// clusterKey reads strait.cluster.enabled, which only earlier versions
// needed: every process shares each replicating flow now (a single process
// is a group of one), so true is what happens anyway, and false, which
// would have every process copy every partition, is refused rather than
// ignored.
func (r *flowReader) clusterKey() {
	e := r.get(keyCluster)
	if e == nil {
		return
	}
	if r.boolOf(e, true) {
		r.l.rep.warnf(e.origin(), "%s is no longer needed: every strait run process with this file shares each replicating flow (one process alone is a group of one); remove the line", keyCluster)
		return
	}
	r.errorf(e, "%s = false is not supported: every strait run process with this file shares each replicating flow through the flow's group on the target, and one process alone copies everything; remove the line (to run a flow on one process only, start one process)", keyCluster)
}

// transactions resolves f.TransactionInterval and f.TransactionTimeout. It
// runs once FlushInterval and the target producer are known; the values
// are checked only where they are used, on an enabled exactly-once flow.
func (r *flowReader) transactions(runs bool) {
	f := r.f
	check := runs && f.ExactlyOnce
	// The interval comes from transaction.boundary.interval.ms or from
	// offset.flush.interval.ms; io is where, for messages.
	f.TransactionInterval = f.FlushInterval
	io, intervalSet := f.Origins["offset.flush.interval.ms"]
	e := r.get("transaction.boundary.interval.ms")
	v := r.intOf(e, 64, 0)
	switch {
	case e == nil:
	case v <= 0:
		if runs {
			r.errorf(e, "value %s must be at least 1 ms: it is how long a transaction collects data before it commits; remove the key to commit every offset.flush.interval.ms", e.show())
		}
	case v > math.MaxInt64/int64(time.Millisecond):
		r.errorf(e, "value %s is too large", e.show())
	case f.TransactionBoundary == "interval":
		f.TransactionInterval = time.Duration(v) * time.Millisecond
		io, intervalSet = e.origin(), true
	}

	f.TransactionTimeout = StraitTransactionTimeout
	p, set := f.TargetProducer.Prop("transaction.timeout.ms")
	if set {
		f.Origins["transaction.timeout.ms"] = p.Origin
		show := fmt.Sprintf("%q", p.Display())
		ms, err := parseInt(p.Value.Reveal(), 32) // an int in the Java producer
		switch {
		case err != nil:
			if check {
				r.l.rep.errorf(p.Origin, "value %s %v: give the target producer's transaction timeout in milliseconds", show, err)
			}
			return
		case ms <= 0:
			if check {
				r.l.rep.errorf(p.Origin, "value %s must be at least 1 ms: it is how long the target lets a transaction stay open", show)
			}
			return
		}
		f.TransactionTimeout = time.Duration(ms) * time.Millisecond
	}
	if !check || f.TransactionTimeout >= 2*f.TransactionInterval {
		return
	}
	interval := "Strait's default offset.flush.interval.ms"
	if intervalSet {
		interval = "set by " + setBy(io)
	}
	need := (2 * f.TransactionInterval).Milliseconds()
	const why = "a transaction must be able to commit within the timeout"
	if set {
		r.l.rep.errorf(p.Origin, "transaction.timeout.ms = %s is less than twice the transaction interval (%d ms, %s): %s; raise transaction.timeout.ms to %d or more, or shorten the interval",
			p.Display(), f.TransactionInterval.Milliseconds(), interval, why, need)
		return
	}
	// Only an interval set in the file can exceed half the default timeout.
	r.l.rep.errorf(io, "a transaction interval of %d ms is more than half of transaction.timeout.ms (%d ms, Strait's default for exactly-once flows): %s; set %s.producer.transaction.timeout.ms = %d or more, or shorten the interval",
		f.TransactionInterval.Milliseconds(), f.TransactionTimeout.Milliseconds(), why, f.Target, need)
}

// setBy names the key and line a value was set by, for a message about
// another key: `"A.consumer.isolation.level" on line 7`.
func setBy(o Origin) string {
	switch {
	case o.Line == 0:
		return fmt.Sprintf("%q (default)", o.Key)
	case o.File != "":
		return fmt.Sprintf("%q on line %d of %s", o.Key, o.Line, o.File)
	}
	return fmt.Sprintf("%q on line %d", o.Key, o.Line)
}

// workerKey returns worker setting k of the herders whose target is t
// (MirrorMakerConfig.workerConfig): the target's cluster scope, overridden
// by a top-level key when k has one of the prefixes MM2 copies from the top
// level (offset.storage, config.storage, ...).
func (l *loader) workerKey(t, k string) *entry {
	if hasAnyPrefix(k, workerPrefixes) {
		if e := l.raw[k]; e != nil {
			return e
		}
	}
	return l.clusterProps(t)[k]
}

// crossChecks applies MM2's connector validation (spec §1.8) to an enabled
// flow, and Strait's own rules for the data it copies.
func (l *loader) crossChecks(f *Flow, cc props) {
	l.checkDataAcks(f)
	if !f.EmitCheckpointsEnabled && !f.SyncGroupOffsetsEnabled {
		if e := cc["emit.checkpoints.enabled"]; e != nil {
			l.rep.errorf(e.origin(), "MM2 (3.9+) rejects flow %s when it neither emits checkpoints nor syncs group offsets: remove the key; to checkpoint no group, give the flow an empty group list instead (%s.groups =)",
				f.Name(), f.Name())
		}
	}
	if !f.EmitOffsetSyncsEnabled {
		e := cc["emit.offset-syncs.enabled"]
		l.rep.errorf(e.origin(), "MM2 (3.9+) rejects emit.offset-syncs.enabled = false on enabled flow %s: its checkpoints need offset syncs; remove the key", f.Name())
	}
	l.checkExactlyOnce(f, cc)
	l.checkPreserve(f, cc)
	if f.ExactlyOnceSupport == "required" {
		o := f.Origins["exactly.once.support"]
		p, ok := f.SourceConsumer.Prop("isolation.level")
		switch {
		case !ok:
			l.rep.warnf(o, "MM2 rejects exactly.once.support = required unless the source consumer reads committed data, and its default isolation.level is read_uncommitted; Strait reads committed data by default, but set %s.consumer.isolation.level = read_committed so the file also works with MM2",
				f.Source)
		case p.Value.Reveal() != "read_committed":
			l.rep.errorf(o, "exactly.once.support = required needs the source consumer to read committed data, but isolation.level is %q (set by %q on line %d): set %s.consumer.isolation.level = read_committed",
				p.Display(), p.Origin.Key, p.Origin.Line, f.Source)
		}
	}
}

// checkExactlyOnce applies the rules of exactly-once mode to an enabled
// flow. The mode is on when either of its keys says so, and an explicit
// strait.exactly.once = false cannot turn off what the worker setting turns
// on. An exactly-once flow forwards record batches on the fast path inside
// transactions of the idempotent producer, so neither may be turned off.
// A flow that requires exactly-once (exactly.once.support = required)
// without the mode is refused, as Connect refuses the connector ("This
// worker does not have exactly-once source support enabled").
func (l *loader) checkExactlyOnce(f *Flow, cc props) {
	mm2Key := f.Target + ".exactly.once.source.support"
	mm2, mm2Set := f.Origins["exactly.once.source.support"]
	strait := cc[keyExactlyOnce]
	var straitOn, straitOff bool
	if strait != nil {
		v, ok := parseBool(strait.trimmed())
		straitOn, straitOff = v, ok && !v
	}
	if !f.ExactlyOnce {
		if f.ExactlyOnceSupport != "required" {
			return
		}
		why := mm2Key + " is not set"
		if mm2Set {
			why = fmt.Sprintf("%s = %s %s", mm2Key, f.ExactlyOnceSourceSupport, lineOf(mm2))
		}
		if straitOff {
			why += fmt.Sprintf(", and %s = false %s", strait.key, lineOf(strait.origin()))
		} else {
			why += ", and " + keyExactlyOnce + " is not set"
		}
		l.rep.errorf(f.Origins["exactly.once.support"], "exactly.once.support = required needs exactly-once mode, which is off for %s (%s): MM2 refuses a connector that requires exactly-once on a worker without exactly-once source support; set %s = enabled (or %s = true), or remove the key",
			f.Name(), why, mm2Key, keyExactlyOnce)
		return
	}
	var on []string // the keys that turn the mode on, for messages
	if f.ExactlyOnceSourceSupport == "enabled" {
		on = append(on, setBy(mm2))
		if straitOff {
			l.rep.errorf(strait.origin(), "%s = false contradicts %s = enabled %s, which turns exactly-once mode on for the flows into %s: remove one of the two keys (this one to copy exactly once, the other to copy at least once)",
				keyExactlyOnce, mm2Key, lineOf(mm2), f.Target)
		}
	}
	if straitOn {
		on = append(on, setBy(strait.origin()))
	}
	mode := "exactly-once mode (set by " + strings.Join(on, " and ") + ")"
	if o, ok := f.Origins[keyFastPath]; ok && !f.FastPath {
		l.rep.errorf(o, "%s = false is not allowed in %s: exactly-once mode forwards record batches on the fast path inside transactions, and the record path has no transactions; remove the key, or turn exactly-once mode off",
			keyFastPath, mode)
	}
	if p, ok := f.TargetProducer.Prop("enable.idempotence"); ok && strings.EqualFold(p.Value.Reveal(), "false") {
		l.rep.errorf(p.Origin, "enable.idempotence = false is not allowed in %s: transactions need the idempotent producer; remove the key, or turn exactly-once mode off", mode)
	}
}

// checkPreserve applies the rules of the offset-preserving mode to an
// enabled flow. Its list keys do nothing without the mode, so they are
// refused then rather than ignored. The mode writes each record at its
// source offset by forwarding batches at the remote partition's end, which
// only the fast path does; it copies exactly once by construction, so it
// does not take exactly-once mode's transactions; and it must not copy
// aborted records as data, so it reads committed data.
func (l *loader) checkPreserve(f *Flow, cc props) {
	if !f.PreserveOffsets {
		for _, k := range []string{keyPreserveTopics, keyRefuseGaps} {
			if e := cc[k]; e != nil {
				l.rep.errorf(e.origin(), "%s does nothing unless %s = true for flow %s: set that key too, or remove this one", k, keyPreserve, f.Name())
			}
		}
		return
	}
	o := f.Origins[keyPreserve]
	if f.ExactlyOnce {
		l.rep.errorf(o, "%s = true cannot be combined with exactly-once mode on flow %s: keeping offsets already copies each record once (a restart resumes where the target ends), without transactions on the data; turn one of the two off", keyPreserve, f.Name())
	}
	if e, ok := f.Origins[keyFastPath]; ok && !f.FastPath {
		l.rep.errorf(e, "%s = false is not allowed with %s = true (%s): only the fast path writes batches at the source's offsets; remove the key, or turn %s off", keyFastPath, keyPreserve, lineOf(o), keyPreserve)
	}
	if p, ok := f.SourceConsumer.Prop("isolation.level"); ok && strings.EqualFold(strings.TrimSpace(p.Value.Reveal()), "read_uncommitted") {
		l.rep.errorf(p.Origin, "isolation.level = read_uncommitted is not allowed with %s = true (%s): aborted records would be copied as committed data at their offsets; remove the key (Strait reads committed data by default), or turn %s off", keyPreserve, lineOf(o), keyPreserve)
	}
	if p, ok := f.TargetProducer.Prop("enable.idempotence"); ok && strings.EqualFold(strings.TrimSpace(p.Value.Reveal()), "false") {
		l.rep.errorf(p.Origin, "enable.idempotence = false is not allowed with %s = true (%s): a batch sent again after a lost answer would land a second time, past its source offsets; remove the key, or turn %s off", keyPreserve, lineOf(o), keyPreserve)
	}
}

// lineOf says where a key is set, for a message that names the key
// itself: "on line 7", or "on line 3 of source.properties".
func lineOf(o Origin) string {
	if o.File != "" {
		return fmt.Sprintf("on line %d of %s", o.Line, o.File)
	}
	return fmt.Sprintf("on line %d", o.Line)
}

// checkDataAcks requires acks = all for the producer of an enabled flow's
// data (MM2's default). Strait stores progress on the target's
// acknowledgement: with acks = 1 a leader change can lose acknowledged
// records, and with acks = 0 there is no acknowledgement (nor target offset)
// at all. The flow's offset index, checkpoints and heartbeats share this
// producer's settings. Producers that write only heartbeats (into a target
// no enabled flow writes to) or offset syncs on the source keep the file's
// acks, as in MM2: those records are rewritten periodically and a lost one
// loses no data.
//
// enable.idempotence = false is allowed: without idempotence a retry may
// write a record twice, which is a duplicate, never a loss, and the offset
// index records where the last copy landed.
func (l *loader) checkDataAcks(f *Flow) {
	p, ok := f.TargetProducer.Prop("acks")
	if !ok {
		return
	}
	const fix = "set acks = all (or -1, MM2's default), or remove the key"
	switch v := strings.ToLower(p.Value.Reveal()); {
	case v == "all", v == "-1":
	case p.Secret:
		l.rep.errorf(p.Origin, "value [redacted] is not allowed: replicated data needs acks = all (or -1, MM2's default); set it to all, or remove the key")
	case v == "1":
		l.rep.errorf(p.Origin, "acks = 1 is not allowed for replicated data: the target's leader acknowledges alone, so a leader change can lose records after Strait stored its progress past them; %s", fix)
	case v == "0":
		l.rep.errorf(p.Origin, "acks = 0 is not allowed for replicated data: the target acknowledges nothing, so Strait could neither know that records were written nor where; %s", fix)
	default:
		l.rep.errorf(p.Origin, "value %q is not valid: replicated data needs acks = all (or -1, MM2's default); set it to all, or remove the key", p.Display())
	}
}
