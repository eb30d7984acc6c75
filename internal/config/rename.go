package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"strait/internal/policy"
)

// ReplicationPolicy builds the flow's replication policy, as the data plane
// and the tools that read its topics must use it: the flow's
// replication.policy.class (policy.New) when neither the flow nor any flow
// into its source renames topics, else a policy.Renaming that applies the
// flow's strait.rename.rules and reads back the names its inbound flows
// give (Policy.Inbound). Parse has already checked everything it checks,
// so it fails only for a Flow built by hand.
func (f *Flow) ReplicationPolicy() (policy.ReplicationPolicy, error) {
	p := f.Policy
	fallback, err := policy.New(p.Class, p.Separator, p.InternalSeparatorEnabled, f.Source)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", f.Name(), err)
	}
	if p.Rules == nil && len(p.Inbound) == 0 {
		return fallback, nil
	}
	var inbound []*policy.Renaming
	for _, alias := range slices.Sorted(maps.Keys(p.Inbound)) {
		q := p.Inbound[alias]
		qf, err := policy.New(q.Class, q.Separator, q.InternalSeparatorEnabled, alias)
		if err != nil {
			return nil, fmt.Errorf("flow %s->%s: %w", alias, f.Source, err)
		}
		qr, err := policy.NewRenaming(qf, alias, q.Rules)
		if err != nil {
			return nil, fmt.Errorf("flow %s->%s: %s: %w", alias, f.Source, keyRenameRules, err)
		}
		inbound = append(inbound, qr)
	}
	r, err := policy.NewRenaming(fallback, f.Source, p.Rules, inbound...)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %s: %w", f.Name(), keyRenameRules, err)
	}
	return r, nil
}

// regexEscapesLost are the characters after a backslash that a regex needs
// and java.util.Properties drops the backslash of: `\.` in the file is "."
// (any character) in the value.
const regexEscapesLost = `.dDsSwWbB()[]{}*+?|^$`

// renameRules reads strait.rename.rules and checks it with the flow's
// fallback policy.
func (r *flowReader) renameRules() *policy.Rules {
	e := r.get(keyRenameRules)
	if e == nil {
		return nil
	}
	if !e.secret {
		if esc := lostEscape(e.text, regexEscapesLost); esc != "" {
			r.errorf(e, `%s in a properties file is an escape that reads as plain %q, so a regex would see %q: write %s (two backslashes) for the regex escape`,
				esc, esc[1:], esc[1:], `\`+esc)
			return nil
		}
	}
	rules, err := policy.ParseRules(e.trimmed())
	if err != nil {
		var list policy.RuleErrors
		switch {
		case e.secret:
			r.errorf(e, "the rules in [redacted] are not valid: check the value where it is defined")
		case errors.As(err, &list):
			for _, re := range list {
				r.errorf(e, "%v", re)
			}
		default:
			r.errorf(e, "%v", err)
		}
		return nil
	}
	if rules.Len() == 0 {
		return nil // an empty value renames nothing, and overrides a top-level list
	}
	fallback, err := policy.New(r.f.Policy.Class, r.f.Policy.Separator, r.f.Policy.InternalSeparatorEnabled, r.f.Source)
	if err != nil {
		return nil // replication.policy.* is reported already
	}
	if _, err := policy.NewRenaming(fallback, r.f.Source, rules); err != nil {
		r.errorf(e, "%v", err)
		return nil
	}
	return rules
}

// lostEscape returns the first `\c` in the written line whose c is one of
// chars: java.util.Properties reads it as plain c.
func lostEscape(text, chars string) string {
	for i := 0; i+1 < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		if strings.IndexByte(chars, text[i+1]) >= 0 {
			return text[i : i+2]
		}
		i++ // an escaped character, possibly a backslash
	}
	return ""
}

// linkInbound gives every flow the policies of the enabled flows into its
// source that rename topics (Policy.Inbound).
func linkInbound(all []*Flow) {
	for _, f := range all {
		for _, g := range all {
			if g == f || g.Target != f.Source || !g.Enabled || g.Policy.Rules == nil {
				continue
			}
			if f.Policy.Inbound == nil {
				f.Policy.Inbound = map[string]Policy{}
			}
			f.Policy.Inbound[g.Source] = Policy{
				Class: g.Policy.Class, Separator: g.Policy.Separator,
				InternalSeparatorEnabled: g.Policy.InternalSeparatorEnabled, Rules: g.Policy.Rules,
			}
		}
	}
}

// transforms reads the flow's Connect transforms: the transforms list of
// the connector config, each with its transforms.<name>.* settings from the
// flow scope, or else from the top level.
func (r *flowReader) transforms() []Transform {
	e := r.get("transforms")
	if e == nil {
		return nil
	}
	var out []Transform
	for _, name := range parseList(e.trimmed()) {
		if name == "" {
			continue
		}
		t := Transform{Name: name, Props: map[string]string{}, Origin: e.origin()}
		prefix := "transforms." + name + "."
		settings := r.l.raw.stripped(prefix)
		maps.Copy(settings, r.cc.stripped(prefix)) // the flow scope wins
		for k, pe := range settings {
			if pe.secret {
				t.Redacted = true
				continue
			}
			if k == "type" {
				t.Type = pe.trimmed()
				continue
			}
			t.Props[k] = pe.trimmed()
		}
		out = append(out, t)
	}
	return out
}

// regexRouterClass is Connect's RegexRouter; Connect also takes the simple
// name as an alias.
const regexRouterClass = "org.apache.kafka.connect.transforms.RegexRouter"

func isRegexRouter(class string) bool {
	return class == regexRouterClass || class == "RegexRouter"
}

// isRouter reports whether transform name, listed by a transforms key
// under scope ("" or "A->B."), is a RegexRouter.
func (l *loader) isRouter(scope, name string) bool {
	if e := l.raw[scope+"transforms."+name+".type"]; e != nil {
		return isRegexRouter(e.trimmed())
	}
	if e := l.raw["transforms."+name+".type"]; e != nil && scope != "" {
		return isRegexRouter(e.trimmed())
	}
	return false
}

// checkRouter refuses a RegexRouter on enabled flow f, naming the
// strait.rename.rules value that renames topics as it does. The router's
// keys get no error of their own (checkTransforms).
func (l *loader) checkRouter(f *Flow) {
	var name string
	var origin Origin
	for _, t := range f.Transforms {
		if isRegexRouter(t.Type) {
			name, origin = t.Name, t.Origin
			break
		}
	}
	if name == "" {
		return
	}
	what := fmt.Sprintf("transform %q (RegexRouter)", name)
	rule, problems := RegexRouterRules(f)
	key := f.Name() + "." + keyRenameRules
	if keepsNames(rule) {
		rule += fmt.Sprintf(", or simply %s.replication.policy.class = %s, which keeps every name too", f.Name(), IdentityPolicyClass)
	}
	switch {
	case rule == "" && len(problems) == 0:
		l.rep.warnf(origin, "%s matches no remote topic of flow %s, so it renames nothing there, and Strait ignores it", what, f.Name())
	case len(problems) == 0:
		l.rep.errorf(origin, "%s renames topics, which Strait does with rename rules, not transforms: for flow %s, remove the transforms settings and set %s = %s (the same remote names)",
			what, f.Name(), key, rule)
	case rule != "":
		l.rep.errorf(origin, "%s renames topics, which Strait does with rename rules, not transforms, but it does not convert exactly for flow %s: %s; the closest rule is %s = %s: check it, set it and remove the transforms settings",
			what, f.Name(), strings.Join(problems, "; "), key, rule)
	default:
		l.rep.errorf(origin, "%s renames topics, which Strait does with rename rules, not transforms, but it cannot be converted for flow %s: %s; write %s by hand (docs/configuration.md, Renaming topics) and remove the transforms settings",
			what, f.Name(), strings.Join(problems, "; "), key)
	}
}

// keepsNames reports whether a converted rule (as file text) keeps every
// topic's name, as IdentityReplicationPolicy does.
func keepsNames(rule string) bool {
	rs, err := policy.ParseRules(strings.ReplaceAll(rule, `\\`, `\`))
	if rule == "" || err != nil {
		return false
	}
	for _, name := range []string{"a", "orders", "x.y-z_1", "A.b"} {
		if got, ok := rs.Rename(name); !ok || got != name {
			return false
		}
	}
	return true
}
