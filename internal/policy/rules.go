package policy

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// MaxTopicNameLength is the longest topic name Kafka accepts.
const MaxTopicNameLength = 249

// Rules is an ordered list of rename rules (Strait's strait.rename.rules), parsed by
// ParseRules: the first rule that matches a source topic names its remote topic. There are two
// kinds of rule:
//
//   - exact: orders=prod.orders renames the topic orders, and only it;
//   - regex: re:^legacy-(.*)$=new-$1 renames every topic the Go (RE2) regex matches in full
//     (anchors are optional, as in MM2's topic filters) to the replacement, where $n and ${n}
//     are group n, ${name} a named group and $0 the whole name. $12 is group 12 when the regex
//     has 12 groups and otherwise group 1 followed by "2", as in Java; ${1}2 is explicit.
//
// Rules are separated by commas. A comma inside brackets, as in a{1,3}, belongs to the regex;
// white space around rules, around "=" and after "re:" is ignored. Topic names contain only
// ASCII letters, digits, '.', '_' and '-', so neither part of a rule needs any escaping, and
// any other character outside a regex is an error. Java-only regex constructs are rejected as
// in MM2's filters (CompilePattern).
//
// Every rule must be reversible, so that a remote name leads back to its source topic
// (Invert): an exact rule always is; a regex rule is when everything of the regex outside
// its groups is literal text and the replacement uses every group (or $0). So
// re:^(a|b)-(.*)$=$1.$2 is accepted and re:^(?:a|b)-(.*)$=$1 is not: it would name both a-x
// and b-x "x". ParseRules also rejects two exact rules with one remote name, an exact rule an
// earlier regex rule hides, and an exact rule whose remote name a regex rule also gives to
// another topic. Two topics that regex rules (or a rule and the fallback policy) give the
// same remote name cannot all be found from the rules alone: RemoteNames reports them for
// the topics that exist.
//
// A Rules is immutable and safe for concurrent use.
type Rules struct {
	rules []*rule
}

// rule is one parsed rule. Exactly one of the exact (from, to) and regex (re ...) halves is set.
type rule struct {
	index int    // 1-based position in the list
	text  string // as written, trimmed

	from, to string // exact rule

	re      *regexp.Regexp   // regex rule: the anchored pattern
	tmpl    []piece          // the replacement
	rebuild []piece          // the source name from the groups the replacement holds
	inverse []*regexp.Regexp // the replacement as a regex, greedy then ungreedy
	refs    []int            // group of each capture of inverse, in order
	// groups holds each group the replacement uses as its own regex, anchored:
	// when neither inverse reads a remote name right, candidates cuts it by
	// search. The inverses miss cuts in the middle (${0}0${0} of 000000000000)
	// and values that depend on each other (${2}0${0} of 000, where $0 holds
	// group 2), both found by the fuzzer.
	groups map[int]*regexp.Regexp
	tree   *syntax.Regexp // the parsed pattern
}

// piece is literal text (group < 0) or a group of the match.
type piece struct {
	lit   string
	group int
}

// RuleError is one problem of a rule list: the rule at fault (0 when none is) and why.
// Callers add the property key and line.
type RuleError struct {
	Rule    int    // 1-based position of the rule in the list
	Text    string // the rule as written
	Message string
}

// Error implements error.
func (e *RuleError) Error() string {
	if e.Rule == 0 {
		return e.Message
	}
	return fmt.Sprintf("rule %d (%s): %s", e.Rule, e.Text, e.Message)
}

// RuleErrors is every problem ParseRules found, in rule order.
type RuleErrors []*RuleError

// Error lists the problems, separated by "; ".
func (e RuleErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// ParseRules parses a strait.rename.rules value (see Rules). An empty or blank value is an
// empty list, which renames nothing. On error it returns RuleErrors, one per problem.
func ParseRules(text string) (*Rules, error) {
	rs := &Rules{}
	var errs RuleErrors
	parts := splitRules(text)
	for i, part := range parts {
		r, err := parseRule(i+1, part)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rs.rules = append(rs.rules, r)
	}
	// Conflicts among the rules that parsed are problems too; a rule that failed takes no
	// part in them.
	errs = append(errs, rs.conflicts()...)
	slices.SortStableFunc(errs, func(a, b *RuleError) int { return cmp.Compare(a.Rule, b.Rule) })
	if len(errs) > 0 {
		return nil, errs
	}
	return rs, nil
}

// splitRules splits a value at the commas outside brackets and trims each rule. A blank value
// has no rules.
func splitRules(text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	inClass := false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\\':
			i++ // the escaped character is never a separator
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(text) && text[i+1] == '^' {
				i++
			}
			if i+1 < len(text) && text[i+1] == ']' {
				i++ // a leading ']' is a literal
			}
		case c == '(' || c == '{':
			depth++
		case (c == ')' || c == '}') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(text[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(text[start:]))
}

const ruleForms = "write NAME=NEW-NAME for one topic or re:REGEX=REPLACEMENT for a pattern, e.g. orders=prod.orders or re:^legacy-(.*)$=new-$1"

func parseRule(index int, text string) (*rule, *RuleError) {
	fail := func(format string, args ...any) *RuleError {
		return &RuleError{Rule: index, Text: text, Message: fmt.Sprintf(format, args...)}
	}
	if text == "" {
		return nil, &RuleError{Rule: index, Text: `""`, Message: "the rule is empty: remove the extra comma"}
	}
	r := &rule{index: index, text: text}
	if body, ok := strings.CutPrefix(text, "re:"); ok {
		i := strings.LastIndexByte(body, '=')
		if i < 0 {
			return nil, fail(`no "=" between the regex and the replacement: %s`, ruleForms)
		}
		pattern, repl := strings.TrimSpace(body[:i]), strings.TrimSpace(body[i+1:])
		if err := r.compileRegex(pattern, repl); err != "" {
			return nil, fail("%s", err)
		}
		return r, nil
	}
	from, to, ok := strings.Cut(text, "=")
	if !ok {
		return nil, fail("no \"=\": %s", ruleForms)
	}
	if strings.Contains(to, "=") {
		return nil, fail(`more than one "=": %s`, ruleForms)
	}
	r.from, r.to = strings.TrimSpace(from), strings.TrimSpace(to)
	if err := checkTopicName(r.from); err != "" {
		if strings.ContainsAny(r.from, `*+?()[]{}|^$\`) {
			return nil, fail("the topic name %q looks like a regex: write re:%s=... to match a pattern", r.from, r.from)
		}
		return nil, fail("the source %s", err)
	}
	if err := checkTopicName(r.to); err != "" {
		return nil, fail("the remote name %s", err)
	}
	if why := neverRenamed(r.from); why != "" {
		return nil, fail("%q is %s, which Strait never renames: remove the rule", r.from, why)
	}
	if why := neverRenamed(r.to); why != "" {
		return nil, fail("the remote name %q is %s: name the remote topic like an ordinary topic", r.to, why)
	}
	if r.from == r.to {
		return nil, fail("the rule keeps the name: remove it (a topic no rule matches keeps the flow's replication.policy.class naming)")
	}
	return r, nil
}

// compileRegex builds a regex rule, or says what is wrong with it.
func (r *rule) compileRegex(pattern, repl string) string {
	switch {
	case pattern == "":
		return "the regex is empty: " + ruleForms
	case repl == "":
		return "the replacement is empty: give the remote name, e.g. re:^legacy-(.*)$=new-$1"
	case strings.ContainsAny(pattern, " \t"):
		return "the regex contains white space, which no topic name does: remove it"
	}
	p, err := CompilePattern([]string{pattern})
	if err != nil {
		var pe *PatternError
		if errors.As(err, &pe) && pe.Construct != "" && strings.HasSuffix(pe.Reason, rewriteList) {
			// The advice for filters (an include plus an exclude list) does not fit a rule.
			return fmt.Sprintf("pattern %q uses %s: %s; write the regex without it, or write exact rules",
				pe.Pattern, pe.Construct, strings.TrimSuffix(pe.Reason, rewriteList))
		}
		return err.Error()
	}
	r.re = p.re
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return err.Error() // CompilePattern accepted it, so this cannot happen
	}
	r.tree = tree
	tmpl, msg := parseTemplate(repl, r.re)
	if msg != "" {
		return msg
	}
	r.tmpl = tmpl
	if why := neverRenamedTemplate(tmpl); why != "" {
		return fmt.Sprintf("every remote name it makes is %s: name remote topics like ordinary topics", why)
	}
	return r.buildInverse()
}

// parseTemplate parses a replacement against the groups of re.
func parseTemplate(repl string, re *regexp.Regexp) ([]piece, string) {
	var out []piece
	addLit := func(s string) {
		if n := len(out); n > 0 && out[n-1].group < 0 {
			out[n-1].lit += s
			return
		}
		out = append(out, piece{lit: s, group: -1})
	}
	groups := re.NumSubexp()
	for i := 0; i < len(repl); {
		c := repl[i]
		if c != '$' {
			if !isTopicChar(c) {
				return nil, fmt.Sprintf("the replacement has %q, which Kafka does not allow in a topic name (only ASCII letters, digits, '.', '_' and '-'); a group is $1 or ${name}", rune(c))
			}
			addLit(string(c))
			i++
			continue
		}
		switch {
		case i+1 < len(repl) && repl[i+1] == '{':
			end := strings.IndexByte(repl[i+2:], '}')
			if end < 0 {
				return nil, `the replacement has "${" without "}": write ${1} or ${name}`
			}
			name := repl[i+2 : i+2+end]
			g := -1
			if n, err := strconv.Atoi(name); err == nil && name != "" && name[0] != '-' && name[0] != '+' {
				g = n
				if g > groups {
					return nil, fmt.Sprintf("the replacement uses group %d, but the regex has %s", g, groupCount(groups))
				}
			} else if g = re.SubexpIndex(name); g < 0 {
				return nil, fmt.Sprintf("the replacement uses group %q, but the regex has no group of that name (name one with (?P<%s>...))", name, name)
			}
			out = append(out, piece{group: g})
			i += 2 + end + 1
		case i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			// Java's appendReplacement: the first digit, then more digits while the number
			// is still a group of the regex.
			g, j := JavaGroupNumber(repl, i, groups)
			if g > groups {
				return nil, fmt.Sprintf("the replacement uses group %d, but the regex has %s", g, groupCount(groups))
			}
			out = append(out, piece{group: g})
			i = j
		default:
			return nil, `the replacement has a "$" that starts no group: write $1, ${1} or ${name} (a topic name cannot contain "$")`
		}
	}
	return out, ""
}

func groupCount(n int) string {
	switch n {
	case 0:
		return "no groups: capture with (...)"
	case 1:
		return "only 1 group"
	}
	return fmt.Sprintf("only %d groups", n)
}

// buildInverse checks that the rule is reversible and builds its inverse: a regex made of the
// replacement's literal text and, for each group it uses, that group's own regex. A remote
// name matched by it gives each group's value, from which the source name is rebuilt.
func (r *rule) buildInverse() string {
	used := map[int]bool{}
	for _, p := range r.tmpl {
		if p.group >= 0 {
			used[p.group] = true
		}
	}
	if used[0] {
		r.rebuild = []piece{{group: 0}}
	} else {
		items := []*syntax.Regexp{r.tree}
		if r.tree.Op == syntax.OpConcat {
			items = r.tree.Sub
		}
		for _, it := range items {
			switch it.Op {
			case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine,
				syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			case syntax.OpLiteral:
				if it.Flags&syntax.FoldCase != 0 {
					return irreversible(fmt.Sprintf("the part %q ignores case, so it matches several spellings", it.String()))
				}
				r.rebuild = append(r.rebuild, piece{lit: string(it.Rune), group: -1})
			case syntax.OpCapture:
				if !used[it.Cap] {
					return irreversible(fmt.Sprintf("group %d is not used in the replacement", it.Cap))
				}
				r.rebuild = append(r.rebuild, piece{group: it.Cap})
			case syntax.OpQuest:
				// An optional group is empty when it took no part: (a)?b still rebuilds.
				if c := it.Sub[0]; c.Op == syntax.OpCapture && used[c.Cap] {
					r.rebuild = append(r.rebuild, piece{group: c.Cap})
					break
				}
				return irreversible(fmt.Sprintf("outside the groups the replacement uses, the regex has %q, which matches different texts", partText(it)))
			default:
				return irreversible(fmt.Sprintf("outside the groups the replacement uses, the regex has %q, which matches different texts", partText(it)))
			}
		}
	}
	for i := 1; i < len(r.tmpl); i++ {
		left, right := r.tmpl[i-1], r.tmpl[i]
		if left.group < 0 || right.group < 0 {
			continue
		}
		if _, fixed := fixedLength(groupTree(r.tree, left.group)); !fixed {
			return irreversible(fmt.Sprintf("the replacement joins group %d and group %d with nothing between them while group %d matches texts of different lengths", left.group, right.group, left.group))
		}
	}
	optional := optionalGroups(r.tree)
	var b strings.Builder
	b.WriteString("^")
	for _, p := range r.tmpl {
		if p.group < 0 {
			b.WriteString(regexp.QuoteMeta(p.lit))
			continue
		}
		sub := plain(groupTree(r.tree, p.group)).String()
		if optional[p.group] {
			sub = "(?:" + sub + ")?" // a group that took no part is empty
		}
		b.WriteString("(" + sub + ")")
		r.refs = append(r.refs, p.group)
	}
	b.WriteString("$")
	r.groups = map[int]*regexp.Regexp{}
	for _, g := range r.refs {
		if r.groups[g] != nil {
			continue
		}
		sub := plain(groupTree(r.tree, g)).String()
		if optional[g] {
			sub = "(?:" + sub + ")?"
		}
		re, err := regexp.Compile("^(?:" + sub + ")$")
		if err != nil {
			return irreversible("a group cannot be read back as a regex: " + err.Error())
		}
		r.groups[g] = re
	}
	for _, flags := range []string{"", "(?U)"} {
		inv, err := regexp.Compile(flags + b.String())
		if err != nil {
			return irreversible("its replacement cannot be read back as a regex: " + err.Error())
		}
		r.inverse = append(r.inverse, inv)
	}
	return ""
}

func irreversible(why string) string {
	return "the rule cannot be reversed (" + why + "): two topics could get one remote name, and a remote name could not be traced back to its source topic; " +
		"capture every part that varies in a group the replacement uses (e.g. re:^(a|b)-(.*)$=$1.$2 rather than re:^(?:a|b)-(.*)$=$1), or write exact rules"
}

// partText prints a part of a regex for a message, an alternation in its group.
func partText(re *syntax.Regexp) string {
	if re.Op == syntax.OpAlternate {
		return "(?:" + re.String() + ")"
	}
	return re.String()
}

// optionalGroups returns the groups of tree that can take no part in a match.
func optionalGroups(tree *syntax.Regexp) map[int]bool {
	out := map[int]bool{}
	var walk func(re *syntax.Regexp, optional bool)
	walk = func(re *syntax.Regexp, optional bool) {
		if re.Op == syntax.OpCapture && optional {
			out[re.Cap] = true
		}
		switch re.Op {
		case syntax.OpQuest, syntax.OpStar, syntax.OpAlternate:
			optional = true
		case syntax.OpRepeat:
			optional = optional || re.Min == 0
		}
		for _, s := range re.Sub {
			walk(s, optional)
		}
	}
	walk(tree, false)
	return out
}

// fixedLength returns the number of characters every match of re has, if they all have the
// same.
func fixedLength(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		return len(re.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture:
		return fixedLength(re.Sub[0])
	case syntax.OpRepeat:
		n, ok := fixedLength(re.Sub[0])
		return n * re.Min, ok && (re.Min == re.Max || n == 0)
	case syntax.OpConcat:
		total := 0
		for _, s := range re.Sub {
			n, ok := fixedLength(s)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	case syntax.OpAlternate:
		first := -1
		for _, s := range re.Sub {
			n, ok := fixedLength(s)
			if !ok || first >= 0 && n != first {
				return 0, false
			}
			first = n
		}
		return first, first >= 0
	}
	return 0, false
}

// groupTree returns the regex of group g of tree (g = 0: the whole tree).
func groupTree(tree *syntax.Regexp, g int) *syntax.Regexp {
	if g == 0 {
		return tree
	}
	var find func(re *syntax.Regexp) *syntax.Regexp
	find = func(re *syntax.Regexp) *syntax.Regexp {
		if re.Op == syntax.OpCapture && re.Cap == g {
			return re.Sub[0]
		}
		for _, s := range re.Sub {
			if f := find(s); f != nil {
				return f
			}
		}
		return nil
	}
	if f := find(tree); f != nil {
		return f
	}
	return &syntax.Regexp{Op: syntax.OpNoMatch}
}

// plain returns a copy of re without captures (so the inverse numbers only its own groups)
// and without anchors (which would stop it matching inside the inverse).
func plain(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return plain(re.Sub[0])
	case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		c.Sub[i] = plain(s)
	}
	c.Sub0 = [1]*syntax.Regexp{}
	return &c
}

// conflicts finds the rule sets that give two topics one remote name, or that hold a rule
// which never applies, as far as the exact rules show.
func (rs *Rules) conflicts() RuleErrors {
	var errs RuleErrors
	from := map[string]*rule{}
	to := map[string]*rule{}
	for _, r := range rs.rules {
		if r.re != nil {
			continue
		}
		fail := func(format string, args ...any) {
			errs = append(errs, &RuleError{Rule: r.index, Text: r.text, Message: fmt.Sprintf(format, args...)})
		}
		if prev := from[r.from]; prev != nil {
			fail("rule %d (%s) already renames %q: keep one of the two", prev.index, prev.text, r.from)
			continue
		}
		from[r.from] = r
		if earlier := rs.firstMatch(r.from); earlier != r {
			fail("it never applies: rule %d (%s) matches %q first; put the exact rule before it", earlier.index, earlier.text, r.from)
			continue
		}
		if prev := to[r.to]; prev != nil {
			fail("rule %d (%s) already names a remote topic %q: two topics cannot share one remote topic; give each its own name", prev.index, prev.text, r.to)
			continue
		}
		to[r.to] = r
	others:
		for _, other := range rs.rules {
			if other.re == nil {
				continue
			}
			for x := range other.candidates(r.to) {
				if got, by, ok := rs.rename(x); ok && got == r.to && by == other && x != r.from {
					fail("rule %d (%s) gives topic %q the same remote name %q: two topics cannot share one remote topic; give each its own name", other.index, other.text, x, r.to)
					continue others
				}
			}
		}
	}
	return errs
}

// firstMatch returns the first rule that matches topic, or nil.
func (rs *Rules) firstMatch(topic string) *rule {
	_, r, _ := rs.rename(topic)
	return r
}

// Rename returns the remote name the first matching rule gives topic; false when no rule
// matches it. It knows nothing of heartbeats and internal topics, which Renaming never
// renames.
func (rs *Rules) Rename(topic string) (string, bool) {
	n, _, ok := rs.rename(topic)
	return n, ok
}

func (rs *Rules) rename(topic string) (string, *rule, bool) {
	if rs == nil {
		return "", nil, false
	}
	for _, r := range rs.rules {
		if r.re == nil {
			if topic == r.from {
				return r.to, r, true
			}
			continue
		}
		if m := r.re.FindStringSubmatchIndex(topic); m != nil {
			return expand(r.tmpl, topic, m), r, true
		}
	}
	return "", nil, false
}

// expand builds a replacement from the submatch indexes m of s; a group that took no part in
// the match is empty, as in Java.
func expand(tmpl []piece, s string, m []int) string {
	var b strings.Builder
	for _, p := range tmpl {
		if p.group < 0 {
			b.WriteString(p.lit)
		} else if lo := m[2*p.group]; lo >= 0 {
			b.WriteString(s[lo:m[2*p.group+1]])
		}
	}
	return b.String()
}

// candidates yields the source names rule r could have given remote, unverified: the
// readings of the greedy and the ungreedy inverse first, then, when the caller wants more,
// every cut that splits finds. When neither inverse matches, no cut exists, so a name of
// another shape costs two regex matches.
func (r *rule) candidates(remote string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if r.re == nil {
			if remote == r.to {
				yield(r.from)
			}
			return
		}
		matched := false
		for _, inv := range r.inverse {
			m := inv.FindStringSubmatch(remote)
			if m == nil {
				continue
			}
			matched = true
			if vals, ok := r.consistent(m[1:]); ok && !yield(r.source(vals)) {
				return
			}
		}
		if matched {
			r.splits(remote, yield)
		}
	}
}

// consistent maps the captures of an inverse to the groups they read, false when two
// copies of one group differ.
func (r *rule) consistent(captures []string) (map[int]string, bool) {
	vals := map[int]string{}
	for i, g := range r.refs {
		if v, seen := vals[g]; seen && v != captures[i] {
			return nil, false
		}
		vals[g] = captures[i]
	}
	return vals, true
}

// source rebuilds a source name from the values of the groups the
// replacement uses.
func (r *rule) source(vals map[int]string) string {
	var b strings.Builder
	for _, p := range r.rebuild {
		if p.group < 0 {
			b.WriteString(p.lit)
		} else {
			b.WriteString(vals[p.group])
		}
	}
	return b.String()
}

// splits yields, until yield returns false, the source names of every way of cutting remote
// into the replacement's literal text and group values, each value matching its group's
// regex and every copy of a group equal. Topic names are at most 249 characters and rules
// have few groups, and the literal text prunes most cuts.
func (r *rule) splits(remote string, yield func(string) bool) {
	vals := map[int]string{}
	var walk func(i int, rest string) bool // false: stop
	walk = func(i int, rest string) bool {
		if i == len(r.tmpl) {
			return rest != "" || yield(r.source(vals))
		}
		p := r.tmpl[i]
		switch v, known := vals[p.group]; {
		case p.group < 0:
			return !strings.HasPrefix(rest, p.lit) || walk(i+1, rest[len(p.lit):])
		case known:
			return !strings.HasPrefix(rest, v) || walk(i+1, rest[len(v):])
		}
		for n := 0; n <= len(rest); n++ {
			if v := rest[:n]; r.groups[p.group].MatchString(v) {
				vals[p.group] = v
				more := walk(i+1, rest[n:])
				delete(vals, p.group)
				if !more {
					return false
				}
			}
		}
		return true
	}
	walk(0, remote)
}

// Invert returns a source topic that the rules give the remote name remote (Rename(topic) ==
// remote); false when no rule gives that name. When several topics get that name (which
// ParseRules cannot always rule out, see Rules) it returns the first one the rules' inverses
// find, trying the rules in order.
func (rs *Rules) Invert(remote string) (string, bool) {
	return rs.invert(remote, func(string) bool { return true })
}

// invert is Invert restricted to the topics accept allows.
func (rs *Rules) invert(remote string, accept func(string) bool) (string, bool) {
	if rs == nil {
		return "", false
	}
	for _, r := range rs.rules {
		for x := range r.candidates(remote) {
			if got, ok := rs.Rename(x); ok && got == remote && accept(x) {
				return x, true
			}
		}
	}
	return "", false
}

// Len returns the number of rules.
func (rs *Rules) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// String returns the rules as written, joined with ", ": a value ParseRules reads back as the
// same rules.
func (rs *Rules) String() string {
	if rs == nil {
		return ""
	}
	texts := make([]string, len(rs.rules))
	for i, r := range rs.rules {
		texts[i] = r.text
	}
	return strings.Join(texts, ", ")
}

// isTopicChar reports whether Kafka allows c in a topic name.
func isTopicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// checkTopicName says why name is not a valid Kafka topic name, or returns "".
func checkTopicName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case name == "." || name == "..":
		return fmt.Sprintf("%q is not a valid topic name", name)
	case len(name) > MaxTopicNameLength:
		return fmt.Sprintf("%q is longer than Kafka's limit of %d characters", name, MaxTopicNameLength)
	}
	for i := 0; i < len(name); i++ {
		if !isTopicChar(name[i]) {
			return fmt.Sprintf("%q has %q, which Kafka does not allow in a topic name (only ASCII letters, digits, '.', '_' and '-')", name, rune(name[i]))
		}
	}
	return ""
}

// neverRenamed says why Strait never renames a topic of this name (a heartbeats topic, or an
// internal one whatever the separator), or returns "".
func neverRenamed(name string) string {
	switch {
	case looksLikeHeartbeat(name):
		return `a heartbeats topic (its name ends in "heartbeats")`
	case strings.HasPrefix(name, "__"), strings.HasPrefix(name, "."),
		strings.HasSuffix(name, "-internal"), strings.HasSuffix(name, internalSuffixDot):
		return "an internal topic"
	}
	return ""
}

// neverRenamedTemplate says why every name tmpl makes is one Strait never renames.
func neverRenamedTemplate(tmpl []piece) string {
	if first := tmpl[0]; first.group < 0 && (strings.HasPrefix(first.lit, "__") || strings.HasPrefix(first.lit, ".")) {
		return "an internal topic"
	}
	if last := tmpl[len(tmpl)-1]; last.group < 0 {
		return neverRenamed("x" + last.lit)
	}
	return ""
}

// JavaGroupNumber reads the group number of the "$n" reference at s[i] (a
// '$' followed by a digit) as Java's Matcher.appendReplacement does: the
// first digit, then more digits while the number is still a group of a
// regex with groups groups. It returns the number and the index after it;
// a number above groups is the caller's error.
func JavaGroupNumber(s string, i, groups int) (group, next int) {
	group, next = int(s[i+1]-'0'), i+2
	for next < len(s) && s[next] >= '0' && s[next] <= '9' {
		n := group*10 + int(s[next]-'0')
		if n > groups {
			break
		}
		group, next = n, next+1
	}
	return group, next
}
