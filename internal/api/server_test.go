package api

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/coord"
	"strait/internal/daemon"
	"strait/internal/mirror"
	"strait/internal/window"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const testConfig = `clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
B.security.protocol = SASL_PLAINTEXT
B.sasl.mechanism = PLAIN
B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="canary-api-secret";
A->B.enabled = true
topics = orders, audit
replication.factor = 1
sync.topic.configs.enabled = false
sync.topic.acls.enabled = false
`

type fakeNode struct {
	st     daemon.Status
	panics bool
}

func (n *fakeNode) Status() daemon.Status {
	if n.panics {
		panic("boom in the node")
	}
	return n.st
}

func (n *fakeNode) Groups(_ context.Context, flow, group string) ([]checkpoint.GroupState, error) {
	if flow != "A->B" {
		return nil, daemon.ErrNoFlow
	}
	if group == "console-consumer-1" {
		return []checkpoint.GroupState{{Group: group, Reason: "not checkpointed: filtered out by groups and groups.exclude"}}, nil
	}
	return []checkpoint.GroupState{{Group: "g1", Sync: "synced 1 partition offsets", Partitions: []checkpoint.GroupPartitionState{
		{Translation: checkpoint.Translation{Topic: "orders", Partition: 0, Upstream: 40, RemoteTopic: "A.orders", Downstream: 40, Status: "exact"}, Checkpointed: true},
	}}}, nil
}

func (n *fakeNode) Translate(_ context.Context, flow, group string) ([]checkpoint.Translation, error) {
	if flow != "A->B" {
		return nil, daemon.ErrNoFlow
	}
	if group == "down" {
		return nil, errors.New("listing offsets of group \"down\" on A: broker unreachable")
	}
	return []checkpoint.Translation{{Topic: "orders", Partition: 0, Upstream: 40, RemoteTopic: "A.orders", Downstream: 40, Status: "exact"}}, nil
}

func (n *fakeNode) TranslateOffset(_ context.Context, flow, topic string, partition int32, offset int64) (checkpoint.Translation, error) {
	if flow != "A->B" {
		return checkpoint.Translation{}, daemon.ErrNoFlow
	}
	return checkpoint.Translation{Topic: topic, Partition: partition, Upstream: offset, RemoteTopic: "A." + topic, Downstream: offset + 3, Status: "exact"}, nil
}

func testStatus(now time.Time) daemon.Status {
	return daemon.Status{Flows: []daemon.FlowStatus{{
		Name: "A->B", Source: "A", Target: "B",
		Mirror: mirror.Status{Flow: "A->B", Records: 157, Bytes: 1570, ExactlyOnce: true, Transactions: 12, AbortedTransactions: 1, Partitions: []mirror.PartitionStatus{
			{Topic: "orders", Remote: "A.orders", Partition: 0, Path: "fast", State: mirror.StateFlowing, Next: 100, Position: 100, End: 105, Lag: 5, LagSeconds: 2.5, Records: 100, Bytes: 1000},
			{Topic: "orders", Remote: "A.orders", Partition: 1, Path: "fast", State: mirror.StateCaughtUp, Next: 50, Position: 50, End: 50, Records: 50, Bytes: 500},
			{Topic: "audit", Remote: "A.audit", Partition: 0, Path: "record", State: mirror.StateStopped, Next: 7, Position: 7, End: 10, Lag: 3, LagSeconds: -1, Records: 7, Bytes: 70,
				Error: "writing audit[0] offset 7 to A.audit: TOPIC_AUTHORIZATION_FAILED"},
		}},
		Checkpoints: &checkpoint.Status{Groups: 1, Emitted: 4, Synced: 2, Current: now.Add(-3 * time.Second)},
	}}}
}

func newTestServer(t *testing.T, token string) (*httptest.Server, *fakeNode) {
	t.Helper()
	cfg, err := config.Parse("mm2.properties", []byte(testConfig), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	node := &fakeNode{st: testStatus(now)}
	hist := NewHistory(node.Status, 5*time.Second, 10)
	// Two samples 10 s apart: 100 records and 1,000 bytes more in the second.
	first := testStatus(now)
	first.Flows[0].Mirror.Records, first.Flows[0].Mirror.Bytes = 57, 570
	first.Flows[0].Mirror.Partitions[0].Next, first.Flows[0].Mirror.Partitions[0].Position = 0, 0 // the backlog of orders[0] was 0..105 at start
	node.st = first
	hist.Sample(time.Unix(1000, 0))
	node.st = testStatus(now)
	hist.Sample(time.Unix(1010, 0))
	s := &Server{opts: Options{Node: node, Config: cfg, History: hist, Token: token, WorkerID: "127.0.0.1:8083",
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "strait_up 1\n") })}}
	s.opts.Log = discard()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, node
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 && ct != "application/json" {
		t.Errorf("GET %s: error answer has Content-Type %q, want application/json", url, ct)
	}
	return resp.StatusCode, string(b)
}

// Golden answers of every endpoint (checkpoint ages and the oldest record
// not copied vary with the clock, so those fields are masked).
func TestEndpointsGolden(t *testing.T) {
	ts, _ := newTestServer(t, "")
	for _, c := range []struct {
		path, golden string
		code         int
	}{
		{"/healthz", "healthz.json", 200},
		{"/readyz", "readyz.json", 503},
		{"/api/v1/flows", "flows.json", 200},
		{"/api/v1/partitions", "partitions.json", 200},
		{"/api/v1/partitions?flow=X->Y", "partitions-unknown-flow.json", 404},
		{"/api/v1/history", "history.json", 200},
		{"/api/v1/groups", "groups.json", 200},
		{"/api/v1/groups?group=console-consumer-1", "groups-filtered.json", 200},
		{"/api/v1/offsets/translate?group=g1", "translate.json", 200},
		{"/api/v1/offsets/translate", "translate-no-group.json", 400},
		{"/api/v1/offsets/translate?group=down", "translate-down.json", 502},
		{"/api/v1/offsets/translate?flow=X->Y&group=g1", "translate-unknown-flow.json", 404},
		{"/api/v1/offsets/translate?topic=orders&partition=1&offset=40", "translate-offset.json", 200},
		{"/api/v1/offsets/translate?topic=orders&partition=x", "translate-offset-bad.json", 400},
		{"/api/v1/config", "config.json", 200},
		{"/connectors", "connectors.json", 200},
		{"/connectors?expand=status", "connectors-expand-status.json", 200},
		{"/connectors?expand=bogus", "connectors-expand-bogus.json", 400},
		{"/connectors/MirrorSourceConnector", "source-info.json", 200},
		{"/connectors/MirrorSourceConnector/status", "source-status.json", 200},
		{"/connectors/MirrorCheckpointConnector/status", "checkpoint-status.json", 200},
		{"/connectors/MirrorSourceConnector/config", "source-config.json", 200},
		{"/connectors/MirrorSourceConnector/tasks", "source-tasks.json", 200},
		{"/connectors/NoSuchConnector/status", "unknown-connector.json", 404},
		{"/no/such/path", "unknown-path.json", 404},
		{"/", "index.json", 200},
	} {
		code, body := get(t, ts.URL+c.path, "")
		if code != c.code {
			t.Errorf("GET %s: %d, want %d: %s", c.path, code, c.code, body)
		}
		body = maskAge(body)
		path := filepath.Join("testdata", c.golden)
		if *update {
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./internal/api -update writes it)", err)
		}
		if body != string(want) {
			t.Errorf("GET %s differs from %s:\n%s", c.path, path, body)
		}
		if strings.Contains(body, "canary-api-secret") {
			t.Errorf("GET %s shows the SASL password", c.path)
		}
	}
}

// maskAge replaces the clock-dependent checkpoint age.
func maskAge(body string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if (strings.Contains(line, `"checkpoint_age_seconds": `) || strings.Contains(line, `"oldest_not_copied": `)) && !strings.Contains(line, "null") {
			line = line[:strings.Index(line, ":")+1] + " \"(masked)\","
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestTokenAndMethods(t *testing.T) {
	ts, node := newTestServer(t, "s3cret")
	for _, c := range []struct {
		path, token string
		code        int
		msg         string
	}{
		{"/api/v1/flows", "", 401, "missing bearer token"},
		{"/api/v1/flows", "wrong", 401, "wrong bearer token"},
		{"/metrics", "", 401, "missing bearer token"},
		{"/connectors", "", 401, "missing bearer token"},
		{"/api/v1/flows", "s3cret", 200, `"name": "A->B"`},
		{"/metrics", "s3cret", 200, "strait_up 1"},
		{"/healthz", "", 200, "alive"}, // probes carry no token
		{"/readyz", "", 503, "audit[0] stopped"},
	} {
		code, body := get(t, ts.URL+c.path, c.token)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("GET %s with token %q: %d %s; want %d with %q", c.path, c.token, code, body, c.code, c.msg)
		}
	}
	resp, err := http.Post(ts.URL+"/connectors", "application/json", strings.NewReader(`{"name":"x","config":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || !strings.Contains(string(b), "read-only") {
		t.Errorf("POST /connectors: %d %s; want 405, read-only", resp.StatusCode, b)
	}
	// A panic is a JSON error without a stack trace.
	node.panics = true
	code, body := get(t, ts.URL+"/api/v1/flows", "s3cret")
	var e ErrorView
	if code != 500 || json.Unmarshal([]byte(body), &e) != nil || strings.Contains(body, "goroutine") || strings.Contains(body, "boom") {
		t.Errorf("a handler panic answered %d %s; want a 500 JSON error with no stack trace", code, body)
	}
}

func TestCheckSecurity(t *testing.T) {
	for _, c := range []struct {
		listen, token, cert, key string
		insecure                 bool
		want                     string
	}{
		{"127.0.0.1:8083", "", "", "", false, ""},
		{"localhost:8083", "", "", "", false, ""},
		{"[::1]:8083", "", "", "", false, ""},
		{"0.0.0.0:8083", "", "", "", false, "no TLS (strait.api.tls.cert.file and strait.api.tls.key.file) and no a bearer token"},
		{"0.0.0.0:8083", "t", "", "", false, "has no TLS"},
		{"0.0.0.0:8083", "", "c.pem", "k.pem", false, "has no a bearer token"},
		{"0.0.0.0:8083", "t", "c.pem", "k.pem", false, ""},
		{"0.0.0.0:8083", "", "", "", true, ""},
		{"10.0.0.5:8083", "", "c.pem", "", false, "go together"},
		{"8083", "", "", "", false, "want host:port"},
	} {
		err := CheckSecurity(c.listen, c.token, c.cert, c.key, c.insecure)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want an error with %q", c, err, c.want)
		}
	}
}

// Listen refuses a non-loopback address without TLS and a token before
// binding anything.
func TestListenRefusesAnExposedAPI(t *testing.T) {
	_, err := Listen(Options{Listen: "0.0.0.0:0", Node: &fakeNode{}})
	if err == nil || !strings.Contains(err.Error(), "--insecure-api") {
		t.Fatalf("Listen on 0.0.0.0 without TLS or token: %v; want a refusal naming --insecure-api", err)
	}
	s, err := Listen(Options{Listen: "127.0.0.1:0", Node: &fakeNode{st: testStatus(time.Now())}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, _ := get(t, s.URL()+"/healthz", ""); code != 200 {
		t.Fatalf("healthz on a started server: %d", code)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestFailoverNow(t *testing.T) {
	oldest := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    FlowView
		want string
	}{
		{FlowView{}, "unknown: no partition is assigned yet"},
		{FlowView{Partitions: 4}, "would lose nothing: every record on the source is copied"},
		{FlowView{Partitions: 4, LagRecords: 12, LagSeconds: 3.25, OldestNotCopied: &oldest}, "would lose 12 records written since 2026-12-04T10:00:00Z (3.2 s)"},
		{FlowView{Partitions: 4, LagRecords: 12}, "would lose 12 records"},
		{FlowView{Partitions: 4, StoppedPartitions: 1, LagRecords: 3}, "would lose at least 3 records, and 1 stopped partitions copy nothing until Strait restarts"},
		{FlowView{Partitions: 2, Share: &coord.Status{}}, "would lose nothing: every record on the source is copied (the 2 partitions this node copies; ask each node)"},
	} {
		if got := failoverNow(c.v); got != c.want {
			t.Errorf("failoverNow(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestConnectConfigsHoldNumbers: the Connect-shaped config and tasks
// endpoints give every *.seconds and *.ms key as MM2 does, a whole number
// ("5"), never a Go duration ("5s").
func TestConnectConfigsHoldNumbers(t *testing.T) {
	ts, _ := newTestServer(t, "")
	for _, path := range []string{"/connectors/MirrorSourceConnector/config", "/connectors/MirrorSourceConnector/tasks", "/connectors/MirrorCheckpointConnector/tasks"} {
		code, body := get(t, ts.URL+path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		var configs []map[string]string
		if strings.HasSuffix(path, "/tasks") {
			var tasks []struct {
				Config map[string]string `json:"config"`
			}
			if err := json.Unmarshal([]byte(body), &tasks); err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				configs = append(configs, task.Config)
			}
		} else {
			var c map[string]string
			if err := json.Unmarshal([]byte(body), &c); err != nil {
				t.Fatal(err)
			}
			configs = append(configs, c)
		}
		for _, c := range configs {
			for k, v := range c {
				if strings.HasSuffix(k, ".seconds") || strings.HasSuffix(k, ".ms") {
					if _, err := strconv.ParseInt(v, 10, 64); err != nil {
						t.Errorf("GET %s: %s = %q, want a whole number", path, k, v)
					}
				}
			}
		}
	}
}

// TestRateBeforeTheSecondSample: a flow's throughput shows as soon as it
// copies, from the last sample to now, not 0 B/s until the history holds
// two samples of it.
func TestRateBeforeTheSecondSample(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	var st daemon.Status
	h := NewHistory(func() daemon.Status { return st }, 5*time.Second, 10)
	s := &Server{opts: Options{History: h}}
	f := daemon.FlowStatus{Name: "A->B"}
	st.Flows = []daemon.FlowStatus{f}
	h.Sample(t0) // the flow, nothing copied yet
	f.Mirror.Records, f.Mirror.Bytes = 10000, 5e6
	v := s.flowView(f, t0.Add(2*time.Second))
	if v.RecordsPerSecond != 5000 || v.BytesPerSecond != 2.5e6 {
		t.Fatalf("2 s after the first sample: %v records/s, %v B/s; want 5000 and 2.5e6", v.RecordsPerSecond, v.BytesPerSecond)
	}
}

// TestHistoryCarriesLatency: each history point has the flow's
// replication latency, the mean weighted by records and the highest.
func TestHistoryCarriesLatency(t *testing.T) {
	var st daemon.Status
	f := daemon.FlowStatus{Name: "A->B"}
	f.Mirror.Partitions = []mirror.PartitionStatus{
		{Topic: "t", Partition: 0, Latency: window.Stats{Count: 3, Avg: 10, Max: 40}},
		{Topic: "t", Partition: 1, Latency: window.Stats{Count: 1, Avg: 30, Max: 35}},
		{Topic: "t", Partition: 2}, // nothing copied yet
	}
	st.Flows = []daemon.FlowStatus{f}
	h := NewHistory(func() daemon.Status { return st }, 5*time.Second, 10)
	h.Sample(time.Now())
	pts := h.View().Points
	if got := pts[len(pts)-1].Flows["A->B"]; got.LatencyAvgMs != 15 || got.LatencyMaxMs != 40 {
		t.Fatalf("latency %v ms avg, %v max; want 15 and 40", got.LatencyAvgMs, got.LatencyMaxMs)
	}
}
