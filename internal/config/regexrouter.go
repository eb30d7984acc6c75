package config

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"strait/internal/policy"
)

// RegexRouterRules converts the RegexRouter transform of flow f (Connect's
// org.apache.kafka.connect.transforms.RegexRouter, as transforms = route,
// transforms.route.type, .regex and .replacement) into the
// strait.rename.rules value that names remote topics as MM2 with the router
// does. rule is the value as it is written in a properties file (each
// backslash doubled), ready to print after "<flow>.strait.rename.rules = ";
// "" when the flow has no router or the router never matches its topics.
// problems lists why the conversion is not exact or not possible; rule,
// when not "", is then the closest rule. It is pure: `strait check` prints
// its result, and Parse refuses the router with the same rule.
//
// MM2 applies the router to the name its replication policy has already
// given the record's topic, so the rule must undo the policy: with
// IdentityReplicationPolicy the router's regex and replacement become the
// rule as they are; with DefaultReplicationPolicy the remote name is
// "<source><separator><topic>", and the conversion handles a regex that
// spells out that prefix (^A\.(.*)$) or captures the whole name in one
// group (^(.*)$, whose group then gets the prefix back in the replacement).
// Other regexes are left to the user. Java's replacement syntax ($1,
// ${name}, \x) is rewritten as the rule's (${1}, ${name}, x).
func RegexRouterRules(f *Flow) (rule string, problems []string) {
	var routers []Transform
	for _, t := range f.Transforms {
		if isRegexRouter(t.Type) {
			routers = append(routers, t)
		}
	}
	if len(routers) == 0 {
		return "", nil
	}
	if len(routers) > 1 {
		names := make([]string, len(routers))
		for i, t := range routers {
			names[i] = fmt.Sprintf("%q", t.Name)
		}
		problems = append(problems, fmt.Sprintf("it chains %d RegexRouters (%s), and Strait gives each topic one rule: combine them into one rule", len(routers), strings.Join(names, ", ")))
	}
	t := routers[0]
	regex, hasRegex := t.Props["regex"]
	repl, hasRepl := t.Props["replacement"]
	switch {
	case t.Redacted:
		return "", append(problems, "its settings come through a config provider, which Strait does not print")
	case !hasRegex || regex == "":
		return "", append(problems, fmt.Sprintf("transforms.%s.regex is not set (Connect requires it)", t.Name))
	case !hasRepl:
		return "", append(problems, fmt.Sprintf("transforms.%s.replacement is not set (Connect requires it)", t.Name))
	}
	if t.Props["predicate"] != "" {
		problems = append(problems, fmt.Sprintf("it renames only the records its predicate %q selects, and a rule renames every record of a topic", t.Props["predicate"]))
	}
	if f.Policy.Rules != nil {
		problems = append(problems, "the flow sets strait.rename.rules too, which would name the topics before the router: merge the two into one list")
	}
	if _, err := policy.CompilePattern([]string{regex}); err != nil {
		return "", append(problems, fmt.Sprintf("its regex: %v", err))
	}
	re := regexp.MustCompile(`^(?:` + regex + `)$`) // CompilePattern accepted it
	fallback, err := policy.New(f.Policy.Class, f.Policy.Separator, f.Policy.InternalSeparatorEnabled, f.Source)
	if err != nil {
		return "", append(problems, err.Error())
	}

	// What the router does in MM2 to names Strait never renames.
	for _, internal := range []string{
		fallback.FormatRemoteTopic(f.Source, policy.HeartbeatsTopic), policy.HeartbeatsTopic, fallback.CheckpointsTopic(f.Source),
	} {
		if re.MatchString(internal) {
			problems = append(problems, fmt.Sprintf("in MM2 the router also renames %q, which Strait never renames", internal))
		}
	}

	pattern := regex
	prefixed := map[int]bool{} // groups that hold the policy's prefix in MM2, not in the rule
	prefix := ""
	if f.Policy.Class == DefaultPolicyClass {
		prefix = f.Source + f.Policy.Separator
		rest, how := stripLiteralPrefix(regex, prefix)
		switch {
		case how == prefixNever:
			return "", problems
		case how == prefixStripped:
			pattern = "^" + rest
			prefixed[0] = true
		default:
			g, ok := wholeNameGroup(regex)
			if !ok {
				return "", append(problems, fmt.Sprintf("with DefaultReplicationPolicy the router sees remote names %q, and Strait converts only a regex that starts with that prefix written out (^%s(.*)$) or one group around the whole name (^(.*)$)",
					prefix+"<topic>", regexp.QuoteMeta(prefix)))
			}
			prefixed[0], prefixed[g] = true, true
		}
	}
	tmpl, msg := javaReplacement(repl, re, prefixed, prefix)
	if msg != "" {
		return "", append(problems, msg)
	}
	value := "re:" + pattern + "=" + tmpl
	if _, err := policy.ParseRules(value); err != nil {
		problems = append(problems, fmt.Sprintf("the equivalent rule is not accepted: %v", err))
	}
	return strings.ReplaceAll(value, `\`, `\\`), problems
}

// prefixResult is how a regex begins relative to a literal prefix.
type prefixResult int

const (
	prefixUnknown  prefixResult = iota // it does not spell the prefix out
	prefixStripped                     // it spells the prefix out; the rest follows
	prefixNever                        // it spells out something else: no name with the prefix matches
)

// stripLiteralPrefix removes from a Java regex the tokens that match exactly
// the characters of prefix (literal or escaped characters, or "."), after an
// optional ^ or \A, and returns the rest.
func stripLiteralPrefix(regex, prefix string) (string, prefixResult) {
	if topLevelBar(regex) {
		return "", prefixUnknown
	}
	s := regex
	if rest, ok := strings.CutPrefix(s, `\A`); ok {
		s = rest
	} else {
		s = strings.TrimPrefix(s, "^")
	}
	i := 0
	for consumed := 0; consumed < len(prefix); consumed++ {
		if i >= len(s) {
			return "", prefixNever // the regex ends before the prefix does: it matches no longer name
		}
		c, n, any := s[i], 1, false
		switch {
		case c == '\\':
			if i+1 >= len(s) || isAlnum(s[i+1]) {
				return "", prefixUnknown // a class such as \d, or \Q
			}
			c, n = s[i+1], 2
		case c == '.':
			any = true
		case strings.IndexByte(`()[]{}*+?|^$`, c) >= 0:
			return "", prefixUnknown
		}
		if i+n < len(s) && strings.IndexByte("*+?{", s[i+n]) >= 0 {
			return "", prefixUnknown // a quantified token
		}
		if !any && c != prefix[consumed] {
			return "", prefixNever
		}
		i += n
	}
	rest := s[i:]
	if rest == "" || rest == "$" || rest == `\z` {
		return "", prefixNever // only the prefix itself, which is no remote name
	}
	return rest, prefixStripped
}

func isAlnum(c byte) bool { return c >= '0' && c <= '9' || isLetter(c) }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// topLevelBar reports whether a regex has an alternation outside groups and
// classes, which binds looser than any prefix.
func topLevelBar(s string) bool {
	depth, inClass := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

// wholeNameGroup returns the group of a regex that is one group around .*
// or .+, anchors aside: it captures the whole remote name.
func wholeNameGroup(regex string) (int, bool) {
	tree, err := syntax.Parse(regex, syntax.Perl)
	if err != nil {
		return 0, false
	}
	items := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpConcat {
		items = tree.Sub
	}
	var capture *syntax.Regexp
	for _, it := range items {
		switch it.Op {
		case syntax.OpBeginText, syntax.OpEndText:
		case syntax.OpCapture:
			if capture != nil {
				return 0, false
			}
			capture = it
		default:
			return 0, false
		}
	}
	if capture == nil {
		return 0, false
	}
	body := capture.Sub[0]
	if (body.Op == syntax.OpStar || body.Op == syntax.OpPlus) &&
		(body.Sub[0].Op == syntax.OpAnyCharNotNL || body.Sub[0].Op == syntax.OpAnyChar) {
		return capture.Cap, true
	}
	return 0, false
}

// javaReplacement rewrites a Java replacement string (Matcher.replaceFirst:
// $n read greedily while it is a group of re, ${name}, \x for x) in the
// rule syntax. Groups in prefixed get prefix in front, because in MM2 they
// held the policy's prefix.
func javaReplacement(repl string, re *regexp.Regexp, prefixed map[int]bool, prefix string) (string, string) {
	var b strings.Builder
	groups := re.NumSubexp()
	ref := func(g int, text string) {
		if prefixed[g] {
			b.WriteString(prefix)
		}
		b.WriteString(text)
	}
	for i := 0; i < len(repl); {
		c := repl[i]
		switch {
		case c == '\\' && i+1 < len(repl):
			b.WriteByte(repl[i+1])
			i += 2
		case c == '\\':
			return "", "its replacement ends in a backslash, which Java rejects"
		case c == '$' && i+1 < len(repl) && repl[i+1] == '{':
			end := strings.IndexByte(repl[i+2:], '}')
			if end < 0 {
				return "", `its replacement has "${" without "}", which Java rejects`
			}
			name := repl[i+2 : i+2+end]
			g := re.SubexpIndex(name)
			if g < 0 || name == "" || !isLetter(name[0]) {
				return "", fmt.Sprintf("its replacement names group %q, which its regex does not have", name)
			}
			ref(g, "${"+name+"}")
			i += 2 + end + 1
		case c == '$' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			g, j := policy.JavaGroupNumber(repl, i, groups)
			if g > groups {
				return "", fmt.Sprintf("its replacement uses group %d, which its regex does not have", g)
			}
			ref(g, fmt.Sprintf("${%d}", g))
			i = j
		case c == '$':
			return "", `its replacement has a "$" that starts no group, which Java rejects`
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), ""
}
