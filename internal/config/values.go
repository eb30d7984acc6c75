package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
)

// Typed value parsing with Kafka ConfigDef semantics (spec §1.1): values
// arrive trimmed.

var listSep = regexp.MustCompile(`\s*,\s*`)

// parseList is ConfigDef's LIST: an empty string is an empty list; otherwise
// split on `\s*,\s*`, keeping empty elements (a trailing comma gives "").
func parseList(s string) []string {
	if s == "" {
		return []string{}
	}
	return listSep.Split(s, -1)
}

// parseBool is ConfigDef's BOOLEAN: true or false in any case.
func parseBool(s string) (v, ok bool) {
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// parseBoolean is Java's Boolean.parseBoolean: only "true", in any case and
// untrimmed, is true.
func parseBoolean(s string) bool { return strings.EqualFold(s, "true") }

// parseInt parses a Java int/short/long (optional sign, decimal digits) that
// must fit in bits.
func parseInt(s string, bits int) (int64, error) {
	v, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return v, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		return 0, fmt.Errorf("is out of range (%d to %d)", lo, hi)
	}
	return 0, errors.New("is not an integer")
}

// javaOnly reports regex syntax that Java's engine accepts and Go's RE2
// rejects or reads differently, so a filter never silently changes meaning.
func javaOnly(re string) (what, hint string) {
	inClass := false
	for i := 0; i < len(re); i++ {
		c := re[i]
		next := byte(0)
		if i+1 < len(re) {
			next = re[i+1]
		}
		switch {
		case c == '\\':
			switch {
			case next >= '1' && next <= '9':
				return `a backreference "\` + string(next) + `"`, "RE2 has no backreferences; match the text explicitly"
			case next == 'k' && i+2 < len(re) && re[i+2] == '<':
				return `a named backreference "\k<"`, "RE2 has no backreferences; match the text explicitly"
			case next == 'Q':
				// \Q...\E quotes literally in both engines.
				end := strings.Index(re[i+2:], `\E`)
				if end < 0 {
					return "", ""
				}
				i += 2 + end + 1
				continue
			}
			i++ // skip the escaped character
		case inClass:
			if c == '&' && next == '&' {
				return `a character class intersection "&&"`, "list the characters of the class explicitly"
			}
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			// A ']' right after '[' or '[^' is a literal in both engines.
			if next == '^' {
				i++
			}
			if i+1 < len(re) && re[i+1] == ']' {
				i++
			}
		case c == '(' && next == '?':
			rest := re[i+2:]
			switch {
			case strings.HasPrefix(rest, "="):
				return `a lookahead "(?="`, "RE2 has no lookaround; rewrite the pattern"
			case strings.HasPrefix(rest, "!"):
				return `a negative lookahead "(?!"`, "RE2 has no lookaround; list what to leave out in the matching .exclude key instead"
			case strings.HasPrefix(rest, "<="):
				return `a lookbehind "(?<="`, "RE2 has no lookaround; rewrite the pattern"
			case strings.HasPrefix(rest, "<!"):
				return `a negative lookbehind "(?<!"`, "RE2 has no lookaround; list what to leave out in the matching .exclude key instead"
			case strings.HasPrefix(rest, ">"):
				return `an atomic group "(?>"`, "use a plain group (?:...)"
			}
		case (c == '*' || c == '+' || c == '?') && next == '+' && i > 0:
			return `a possessive quantifier "` + string(c) + `+"`, "drop the second +: a greedy quantifier matches the same names"
		case c == '}' && next == '+' && closesCount(re[:i]):
			return `a possessive quantifier "}+"`, "drop the +: a greedy quantifier matches the same names"
		}
	}
	return "", ""
}

var countOpen = regexp.MustCompile(`\{\d+(,\d*)?$`)

// closesCount reports whether a '}' after s closes a {n,m} quantifier.
func closesCount(s string) bool { return countOpen.MatchString(s) }

var cutCount = regexp.MustCompile(`\{\d+$`)

// checkRegexList validates the elements of an MM2 filter list (joined with
// | and full-matched by Java). It returns one message per problem.
func checkRegexList(list []string, show func(string) string) []string {
	var msgs []string
	for i, el := range list {
		if cutCount.MatchString(el) && i+1 < len(list) {
			msgs = append(msgs, fmt.Sprintf("regex %s was cut at a comma into %s and %s: MM2 splits lists on commas, so a regex cannot contain {n,m}; use alternatives instead",
				show(el+","+list[i+1]), show(el), show(list[i+1])))
			continue
		}
		if what, hint := javaOnly(el); what != "" {
			msgs = append(msgs, fmt.Sprintf("regex %s uses %s, which Strait's Go regex engine (RE2) does not support: %s", show(el), what, hint))
			continue
		}
		if _, err := regexp.Compile(el); err != nil {
			msgs = append(msgs, fmt.Sprintf("regex %s is not valid: %s", show(el), regexReason(err, show)))
		}
	}
	if msgs == nil {
		if _, err := regexp.Compile("^(?:" + strings.Join(list, "|") + ")$"); err != nil {
			msgs = append(msgs, fmt.Sprintf("the list does not form a valid regex: %s", regexReason(err, show)))
		}
	}
	return msgs
}

// regexReason explains a compile error; show hides the fragment of a
// secret value.
func regexReason(err error, show func(string) string) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return se.Code.String() + " in " + show(se.Expr)
	}
	return "it does not compile"
}

// checkHostPort validates one bootstrap.servers entry.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return errors.New("is not host:port")
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return errors.New("has no valid port (0 to 65535)")
	}
	return nil
}

// bootstrapList splits bootstrap.servers, skipping empty entries as Kafka's
// ClientUtils does.
func bootstrapList(s string) []string {
	var out []string
	for _, el := range parseList(s) {
		if el != "" {
			out = append(out, el)
		}
	}
	return out
}
