//go:build integration

package dashboard_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"strait/internal/api"
	"strait/internal/api/dashboard"
	"strait/internal/api/dashboard/dashboardtest"
)

// The browser tests run the dashboard in Debian's headless Chromium
// (scripts/chromium.sh install) against a fake node: canned documents of
// internal/api's types that change on every poll.

const token = "s3cret/tok+en=="

const stoppedError = "producing to A.payments[2] on B: MESSAGE_TOO_LARGE: a 1.4 MB batch exceeds max.message.bytes (1048588) of A.payments on B; raise it there and restart the partition"

// hostileError and hostileTopic would become elements if the page inserted
// API strings as markup.
const (
	hostileError = `fetching from A: <img src=x onerror="window.__pwned=1"><b>NOT_LEADER</b> & "quoted"`
	hostileTopic = `pay<b>ments</b>`
)

// fakeNode serves the dashboard and a fake /api/v1 that asks for a bearer
// token. Each history request adds one sample, so the charts get a new
// point on every poll.
type fakeNode struct {
	token   string
	hostile bool
	start   int64 // Unix seconds of the first sample

	mu         sync.Mutex
	samples    int // history points so far
	authorized int // API requests with the right token
	refused    int // API requests without it
	sentHeader int // refused requests that carried an Authorization header anyway
}

func newFakeNode(t *testing.T, token string, hostile bool) (*fakeNode, *httptest.Server) {
	t.Helper()
	f := &fakeNode{token: token, hostile: hostile, samples: 30, start: time.Now().Unix() - 30*5}
	mux := http.NewServeMux()
	mux.Handle("GET /api/v1/flows", f.auth(func() any { return f.flows() }))
	mux.Handle("GET /api/v1/partitions", f.auth(func() any { return f.partitions() }))
	mux.Handle("GET /api/v1/history", f.auth(func() any { return f.history() }))
	mux.Handle("/", dashboard.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeNode) auth(doc func() any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		f.mu.Lock()
		ok := got == "Bearer "+f.token
		if ok {
			f.authorized++
		} else {
			f.refused++
			if got != "" {
				f.sentHeader++
			}
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(api.ErrorView{Code: 401, Message: "missing bearer token: send Authorization: Bearer <strait.api.token>"})
			return
		}
		_ = json.NewEncoder(w).Encode(doc())
	})
}

func (f *fakeNode) counts() (authorized, refused, sentHeader int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authorized, f.refused, f.sentHeader
}

// sample is flow at history point i: smooth waves, so the charts look like
// a node under load.
func sample(flow string, i int) api.FlowSample {
	x := float64(i)
	if flow == "A->B" {
		bytes := 38e6 + 9e6*math.Sin(x/4) + 3e6*math.Sin(x/1.7)
		return api.FlowSample{BytesPerSecond: bytes, RecordsPerSecond: bytes / 850,
			LagRecords: int64(42000 + 30000*math.Sin(x/6)), LagSeconds: 1.2 + 0.9*math.Sin((x-4)/6),
			LatencyAvgMs: 14 + 6*math.Sin(x/5), LatencyMaxMs: 48 + 20*math.Sin(x/3)}
	}
	bytes := 4e6 + 1.5e6*math.Sin(x/3)
	return api.FlowSample{BytesPerSecond: bytes, RecordsPerSecond: bytes / 400,
		LatencyAvgMs: 9 + 3*math.Sin(x/4), LatencyMaxMs: 30 + 8*math.Sin(x/2)}
}

func (f *fakeNode) history() api.HistoryView {
	f.mu.Lock()
	f.samples++
	n := f.samples
	f.mu.Unlock()
	const keep = 120
	h := api.HistoryView{IntervalSeconds: 5}
	for i := max(0, n-keep); i < n; i++ {
		h.Points = append(h.Points, api.HistoryPoint{Time: f.start + int64(5*i),
			Flows: map[string]api.FlowSample{"A->B": sample("A->B", i), "B->A": sample("B->A", i)}})
	}
	return h
}

func (f *fakeNode) flows() api.FlowsView {
	f.mu.Lock()
	n := f.samples
	f.mu.Unlock()
	ab, ba := sample("A->B", n-1), sample("B->A", n-1)
	fresh, stale := 14.0, 263.0
	eta := 95.0
	copied := int64(8_400_000 + 60_000*n)
	return api.FlowsView{Flows: []api.FlowView{
		{Name: "A->B", Source: "A", Target: "B", State: "degraded",
			Records: copied, Bytes: copied * 850, RecordsPerSecond: ab.RecordsPerSecond, BytesPerSecond: ab.BytesPerSecond,
			LagRecords: ab.LagRecords, LagSeconds: ab.LagSeconds, Partitions: 6, FastPath: 5, RecordPath: 1, StoppedPartitions: 1,
			FailoverNow:   fmt.Sprintf("would lose at least %d records, and 1 stopped partitions copy nothing until Strait restarts", ab.LagRecords),
			CheckpointAge: &fresh, CheckpointsEmitted: 412, GroupOffsetsSynced: 1236,
			Backlog: &api.BacklogView{Total: 12_000_000, Copied: copied, Fraction: float64(copied) / 12e6, ETASeconds: &eta}},
		{Name: "B->A", Source: "B", Target: "A", State: "running",
			Records: int64(300_000 + 5_000*n), Bytes: int64(300_000+5_000*n) * 400, RecordsPerSecond: ba.RecordsPerSecond, BytesPerSecond: ba.BytesPerSecond,
			FailoverNow: "would lose nothing: every record on the source is copied",
			Partitions:  2, FastPath: 2, CheckpointAge: &stale, CheckpointsEmitted: 97, GroupOffsetsSynced: 194},
	}}
}

func (f *fakeNode) partitions() api.PartitionsView {
	f.mu.Lock()
	n := int64(f.samples)
	f.mu.Unlock()
	payments, lastError := "payments", stoppedError
	if f.hostile {
		payments, lastError = hostileTopic, hostileError
	}
	part := func(flow, topic string, p int32, state, path string, lag int64, lagSec float64, records int64) api.PartitionView {
		remote := flow[:1] + "." + topic
		return api.PartitionView{Flow: flow, Topic: topic, Remote: remote, Partition: p, State: state, Path: path,
			Next: records, End: records + lag, LagRecords: lag, LagSeconds: lagSec, Records: records, Bytes: records * 850}
	}
	stopped := part("A->B", payments, 2, "stopped", "record", 18_204, 311.4, 2_104_332)
	stopped.LastError = lastError
	return api.PartitionsView{Partitions: []api.PartitionView{
		part("A->B", "orders", 0, "flowing", "fast", 8_112, 0.8, 1_900_000+20_000*n),
		part("A->B", "orders", 1, "flowing", "fast", 7_904, 0.7, 1_880_000+20_000*n),
		part("A->B", "orders", 2, "flowing", "fast", 7_780, 0.7, 1_870_000+20_000*n),
		part("A->B", payments, 0, "caught-up", "fast", 0, 0, 412_000),
		part("A->B", payments, 1, "caught-up", "fast", 0, 0, 409_500),
		stopped,
		part("B->A", "inventory", 0, "caught-up", "fast", 0, 0, 150_000+2_500*n),
		part("B->A", "inventory", 1, "caught-up", "fast", 0, 0, 150_000+2_500*n),
	}}
}

func artifact(t *testing.T, name string) string {
	t.Helper()
	root, err := dashboardtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin", "artifacts", name)
}

// TestDashboardInBrowser loads the dashboard with #token= and checks the
// charts, the table, the stopped partition, checkpoint ages and that every
// API request carried the token. STRAIT_UPDATE_SCREENSHOT=1 also copies the
// screenshot to docs/dashboard.png, which the README shows.
func TestDashboardInBrowser(t *testing.T) {
	node, srv := newFakeNode(t, token, false)
	shot := artifact(t, "dashboard.png")
	var partitions []dashboardtest.Partition
	for _, p := range node.partitions().Partitions {
		partitions = append(partitions, dashboardtest.Partition{Flow: p.Flow, Topic: p.Topic, Partition: p.Partition})
	}
	dashboardtest.Check(t, srv.URL, token, shot, dashboardtest.Want{
		Flows:      []string{"A->B", "B->A"},
		Partitions: partitions,
		Stopped:    []dashboardtest.Stopped{{Partition: dashboardtest.Partition{Flow: "A->B", Topic: "payments", Partition: 2}, Error: stoppedError}},
		Checkpoints: []dashboardtest.Checkpoint{
			{Flow: "A->B", Stale: false}, // 14 s
			{Flow: "B->A", Stale: true},  // 263 s, over the 2-minute threshold
		},
		Remotes:   map[string]string{"orders": "A.orders", "payments": "A.payments", "inventory": "B.inventory"},
		NewPoints: true,
	})
	authorized, refused, _ := node.counts()
	if authorized < 6 || refused != 0 {
		t.Errorf("the fake API saw %d requests with the token and %d without; want every request (two polls' worth at least) with it", authorized, refused)
	}
	if os.Getenv("STRAIT_UPDATE_SCREENSHOT") == "1" && !t.Failed() {
		png, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		root, _ := dashboardtest.RepoRoot()
		if err := os.WriteFile(filepath.Join(root, "docs", "dashboard.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("updated docs/dashboard.png")
	}
}

// TestDashboardAsksForTheToken: opened without #token=, the page sends no
// Authorization header and says how to open it with one.
func TestDashboardAsksForTheToken(t *testing.T) {
	node, srv := newFakeNode(t, token, false)
	dashboardtest.CheckAsksForToken(t, srv.URL, artifact(t, "dashboard-no-token.png"))
	authorized, refused, sentHeader := node.counts()
	if refused == 0 || authorized != 0 || sentHeader != 0 {
		t.Errorf("the fake API saw %d requests with the token, %d without, %d of them with some Authorization header; want only requests with no header", authorized, refused, sentHeader)
	}
}

// TestDashboardShowsAPIStringsAsText: a topic name and an error holding
// markup show as the literal text (Check compares textContent and finds
// no element the page did not build itself).
func TestDashboardShowsAPIStringsAsText(t *testing.T) {
	_, srv := newFakeNode(t, token, true)
	dashboardtest.Check(t, srv.URL, token, artifact(t, "dashboard-escaping.png"), dashboardtest.Want{
		Flows:      []string{"A->B"},
		Partitions: []dashboardtest.Partition{{Flow: "A->B", Topic: hostileTopic, Partition: 0}},
		Stopped:    []dashboardtest.Stopped{{Partition: dashboardtest.Partition{Flow: "A->B", Topic: hostileTopic, Partition: 2}, Error: hostileError}},
	})
}
