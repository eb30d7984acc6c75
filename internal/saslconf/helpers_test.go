package saslconf

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"

	"strait/internal/config"
)

// newClient is the resolved client of cluster "A" with the given key/value
// pairs, each with its file key and a line, sorted as the config package
// sorts them. security.protocol=SASL_SSL is added unless given.
func newClient(kv ...string) config.Client {
	if len(kv)%2 != 0 {
		panic("newClient: odd number of arguments")
	}
	c := config.Client{Cluster: "A"}
	if !slices.Contains(kv, "security.protocol") {
		kv = append(kv, "security.protocol", "SASL_SSL")
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i]
		secret := strings.Contains(k, "jaas") || strings.Contains(k, "secret") || strings.Contains(k, "password")
		c.Props = slices.DeleteFunc(c.Props, func(p config.ClientProp) bool { return p.Key == k }) // a later pair replaces
		c.Props = append(c.Props, config.ClientProp{Key: k, Value: config.NewSecret(kv[i+1]), Secret: secret, Origin: config.Origin{Key: "A." + k, Line: i/2 + 1}})
	}
	slices.SortFunc(c.Props, func(a, b config.ClientProp) int { return strings.Compare(a.Key, b.Key) })
	return c
}

// world is the outside world of one test: files, environment variables,
// a clock that moves only when told, and the log.
type world struct {
	mu    sync.Mutex
	files map[string][]byte
	env   map[string]string
	now   time.Time
	log   syncBuffer
}

func newWorld() *world {
	return &world{files: map[string][]byte{}, env: map[string]string{}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (w *world) options() Options {
	return Options{
		Now: func() time.Time {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.now
		},
		Getenv: func(k string) string {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.env[k]
		},
		ReadFile: func(p string) ([]byte, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			b, ok := w.files[p]
			if !ok {
				return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
			}
			return slices.Clone(b), nil
		},
		Log: slog.New(slog.NewTextHandler(&w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func (w *world) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

func (w *world) setFile(path string, b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[path] = b
}

// syncBuffer is a bytes.Buffer that log handlers on several goroutines may
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// problems returns the messages of the config.Problem values joined in err.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []string
	for _, e := range errs {
		var p config.Problem
		if !errors.As(e, &p) {
			t.Fatalf("error %q is not a config.Problem", e)
		}
		out = append(out, p.Error())
	}
	return out
}

// warnings returns the warnings as strings.
func warnings(ws []config.Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// containsAll reports the fragments missing from s.
func missing(s string, fragments ...string) []string {
	var out []string
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			out = append(out, f)
		}
	}
	return out
}

// build calls Build and fails the test on problems; the mechanism is closed
// when the test ends.
func build(t *testing.T, c config.Client, o Options) (*mechanism, []config.Warning) {
	t.Helper()
	m, ws, err := Build(c, o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(m.(*mechanism).Close)
	return m.(*mechanism), ws
}

// first returns the mechanism's first client message.
func first(t *testing.T, m sasl.Mechanism, host string) []byte {
	t.Helper()
	_, msg, err := m.Authenticate(context.Background(), host)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	return msg
}

// wantOneProblem builds a client of props and wants no mechanism and one
// problem that holds every fragment of want.
func wantOneProblem(t *testing.T, props []string, o Options, want ...string) {
	t.Helper()
	m, _, err := Build(newClient(props...), o)
	if m != nil {
		t.Error("Build returned a mechanism with problems")
	}
	ps := problems(t, err)
	if len(ps) != 1 {
		t.Fatalf("problems = %q, want one", ps)
	}
	if miss := missing(ps[0], want...); len(miss) > 0 {
		t.Errorf("problem %q lacks %q", ps[0], miss)
	}
}
