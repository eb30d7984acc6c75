package strimzi

import (
	"fmt"
	"strings"
)

// render writes the properties. Comments say where each block came from.
func (c *converter) render() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	kv := func(key, value string) { line("%s = %s", escapeKey(key), escapeValue(value)) }

	line("# Converted by `strait import strimzi` from %s %s in %s.", kindMM2, strings.Join(c.resources, ", "), c.file)
	line("# Fields without an equivalent here were listed on stderr when it ran.")
	line("")
	kv("clusters", strings.Join(c.aliases, ", "))
	line("")
	line("# Strimzi runs a heartbeat connector only where a mirror has a heartbeatConnector (v1 has none);")
	line("# MM2's dedicated mode would emit heartbeats between every pair of clusters.")
	kv("emit.heartbeats.enabled", "false")
	if c.directory {
		line("")
		line("# Secret values are read from the Kubernetes Secrets mounted at %s/<secret name>,", c.opts.SecretsDir)
		line("# one file per key, as Strimzi mounts them.")
		kv("config.providers", "directory")
		kv("config.providers.directory.class", "org.apache.kafka.common.config.provider.DirectoryConfigProvider")
		kv("config.providers.directory.param.allowed.paths", c.opts.SecretsDir)
	}
	for _, a := range c.aliases {
		cl := c.clusters[a]
		line("")
		line("# %s: %s of %q", a, cl.from, cl.res)
		for _, p := range cl.props {
			kv(a+"."+p.key, p.value)
		}
	}
	for _, f := range c.flows {
		line("")
		line("# %s: %s of %q", f.name(), f.from, f.res)
		for _, p := range f.props {
			if p.key == "groups" && p.value == "" {
				line("# no checkpointConnector: no group is checkpointed")
			}
			kv(f.name()+"."+p.key, p.value)
		}
	}
	return b.String()
}

// escapeKey writes a key as java.util.Properties reads it back.
func escapeKey(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '\\' || r == '=' || r == ':' || r == ' ' || r == '\t' || r == '\f':
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && (r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteString(escapeControl(r))
		}
	}
	return b.String()
}

// escapeValue writes a value as java.util.Properties reads it back:
// backslashes doubled, leading whitespace and line breaks escaped.
func escapeValue(v string) string {
	var b strings.Builder
	leading := true
	for _, r := range v {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case leading && (r == ' ' || r == '\t' || r == '\f'):
			b.WriteByte('\\')
			b.WriteRune(r)
			continue
		default:
			b.WriteString(escapeControl(r))
		}
		leading = false
	}
	return b.String()
}

func escapeControl(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\f':
		return `\f`
	}
	if r < ' ' {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return string(r)
}
