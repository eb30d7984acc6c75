package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
)

// entry is one key of the file with its value and line. Every derived map
// (cluster props, connector config, client roles) points at the entry the
// value came from, so any later problem can name the key and line.
type entry struct {
	key    string // as written in the file
	value  string // after ${provider:...} resolution; not trimmed (spec §1.1)
	line   int    // first line of the logical line
	secret bool   // a credential key, or resolved through a config provider
	text   string // the logical line as written, escapes included
	file   string // the overlay it came from; "" for the configuration file
}

func (e *entry) origin() Origin { return Origin{Key: e.key, Line: e.line, File: e.file} }

// where names the entry's line for a message about another key.
func (e *entry) where() string {
	if e.file != "" {
		return fmt.Sprintf("%s line %d", e.file, e.line)
	}
	return fmt.Sprintf("line %d", e.line)
}

// trimmed is the value as Kafka's ConfigDef sees it.
func (e *entry) trimmed() string { return javaTrim(e.value) }

// show quotes the value for a message, or hides it.
func (e *entry) show() string {
	if e.secret {
		return "[redacted]"
	}
	return strconv.Quote(e.trimmed())
}

// props maps a (possibly stripped or re-prefixed) key to its entry.
type props map[string]*entry

// stripped returns the keys that start with prefix, without it
// (Utils.entriesWithPrefix).
func (p props) stripped(prefix string) props {
	out := props{}
	for k, e := range p {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = e
		}
	}
	return out
}

// putIfAbsent sets k unless it is set.
func (p props) putIfAbsent(k string, e *entry) {
	if _, ok := p[k]; !ok {
		p[k] = e
	}
}

// javaTrim is String.trim: it removes every character <= U+0020 at both
// ends, and nothing else (Go's TrimSpace also removes U+0085 and U+00A0).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// logicalLine is one key/value line of a properties file after `\`
// continuations are joined.
type logicalLine struct {
	text string
	line int // 1-based line where it starts
}

// isPropWhitespace is the whitespace of java.util.Properties.
func isPropWhitespace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingPropWhitespace(s string) string {
	i := 0
	for i < len(s) && isPropWhitespace(s[i]) {
		i++
	}
	return s[i:]
}

// physicalLines splits on \n, \r\n and \r, as java.util.Properties does.
func physicalLines(data string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			lines = append(lines, data[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, data[start:i])
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(data) {
		lines = append(lines, data[start:])
	}
	return lines
}

// oddTrailingBackslashes reports whether s ends in a line continuation.
func oddTrailingBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// logicalLines splits a properties file as java.util.Properties'
// LineReader does: comment and blank lines are skipped (a comment never
// continues), a line ending in an odd number of backslashes continues on the
// next line with its leading whitespace removed, and a continuation at the
// end of the file is dropped.
func logicalLines(data string) []logicalLine {
	data = strings.TrimPrefix(data, "\uFEFF") // a BOM from Windows editors
	lines := physicalLines(data)
	var out []logicalLine
	for i := 0; i < len(lines); i++ {
		start := i + 1
		s := trimLeadingPropWhitespace(lines[i])
		if s == "" || s[0] == '#' || s[0] == '!' {
			continue
		}
		for oddTrailingBackslashes(s) {
			s = s[:len(s)-1]
			if i+1 >= len(lines) {
				break
			}
			i++
			s += trimLeadingPropWhitespace(lines[i])
		}
		if s != "" {
			out = append(out, logicalLine{text: s, line: start})
		}
	}
	return out
}

// parseLine returns the key and value of one logical line. It uses the
// properties library for separators and escapes, one line at a time, so
// that every key keeps its line number.
func parseLine(text string) (key, value string, err error) {
	if text[0] == '=' || text[0] == ':' {
		// The library cannot parse an empty key (and would leak its lexer
		// goroutine trying); java.util.Properties reads it as "".
		return "", "", errEmptyKey
	}
	l := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := l.LoadBytes([]byte(text))
	if err != nil {
		msg := err.Error()
		if _, rest, ok := strings.Cut(msg, "Line 1: "); ok {
			msg = rest
		}
		if strings.Contains(msg, "unicode") {
			msg = `malformed \uXXXX escape: write exactly four hex digits, or \\u for a literal backslash-u`
		}
		return "", "", lineError(msg)
	}
	keys := p.Keys()
	if len(keys) != 1 {
		return "", "", errEmptyKey
	}
	v, _ := p.Get(keys[0])
	return keys[0], v, nil
}

type lineError string

func (e lineError) Error() string { return string(e) }

const errEmptyKey = lineError("the line has no key before its separator: write key = value")

// fileEntries parses a whole properties file into its final entries (the
// last of duplicate keys wins, as in java.util.Properties) in line order.
// dup is called for every key set twice.
func fileEntries(data []byte, bad func(line int, err error), dup func(first, again *entry)) (props, []*entry) {
	byKey := props{}
	var order []*entry
	for _, ll := range logicalLines(string(data)) {
		k, v, err := parseLine(ll.text)
		if err != nil {
			bad(ll.line, err)
			continue
		}
		e := &entry{key: k, value: v, line: ll.line, secret: isSecretKey(k), text: ll.text}
		if prev, ok := byKey[k]; ok && dup != nil {
			dup(prev, e)
		}
		byKey[k] = e
		order = append(order, e)
	}
	final := order[:0:0]
	for _, e := range order {
		if byKey[e.key] == e {
			final = append(final, e)
		}
	}
	return byKey, final
}

// lostRegexEscape returns the first `\d`-style regex escape in the written
// line: java.util.Properties reads `\d` as plain "d", so a regex needs `\\d`.
func (e *entry) lostRegexEscape() string {
	t := e.text
	for i := 0; i+1 < len(t); i++ {
		if t[i] != '\\' {
			continue
		}
		if strings.IndexByte("dDsSwWbB", t[i+1]) >= 0 {
			return t[i : i+2]
		}
		i++ // an escaped character, possibly a backslash
	}
	return ""
}
