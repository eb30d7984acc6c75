// Package api serves a node's read-only HTTP API: JSON under /api/v1,
// Kafka Connect's status endpoints with MM2's connector names, Prometheus
// metrics, health probes and the dashboard. Nothing it serves changes the
// node, and no endpoint accepts client configuration.
package api

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/daemon"
)

// Node is what the API reads.
type Node interface {
	Status() daemon.Status
	Groups(ctx context.Context, flow, group string) ([]checkpoint.GroupState, error)
	Translate(ctx context.Context, flow, group string) ([]checkpoint.Translation, error)
	TranslateOffset(ctx context.Context, flow, topic string, partition int32, offset int64) (checkpoint.Translation, error)
}

// Options configure a Server.
type Options struct {
	Listen   string // host:port
	Token    string // bearer token; empty: none asked for
	CertFile string // TLS certificate (PEM); empty with KeyFile: plain HTTP
	KeyFile  string
	// Insecure allows a non-loopback address without TLS and a token
	// (--insecure-api).
	Insecure bool

	Node      Node
	Config    *config.Config // its View is served, secrets redacted
	Metrics   http.Handler   // /metrics
	Dashboard http.Handler   // / and /static/; nil serves a JSON index instead
	History   *History       // samples for /api/v1/history, rates and backlog progress
	Log       *slog.Logger
	// WorkerID names this node in Connect-style statuses (host:port).
	WorkerID string
}

// Server is a running API.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	opts Options
}

// CheckSecurity returns why opts must not start: a non-loopback address
// without both TLS and a token, unless Insecure.
func CheckSecurity(listen, token, cert, key string, insecure bool) error {
	if (cert == "") != (key == "") {
		return errors.New("strait.api.tls.cert.file and strait.api.tls.key.file go together: set both, or neither for plain HTTP")
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("strait.api.listen %q: want host:port, e.g. 127.0.0.1:8083: %w", listen, err)
	}
	if loopback(host) || insecure {
		return nil
	}
	var missing []string
	if cert == "" {
		missing = append(missing, "TLS (strait.api.tls.cert.file and strait.api.tls.key.file)")
	}
	if token == "" {
		missing = append(missing, "a bearer token (strait.api.token)")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("strait.api.listen %s is not a loopback address and the API has no %s: set them, bind to 127.0.0.1, or start with --insecure-api to serve it anyway", listen, strings.Join(missing, " and no "))
}

// loopback reports whether host only accepts local connections.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen binds the API's address and starts serving; Close stops it.
func Listen(opts Options) (*Server, error) {
	if err := CheckSecurity(opts.Listen, opts.Token, opts.CertFile, opts.KeyFile, opts.Insecure); err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	var tlsCfg *tls.Config
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("strait.api.tls.cert.file/key.file: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("strait.api.listen %s: %w", opts.Listen, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	if opts.WorkerID == "" {
		opts.WorkerID = ln.Addr().String()
	}
	s := &Server{ln: ln, opts: opts}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(opts.Log.Handler(), slog.LevelWarn)}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Log.Error("api stopped serving", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the API listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the API's base URL.
func (s *Server) URL() string {
	scheme := "http"
	if s.opts.CertFile != "" {
		scheme = "https"
	}
	return scheme + "://" + s.ln.Addr().String()
}

// Close stops serving, waiting up to a few seconds for requests to end.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Handler is the API's routes, with authentication and error handling.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	open := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, h) }
	guarded := func(pattern string, h http.Handler) { mux.Handle(pattern, s.auth(h)) }

	open("GET /healthz", s.healthz)
	open("GET /readyz", s.readyz)
	if s.opts.Metrics != nil {
		guarded("GET /metrics", s.opts.Metrics)
	}
	guarded("GET /api/v1/flows", http.HandlerFunc(s.flows))
	guarded("GET /api/v1/partitions", http.HandlerFunc(s.partitions))
	guarded("GET /api/v1/history", http.HandlerFunc(s.history))
	guarded("GET /api/v1/groups", http.HandlerFunc(s.groups))
	guarded("GET /api/v1/offsets/translate", http.HandlerFunc(s.translate))
	guarded("GET /api/v1/config", http.HandlerFunc(s.config))
	guarded("GET /connectors", http.HandlerFunc(s.connectors))
	guarded("GET /connectors/{name}", http.HandlerFunc(s.connector))
	guarded("GET /connectors/{name}/status", http.HandlerFunc(s.connectorStatus))
	guarded("GET /connectors/{name}/config", http.HandlerFunc(s.connectorConfig))
	guarded("GET /connectors/{name}/tasks", http.HandlerFunc(s.connectorTasks))
	if s.opts.Dashboard != nil {
		// The page and its assets hold no data; the API calls they make
		// carry the token.
		mux.Handle("GET /", s.opts.Dashboard)
	} else {
		open("GET /{$}", s.index)
	}
	return s.recover(s.methods(mux))
}

// methods refuses every method but GET and HEAD: the API is read-only. It
// also answers unknown paths with a JSON error, as every error is.
func (s *Server) methods(next *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed: the API is read-only (GET only)", r.Method))
			return
		}
		if _, pattern := next.Handler(r); pattern == "" {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s; see GET /api/v1/flows, /api/v1/partitions, /api/v1/groups, /api/v1/offsets/translate, /api/v1/config, /connectors, /metrics, /healthz, /readyz", r.URL.Path))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// auth asks for the bearer token, when one is configured.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="strait"`)
			msg := "missing bearer token: send Authorization: Bearer <strait.api.token>"
			if len(got) > 0 {
				msg = "wrong bearer token: send the value of strait.api.token"
			}
			writeError(w, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// recover answers a panic with a JSON error and logs it; no stack trace
// reaches the client.
func (s *Server) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.opts.Log.Error("api handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, http.StatusInternalServerError, "internal error; see the node's log")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // flow names hold "->"
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorView{Code: code, Message: msg})
}
