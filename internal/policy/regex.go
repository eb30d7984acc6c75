package policy

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// Pattern is a list of Java regexes compiled the way MM2 compiles a regex list property
// (MirrorUtils.compilePatternList): the elements joined with "|" into one expression that must
// match the whole name. An empty list matches nothing, so that a blank property selects
// nothing. The zero Pattern and a nil *Pattern match nothing.
type Pattern struct {
	list []string
	re   *regexp.Regexp // nil: matches nothing
}

// CompilePattern compiles list as MM2 does. The join happens before compiling, as in Java, so
// the elements need not be valid on their own (["(a", "b)"] is the expression "(a|b)").
// Constructs that Go's RE2 engine cannot run, or reads differently from Java, are rejected with
// a *PatternError naming the element that contains them (see the package documentation).
func CompilePattern(list []string) (*Pattern, error) {
	if len(list) == 0 {
		return &Pattern{}, nil
	}
	joined := strings.Join(list, "|")
	if f, ok := findJavaOnly(joined); ok {
		return nil, &PatternError{Pattern: elementAt(list, joined, f.at), Construct: f.construct, Reason: f.reason}
	}
	// Compile the joined list alone first: anchoring it inside a group could make a list
	// such as ["a)(b"] compile although Java rejects it.
	if _, err := regexp.Compile(joined); err != nil {
		return nil, compileError(list, joined, err)
	}
	anchored := joined
	if endsInQuote(joined) {
		// Java and Go both quote to the end after an unterminated \Q; close the quote so that
		// the anchoring ")$" stays syntax.
		anchored += `\E`
	}
	re, err := regexp.Compile(`^(?:` + anchored + `)$`)
	if err != nil {
		return nil, &PatternError{Pattern: joined, Err: err}
	}
	return &Pattern{list: slices.Clone(list), re: re}, nil
}

// Matches reports whether the whole of name matches one of the patterns.
func (p *Pattern) Matches(name string) bool {
	return p != nil && p.re != nil && p.re.MatchString(name)
}

// List returns a copy of the patterns as given.
func (p *Pattern) List() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.list)
}

// String returns the list joined with "|", the expression MM2 compiles.
func (p *Pattern) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(p.list, "|")
}

// PatternError reports a regex that Strait cannot compile with the meaning Java MM2 gives it.
// Callers add the property key, e.g. fmt.Errorf("topics.exclude: %w", err).
type PatternError struct {
	// Pattern is the list element at fault, or the whole list joined with "|" when no single
	// element is.
	Pattern string
	// Construct names the Java construct that Go cannot honour, e.g. `lookahead "(?="`; empty
	// for a plain syntax error.
	Construct string
	// Reason says why the construct is rejected and how to rewrite it; for a syntax error, an
	// optional hint about the Java habit that likely caused it.
	Reason string
	// Err is Go's compile error when Construct is empty.
	Err error
}

// Error implements error.
func (e *PatternError) Error() string {
	if e.Construct != "" {
		return fmt.Sprintf("pattern %q uses %s: %s", e.Pattern, e.Construct, e.Reason)
	}
	hint := ""
	if e.Reason != "" {
		hint = "; " + e.Reason
	}
	return fmt.Sprintf("pattern %q is not a valid Go (RE2) regular expression: %v%s; Strait reads MM2's Java regexes with Go's engine, see the supported syntax at https://pkg.go.dev/regexp/syntax",
		e.Pattern, e.Err, hint)
}

// Unwrap returns Go's compile error, if any.
func (e *PatternError) Unwrap() error { return e.Err }

// compileError attributes Go's error to the first element that fails on its own, else to the
// joined list.
func compileError(list []string, joined string, err error) error {
	for _, el := range list {
		if _, elErr := regexp.Compile(el); elErr != nil {
			return &PatternError{Pattern: el, Err: elErr, Reason: syntaxHint(elErr)}
		}
	}
	return &PatternError{Pattern: joined, Err: err, Reason: syntaxHint(err)}
}

// syntaxHint explains Go errors that Java habits commonly cause.
func syntaxHint(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return ""
	}
	switch {
	case se.Code == syntax.ErrInvalidCharRange && (strings.HasPrefix(se.Expr, `\p`) || strings.HasPrefix(se.Expr, `\P`)):
		return `Java property classes such as \p{Lower}, \p{Alpha}, \p{IsLatin} or \p{javaLowerCase} do not exist in Go: use Go's Unicode names (\p{Ll}, \p{L}, \p{Latin}) or ranges such as [a-z]`
	case se.Code == syntax.ErrInvalidPerlOp && len(se.Expr) > 2 && strings.HasPrefix(se.Expr, "(?") && isASCIILetter(se.Expr[len(se.Expr)-1]):
		return "Go supports only the inline flags i, m and s; Java's x (comments), u (Unicode case) and d (Unix lines) have no Go equivalent, so remove the flag"
	}
	return ""
}

// elementAt returns the element of list that holds byte offset at of joined, or joined when the
// offset falls on a "|" joiner.
func elementAt(list []string, joined string, at int) string {
	start := 0
	for _, el := range list {
		if at >= start && at < start+len(el) {
			return el
		}
		start += len(el) + 1
	}
	return joined
}

// endsInQuote reports whether p ends inside a \Q quote that has no \E.
func endsInQuote(p string) bool {
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], `\Q`):
			end := strings.Index(p[i+2:], `\E`)
			if end < 0 {
				return true
			}
			i += 2 + end + 2
		case p[i] == '\\':
			i += 2
		default:
			i++
		}
	}
	return false
}

// finding is one Java-only construct found by findJavaOnly.
type finding struct {
	at        int // byte offset in the scanned expression
	construct string
	reason    string
}

const (
	noRE2Reason = "Go's RE2 engine does not support it"
	rewriteList = "; rewrite the rule with an include list plus an exclude list (e.g. topics=foo.* with topics.exclude=foobar.* instead of foo(?!bar).*)"
)

// findJavaOnly scans a Java regex for constructs that Go rejects confusingly or accepts with a
// different meaning. It tracks \Q...\E quoting and character classes so that escaped and quoted
// characters are not mistaken for syntax.
func findJavaOnly(p string) (finding, bool) {
	inClass := false
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return finding{}, false // trailing backslash: Go reports it
			}
			if p[i+1] == 'Q' {
				end := strings.Index(p[i+2:], `\E`)
				if end < 0 {
					return finding{}, false // quoted to the end
				}
				i += 2 + end + 2
				continue
			}
			if f, bad := escapeIssue(p, i); bad {
				return f, true
			}
			i += escapeLen(p, i)
			continue
		}
		if inClass {
			switch {
			case c == '[':
				return finding{at: i, construct: `a character class nested in a class "[...[...]...]"`,
					reason: `Java reads it as a union of classes (and [[:alpha:]] as the characters ":alph"), Go as a literal '[' or a POSIX class; flatten the class (e.g. [a-c[x-z]] as [a-cx-z]) or escape the bracket as \[`}, true
			case c == '&' && i+1 < len(p) && p[i+1] == '&':
				return finding{at: i, construct: `class intersection "&&"`,
					reason: `Java reads it as the intersection of two classes, Go as two literal '&'; write out the resulting set of characters, or escape them as \&\&`}, true
			case c == ']':
				inClass = false
			}
			i++
			continue
		}
		switch c {
		case '[':
			i++
			if i < len(p) && p[i] == '^' {
				i++
			}
			if i < len(p) && p[i] == ']' {
				i++ // a leading ']' is a literal in both Java and Go
			}
			inClass = true
		case '(':
			if f, bad := groupIssue(p, i); bad {
				return f, true
			}
			if strings.HasPrefix(p[i:], "(?") {
				i += 2 // the '?' is group syntax, not a quantifier
			} else {
				i++
			}
		case '*', '+', '?':
			if i+1 < len(p) && p[i+1] == '+' {
				return possessive(i, p[i:i+2]), true
			}
			i++
		case '{':
			n := repeatLen(p[i:])
			if n > 0 && i+n < len(p) && p[i+n] == '+' {
				return possessive(i, p[i:i+n+1]), true
			}
			i += max(n, 1)
		default:
			i++
		}
	}
	return finding{}, false
}

func possessive(at int, q string) finding {
	return finding{at: at, construct: fmt.Sprintf("possessive quantifier %q", q),
		reason: noRE2Reason + ` (it never backtracks, so it has no possessive form); use the plain quantifier, checking that the filter still selects the intended names, or escape the characters (\+) to match them literally`}
}

// repeatLen returns the length of a {n}, {n,} or {n,m} repetition at the start of s, or 0.
func repeatLen(s string) int {
	i := 1
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if digits() == 0 {
		return 0
	}
	if i < len(s) && s[i] == ',' {
		i++
		digits()
	}
	if i < len(s) && s[i] == '}' {
		return i + 1
	}
	return 0
}

// groupIssue checks the group opened at p[i] == '('.
func groupIssue(p string, i int) (finding, bool) {
	rest := p[i:]
	for _, g := range []struct{ prefix, name string }{
		{"(?<=", "lookbehind"},
		{"(?<!", "negative lookbehind"},
		{"(?=", "lookahead"},
		{"(?!", "negative lookahead"},
	} {
		if strings.HasPrefix(rest, g.prefix) {
			return finding{at: i, construct: fmt.Sprintf("%s %q", g.name, g.prefix),
				reason: noRE2Reason + " (it has no lookaround, which keeps matching linear-time)" + rewriteList}, true
		}
	}
	if strings.HasPrefix(rest, "(?>") {
		return finding{at: i, construct: `atomic group "(?>"`,
			reason: noRE2Reason + " (it never backtracks, so it has no atomic groups); use a plain group (?:...), checking that the filter still selects the intended names"}, true
	}
	if !strings.HasPrefix(rest, "(?") {
		return finding{}, false
	}
	// Inline flags: (?idmsux-idmsux) or (?flags:...).
	j := 2
	for j < len(rest) && (isASCIILetter(rest[j]) || rest[j] == '-') {
		j++
	}
	if j < len(rest) && (rest[j] == ')' || rest[j] == ':') && strings.ContainsRune(rest[2:j], 'U') {
		return finding{at: i, construct: fmt.Sprintf("the U flag in %q", rest[:j+1]),
			reason: "Java reads it as UNICODE_CHARACTER_CLASS, Go as ungreedy matching, which changes what the pattern selects; remove the flag"}, true
	}
	return finding{}, false
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// javaEscape describes a Java escape that Go lacks (Go rejects it) or reads differently (\v).
func javaEscape(e byte) (name, fix string, ok bool) {
	switch e {
	case 'h':
		return "horizontal white space",
			`Go's RE2 engine has no such escape; write the class out, e.g. [ \t\xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}]`, true
	case 'H':
		return "non-horizontal white space",
			`Go's RE2 engine has no such escape; write the negated class out, e.g. [^ \t\xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}]`, true
	case 'v':
		return "vertical white space",
			`Java reads it as any vertical white space, Go as the vertical tab alone; write the class out, e.g. [\n\x0B\f\r\x85\x{2028}\x{2029}]`, true
	case 'V':
		return "non-vertical white space",
			`Go's RE2 engine has no such escape; write the negated class out, e.g. [^\n\x0B\f\r\x85\x{2028}\x{2029}]`, true
	case 'Z':
		return "end of input before a final line terminator",
			`Go's RE2 engine has no such escape; use \z or $ (names are matched whole anyway)`, true
	case 'R':
		return "any line break",
			`Go's RE2 engine has no such escape; write (?:\r\n|[\n\x0B\f\r\x85\x{2028}\x{2029}])`, true
	case 'X':
		return "a grapheme cluster",
			`Go's RE2 engine has no such escape; match the characters explicitly`, true
	case 'G':
		return "end of the previous match",
			`Go's RE2 engine has no such escape; use ^ (a filter makes a single match from the start)`, true
	case 'e':
		return "the escape character",
			`Go's RE2 engine has no such escape; write \x1B`, true
	case 'c':
		return "a control character",
			`Go's RE2 engine has no such escape; write the character in hex, e.g. \x01 for \cA`, true
	case 'u':
		return "a UTF-16 code unit",
			`Go's RE2 engine has no such escape; write \x{hhhh}, e.g. \x{00E9} for \u00E9`, true
	case 'N':
		return "a character by Unicode name",
			`Go's RE2 engine has no such escape; write the code point as \x{hhhh}`, true
	case 'k':
		return "a named backreference",
			`Go's RE2 engine has no backreferences` + rewriteList, true
	}
	return "", "", false
}

// escapeIssue checks the escape at p[i] == '\\' (not \Q).
func escapeIssue(p string, i int) (finding, bool) {
	e := p[i+1]
	if name, fix, ok := javaEscape(e); ok {
		return finding{at: i, construct: fmt.Sprintf(`%q (Java: %s)`, `\`+string(e), name), reason: fix}, true
	}
	switch {
	case e >= '1' && e <= '9':
		return finding{at: i, construct: fmt.Sprintf(`backreference %q`, p[i:i+2]),
			reason: noRE2Reason + ` (it has no backreferences, and Go would read \12 as an octal escape)` + rewriteList}, true
	case e == '0':
		n := 0
		for n < 3 && i+2+n < len(p) && isOctal(p[i+2+n]) {
			n++
		}
		switch {
		case n == 0:
			return finding{at: i, construct: fmt.Sprintf("%q without octal digits", `\0`),
				reason: `Java rejects it, Go reads it as NUL; write \x00 for NUL`}, true
		case n == 3 && p[i+2] <= '3':
			return finding{at: i, construct: fmt.Sprintf("octal escape %q", p[i:i+5]),
				reason: `Java reads three octal digits after \0, Go only two; write the character in hex as \x{hh}`}, true
		}
	}
	return finding{}, false
}

// escapeLen returns the length of the escape at p[i] == '\\', skipping the braces of \p{..},
// \P{..} and \x{..} so that their content is not read as syntax.
func escapeLen(p string, i int) int {
	e := p[i+1]
	if (e == 'p' || e == 'P' || e == 'x') && i+2 < len(p) && p[i+2] == '{' {
		if end := strings.IndexByte(p[i+2:], '}'); end >= 0 {
			return 2 + end + 1
		}
	}
	return 2
}
