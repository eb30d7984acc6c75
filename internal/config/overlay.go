package config

import "slices"

// Overlay is a set of keys given besides the configuration file, as the
// command line of the MM2 guide gives them: a per-cluster file
// (--source-cluster-config source.properties) whose keys become the keys of
// one cluster, or a flag that sets a key (--whitelist sets topics).
// Connect-mirror-maker.sh has no such flags (they are MirrorMaker 1's); an
// overlay's key replaces the same key of the file, as a command line wins
// over a file, with a warning that names both.
type Overlay struct {
	// Name says where the keys come from in messages and origins: a file
	// name, or a flag.
	Name string
	// Prefix is put before every key: "SOURCE." makes a file the keys of
	// cluster SOURCE.
	Prefix string
	// Data is properties text, read as the configuration file is.
	Data []byte
}

// overlay adds LoadOptions.Overlays to the file's keys, in order.
func (l *loader) overlay() {
	for _, o := range l.opts.Overlays {
		_, order := fileEntries(o.Data,
			func(line int, err error) {
				l.rep.errorf(Origin{Line: line, File: o.Name}, "cannot parse the line: %v", err)
			},
			func(first, again *entry) {
				l.rep.warnf(Origin{Key: o.Prefix + again.key, Line: again.line, File: o.Name},
					"the key is set again; this value replaces the one on line %d (the last one wins)", first.line)
			})
		for _, e := range order {
			e.key, e.file = o.Prefix+e.key, o.Name
			e.secret = isSecretKey(e.key)
			if prev := l.raw[e.key]; prev != nil {
				at := prev.where()
				if prev.file == "" {
					at += " of " + l.rep.file
				}
				l.rep.warnf(e.origin(), "replaces the value on %s: what the command line gives wins over the configuration file", at)
				l.order = slices.DeleteFunc(l.order, func(x *entry) bool { return x == prev })
			}
			l.raw[e.key] = e
			l.order = append(l.order, e)
		}
	}
}

// Lines returns the overlay's keys as lines of a configuration file, as
// written but with the prefix, and a secret's value as [redacted]: what to
// add to the file to drop the overlay. Lines that do not parse are left
// out (Parse reports them).
func (o Overlay) Lines() []string {
	_, order := fileEntries(o.Data, func(int, error) {}, nil)
	var out []string
	for _, e := range order {
		if isSecretKey(o.Prefix + e.key) {
			out = append(out, o.Prefix+e.key+" = [redacted]")
			continue
		}
		out = append(out, o.Prefix+e.text)
	}
	return out
}
