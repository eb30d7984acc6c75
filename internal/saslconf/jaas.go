package saslconf

import (
	"fmt"
	"regexp"
	"strings"

	"strait/internal/config"
)

// jaasEntry is the one login module entry of a sasl.jaas.config value:
// `<LoginModuleClass> <flag> key=value ...;`.
type jaasEntry struct {
	Module  string
	Flag    string // lower case: required, requisite, sufficient or optional
	Options []jaasOption
}

// jaasOption is one key=value of an entry. Values may hold passwords, so
// they are kept as secrets; keys are safe to name in messages.
type jaasOption struct {
	Key   string
	Value config.Secret
	Pos   int // 1-based character of the key in the value
}

// get returns the value of option key. As in Java (a HashMap), the last of
// repeated keys wins.
func (e *jaasEntry) get(key string) (string, bool) {
	for i := len(e.Options) - 1; i >= 0; i-- {
		if e.Options[i].Key == key {
			return e.Options[i].Value.Reveal(), true
		}
	}
	return "", false
}

// jaasError is a syntax error at a character of the value. Its message
// never quotes option values, which may be passwords.
type jaasError struct {
	Pos int // 1-based character; 0 when it concerns the whole value
	Msg string
}

func (e *jaasError) Error() string {
	if e.Pos == 0 {
		return e.Msg
	}
	return fmt.Sprintf("syntax error at character %d: %s", e.Pos, e.Msg)
}

// parseJAAS parses a sasl.jaas.config value as Kafka's JaasConfig does with
// java.io.StreamTokenizer, and requires exactly one login module, as Kafka's
// JaasContext does for a client. What StreamTokenizer accepts is accepted
// here with the same meaning; its silent oddities (a quoted value that a new
// line ends, a key that is a number) are errors instead.
func parseJAAS(s string) (*jaasEntry, error) {
	lx := &jaasLexer{s: []rune(s)}
	var entries []*jaasEntry
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(lx, t)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return nil, &jaasError{Msg: "no login module: expected `<LoginModuleClass> required key=\"value\" ...;`"}
	case 1:
		return entries[0], nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = className(e.Module)
	}
	return nil, &jaasError{Msg: fmt.Sprintf("%d login modules (%s); a Kafka client takes exactly one", len(entries), strings.Join(names, ", "))}
}

func parseJAASEntry(lx *jaasLexer, first token) (*jaasEntry, error) {
	if !first.hasText() {
		return nil, &jaasError{Pos: first.pos, Msg: fmt.Sprintf("expected a login module class name, found %s", first.describe())}
	}
	e := &jaasEntry{Module: first.text}
	ft, err := lx.next()
	if err != nil {
		return nil, err
	}
	if !ft.hasText() {
		return nil, &jaasError{Pos: ft.pos, Msg: fmt.Sprintf("expected the control flag (required, requisite, sufficient or optional) after the login module class, found %s", ft.describe())}
	}
	switch f := strings.ToLower(ft.text); f {
	case "required", "requisite", "sufficient", "optional":
		e.Flag = f
	default:
		what := "a quoted string"
		if ft.kind == tokWord && flagLike.MatchString(ft.text) {
			what = fmt.Sprintf("%q", ft.text)
		} else if ft.kind == tokWord {
			what = "a word"
		}
		return nil, &jaasError{Pos: ft.pos, Msg: fmt.Sprintf("invalid control flag %s: expected required, requisite, sufficient or optional", what)}
	}
	after := "the control flag"
	for {
		kt, err := lx.next()
		if err != nil {
			return nil, err
		}
		if kt.kind == tokEOF {
			return nil, &jaasError{Pos: kt.pos, Msg: fmt.Sprintf("the login module entry is not terminated by ';' (after %s)", after)}
		}
		if kt.kind == tokChar && kt.ch == ';' {
			return e, nil
		}
		if !kt.hasText() {
			return nil, &jaasError{Pos: kt.pos, Msg: fmt.Sprintf("expected an option name or ';' after %s, found %s", after, kt.describe())}
		}
		eq, err := lx.next()
		if err != nil {
			return nil, err
		}
		if eq.kind != tokChar || eq.ch != '=' {
			// The word is not named: without its '=' it may be part
			// of an unquoted password.
			return nil, &jaasError{Pos: eq.pos, Msg: fmt.Sprintf("expected '=' after the option name that follows %s, found %s (values with spaces or punctuation must be quoted)", after, eq.describe())}
		}
		vt, err := lx.next()
		if err != nil {
			return nil, err
		}
		// Java takes a quoted option name too; whatever is inside the
		// quotes may be a misplaced value, so messages do not quote it.
		name := kt.text
		if kt.kind == tokQuoted {
			name = fmt.Sprintf("(a quoted name at character %d)", kt.pos)
		}
		switch {
		case vt.kind == tokNumber:
			return nil, &jaasError{Pos: vt.pos, Msg: fmt.Sprintf("the value of option %s must be quoted: Java's JAAS parser does not take an unquoted value that starts with a digit, '.' or '-'", name)}
		case !vt.hasText():
			return nil, &jaasError{Pos: vt.pos, Msg: fmt.Sprintf("expected the value of option %s, found %s", name, vt.describe())}
		}
		e.Options = append(e.Options, jaasOption{Key: kt.text, Value: config.NewSecret(vt.text), Pos: kt.pos})
		after = "option " + name
	}
}

var (
	flagLike  = regexp.MustCompile(`^[A-Za-z]{1,20}$`)
	javaClass = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)+$`)
)

// className returns a login module name quoted for a message, or a
// placeholder when it does not look like a Java class name: a value that is
// not a JAAS line at all may be a bare password.
func className(s string) string {
	if javaClass.MatchString(s) {
		return s
	}
	return "(a first word that is not a Java class name)"
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // StreamTokenizer TT_WORD
	tokQuoted         // a '"' or '\'' string
	tokNumber         // TT_NUMBER: sval is null in Java
	tokChar           // an ordinary character such as '=' or ';'
)

type token struct {
	kind tokKind
	text string // word or quoted string
	ch   rune   // tokChar
	pos  int    // 1-based character where the token starts
}

// hasText reports whether Java's StreamTokenizer.sval is set: a word or a
// quoted string.
func (t token) hasText() bool { return t.kind == tokWord || t.kind == tokQuoted }

// describe names the token for a message without quoting any text.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the value"
	case tokWord:
		return "a word"
	case tokQuoted:
		return "a quoted string"
	case tokNumber:
		return "a number"
	}
	if t.ch < ' ' || t.ch == 0x7f {
		return fmt.Sprintf("character %U", t.ch)
	}
	return fmt.Sprintf("%q", t.ch)
}

// jaasLexer is the subset of java.io.StreamTokenizer that Kafka's
// JaasConfig configures: the default syntax table (letters and
// \u00A0-\u00FF are word characters, digits, '.' and '-' start numbers,
// '"' and '\” quote, '/' starts a comment, 0-32 is white space) plus
// wordChars '-', '_' and '$', and // and /* */ comments.
type jaasLexer struct {
	s []rune
	i int
}

func isSpace(r rune) bool { return r >= 0 && r <= ' ' }

func isAlpha(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0xA0 || r == '-' || r == '_' || r == '$'
}

func isNumeric(r rune) bool { return r >= '0' && r <= '9' || r == '.' || r == '-' }

func (l *jaasLexer) peek(off int) rune {
	if l.i+off < len(l.s) {
		return l.s[l.i+off]
	}
	return -1
}

func (l *jaasLexer) next() (token, error) {
	for {
		for l.i < len(l.s) && isSpace(l.s[l.i]) {
			l.i++
		}
		if l.i >= len(l.s) {
			return token{kind: tokEOF, pos: len(l.s) + 1}, nil
		}
		if l.s[l.i] != '/' {
			break
		}
		// Comments: "/*...*/", "//..." and, since '/' is also
		// StreamTokenizer's comment character, '/' alone to the end of
		// the line.
		if l.peek(1) == '*' {
			j := l.i + 2
			for j+1 < len(l.s) && (l.s[j] != '*' || l.s[j+1] != '/') {
				j++
			}
			l.i = min(j+2, len(l.s)) // an unclosed comment runs to the end, as in Java
			continue
		}
		for l.i < len(l.s) && l.s[l.i] != '\n' && l.s[l.i] != '\r' {
			l.i++
		}
	}
	start := l.i
	pos := start + 1
	c := l.s[l.i]
	switch {
	case isNumeric(c):
		// Digits come before word characters in StreamTokenizer: '-' is
		// both, and is an ordinary character unless a digit or '.'
		// follows.
		if c == '-' {
			if n := l.peek(1); n != '.' && (n < '0' || n > '9') {
				l.i++
				return token{kind: tokChar, ch: '-', pos: pos}, nil
			}
			l.i++
		}
		dot := false
		for l.i < len(l.s) {
			r := l.s[l.i]
			if r == '.' && !dot {
				dot = true
			} else if r < '0' || r > '9' {
				break
			}
			l.i++
		}
		return token{kind: tokNumber, pos: pos}, nil
	case isAlpha(c):
		for l.i < len(l.s) && (isAlpha(l.s[l.i]) || isNumeric(l.s[l.i])) {
			l.i++
		}
		return token{kind: tokWord, text: string(l.s[start:l.i]), pos: pos}, nil
	case c == '"' || c == '\'':
		return l.quoted(c, pos)
	}
	l.i++
	return token{kind: tokChar, ch: c, pos: pos}, nil
}

// quoted reads a quoted string with StreamTokenizer's escapes: \a \b \f \n
// \r \t \v, octal \0-\377, and a backslash before any other character
// stands for that character (\" and \\ included).
func (l *jaasLexer) quoted(q rune, pos int) (token, error) {
	l.i++ // the opening quote
	var b strings.Builder
	for {
		if l.i >= len(l.s) || l.s[l.i] == '\n' || l.s[l.i] == '\r' {
			return token{}, &jaasError{Pos: pos, Msg: fmt.Sprintf("the quoted string that starts here is not closed by %c before the end of the line", q)}
		}
		c := l.s[l.i]
		l.i++
		if c == q {
			return token{kind: tokQuoted, text: b.String(), pos: pos}, nil
		}
		if c != '\\' {
			b.WriteRune(c)
			continue
		}
		if l.i >= len(l.s) {
			return token{}, &jaasError{Pos: pos, Msg: fmt.Sprintf("the quoted string that starts here ends in a lone backslash and is not closed by %c", q)}
		}
		e := l.s[l.i]
		l.i++
		if e >= '0' && e <= '7' {
			v := e - '0'
			if n := l.peek(0); n >= '0' && n <= '7' {
				v = v<<3 + (n - '0')
				l.i++
				if n2 := l.peek(0); n2 >= '0' && n2 <= '7' && e <= '3' {
					v = v<<3 + (n2 - '0')
					l.i++
				}
			}
			b.WriteRune(v)
			continue
		}
		switch e {
		case 'a':
			e = 0x7
		case 'b':
			e = '\b'
		case 'f':
			e = 0xC
		case 'n':
			e = '\n'
		case 'r':
			e = '\r'
		case 't':
			e = '\t'
		case 'v':
			e = 0xB
		}
		b.WriteRune(e)
	}
}
