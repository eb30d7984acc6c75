package config

import (
	"strconv"
	"strings"
	"time"
)

// unhonoured is a setting of an enabled flow that Strait reads but does not
// act on (yet): its value asks for something Strait does not do.
type unhonoured struct {
	key     string // the MM2 key, e.g. "sync.topic.configs.enabled"
	origin  Origin // where the value came from; Line 0 for MM2's default
	what    string // the value and that it is not honoured
	instead string // what Strait does instead, and the fix
}

// notHonoured lists the settings of enabled flow f that Strait does not
// honour. Every field of Flow that nothing outside this package reads is
// here when its value asks for something; `strait check` shows them in
// Describe and both check and run warn about them.
func notHonoured(f *Flow) []unhonoured {
	var out []unhonoured
	add := func(key, what, instead string) {
		o, set := f.Origins[key]
		if !set {
			o = Origin{Key: key}
		}
		out = append(out, unhonoured{key: key, origin: o, what: what, instead: instead})
	}
	set := func(key string) bool { _, ok := f.Origins[key]; return ok }

	if !f.RefreshGroupsEnabled {
		add("refresh.groups.enabled", "false is not honoured yet",
			"Strait lists the source's consumer groups every "+seconds(f.RefreshGroupsInterval)+" (refresh.groups.interval.seconds) anyway")
	}
	switch {
	case !f.ExactlyOnce:
		for _, k := range []string{"transaction.boundary", "transaction.boundary.interval.ms"} {
			if set(k) {
				add(k, "no effect", "exactly-once mode is off, so Strait writes no transactions to bound; to turn it on, set "+
					f.Target+".exactly.once.source.support = enabled or "+keyExactlyOnce+" = true")
			}
		}
	case set("transaction.boundary.interval.ms") && f.TransactionBoundary != "interval":
		// Connect ignores it too unless the boundary is interval.
		add("transaction.boundary.interval.ms", "no effect",
			"transaction.boundary is poll, so each transaction collects data for offset.flush.interval.ms ("+seconds(f.TransactionInterval)+
				"); set "+f.Name()+".transaction.boundary = interval to use this key")
	}
	if set("tasks.max") {
		add("tasks.max", "not honoured",
			"Strait does not split a flow into tasks; each process that runs the file copies a share of the flow's partitions (several nodes), fetching from all source brokers at once")
	}
	if set("admin.timeout.ms") && f.AdminTimeout != time.Minute {
		add("admin.timeout.ms", strconv.FormatInt(f.AdminTimeout.Milliseconds(), 10)+" is not honoured yet",
			"Strait gives each round of topic and checkpoint admin calls one minute (MM2's default)")
	}
	if set("consumer.poll.timeout.ms") {
		add("consumer.poll.timeout.ms", "no effect",
			"Strait does not poll with a timeout; a fetch waits at most the consumer's fetch.max.wait.ms, and checkpoints follow emit.checkpoints.interval.seconds")
	}
	if set("offsets.storage.topic") {
		add("offsets.storage.topic", "not honoured yet",
			"Strait takes over a Java MM2's progress from the worker's offset.storage.topic ("+f.OffsetStorageTopic+
				"), not from this per-connector topic, so partitions MM2 copied resume by auto.offset.reset instead of where MM2 stopped")
	}
	return out
}

// warnNotHonoured warns once per setting about what the enabled flows
// among flows ask for and Strait does not do, naming the flows.
func (l *loader) warnNotHonoured(flows []*Flow) {
	type finding struct {
		u     unhonoured
		flows []string
	}
	var found []*finding
	for _, f := range flows {
		if !f.Enabled {
			continue
		}
	next:
		for _, u := range notHonoured(f) {
			for _, x := range found {
				if x.u == u {
					x.flows = append(x.flows, f.Name())
					continue next
				}
			}
			found = append(found, &finding{u: u, flows: []string{f.Name()}})
		}
	}
	for _, x := range found {
		on := x.flows[0]
		if n := len(x.flows); n > 1 {
			on = strings.Join(x.flows[:n-1], ", ") + " and " + x.flows[n-1]
		}
		l.rep.warnf(x.u.origin, "%s on %s: %s", x.u.what, on, x.u.instead)
	}
}
