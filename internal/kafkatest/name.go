package kafkatest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// maxNameLen keeps names clear of Kafka's 249-byte topic limit, with room for a
// replication policy's prefix such as "source.".
const maxNameLen = 200

// Name returns a topic or group name unique to this test and call: prefix, the test's name
// and a random suffix, in the characters Kafka allows in topic names, at most 200 long.
// It holds no '.', so no replication policy reads it as a remote topic; build remote names
// as alias + "." + Name(t, prefix).
func Name(t testing.TB, prefix string) string {
	t.Helper()
	return name(prefix, t.Name(), fmt.Sprintf("%08x", rand.Uint32()))
}

// name joins the sanitized prefix and test name with suffix, shortening the test name (and
// then the prefix) to fit maxNameLen, so the random suffix is never cut.
func name(prefix, testName, suffix string) string {
	p, tn := sanitize(prefix), sanitize(testName)
	room := maxNameLen - len(suffix) - 1
	if len(p) > room {
		p, tn = p[:room], ""
	} else if len(p)+len(tn) > room {
		tn = tn[:room-len(p)]
	}
	return p + tn + "-" + suffix
}

// sanitize maps a subtest's '/' to '-' and every other character outside [a-zA-Z0-9_-]
// to '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('-')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
