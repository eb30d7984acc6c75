package metrics

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strait/internal/checkpoint"
	"strait/internal/daemon"
	"strait/internal/mirror"
	"strait/internal/window"
)

type fakeSource struct{ st daemon.Status }

func (f *fakeSource) Status() daemon.Status { return f.st }

func sampleStatus(now time.Time) daemon.Status {
	lat := window.Stats{Count: 10, Min: 2, Max: 9, Avg: 5, Last: 4}
	return daemon.Status{Flows: []daemon.FlowStatus{{
		Name: "A->B", Source: "A", Target: "B",
		Mirror: mirror.Status{Flow: "A->B", Errors: map[string]int64{"produce_retriable": 3}, ExactlyOnce: true, Transactions: 41, AbortedTransactions: 2,
			Partitions: []mirror.PartitionStatus{
				{Topic: "orders", Remote: "A.orders", Partition: 0, Path: "fast", State: mirror.StateFlowing, Records: 100, Bytes: 1000, Lag: 5, LagSeconds: 2.5, Latency: lat, Age: lat},
				{Topic: "orders", Remote: "A.orders", Partition: 1, Path: "fast", State: mirror.StateCaughtUp, Records: 50, Bytes: 500, Lag: 0, LagSeconds: 0, Latency: lat, Age: lat},
				{Topic: "audit", Remote: "A.audit", Partition: 0, Path: "record", State: mirror.StateStopped, Records: 7, Bytes: 70, Lag: 3, LagSeconds: -1,
					Error: "writing audit[0] offset 7 to A.audit: TOPIC_AUTHORIZATION_FAILED\nmore"},
			}},
		Checkpoints: &checkpoint.Status{Groups: 1, Emitted: 4, Synced: 2, Current: now.Add(-3 * time.Second), Latency: lat,
			Checkpointed: []checkpoint.GroupPartition{{Group: "g1", Topic: "A.orders", Partition: 0}}},
	}}}
}

// scrape gathers reg and parses it back with Prometheus's text parser, as
// a Prometheus server would.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, buf.String())
	}
	return parsed
}

// value returns the value of the series of family name whose labels
// include want, failing unless exactly one matches.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
	var found []float64
	for _, m := range mf.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			found = append(found, m.Counter.GetValue())
		case m.Gauge != nil:
			found = append(found, m.Gauge.GetValue())
		case m.Histogram != nil:
			found = append(found, float64(m.Histogram.GetSampleCount()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, want, len(found))
	}
	return found[0]
}

func TestScrape(t *testing.T) {
	now := time.Unix(10_000, 0)
	reg := prometheus.NewRegistry()
	r, err := New(reg, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	r.SetSource(&fakeSource{sampleStatus(now)})
	obs := r.Latency("A->B", "orders", 0)
	for range 3 {
		obs(0.2)
	}
	fams := scrape(t, reg)
	orders := map[string]string{"flow": "A->B", "topic": "orders"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"strait_records_copied_total", orders, 150},
		{"strait_bytes_copied_total", orders, 1500},
		{"strait_lag_records", orders, 5},
		{"strait_lag_seconds", orders, 2.5},
		{"strait_record_age_seconds", orders, 0.005},
		{"strait_lag_records", map[string]string{"topic": "audit"}, 3},
		{"strait_replication_latency_seconds", map[string]string{"flow": "A->B", "topic": "orders"}, 3},
		{"strait_partitions", map[string]string{"path": "fast", "state": "flowing"}, 1},
		{"strait_partitions", map[string]string{"path": "fast", "state": "caught-up"}, 1},
		{"strait_partitions", map[string]string{"path": "record", "state": "stopped"}, 1},
		{"strait_partitions", map[string]string{"path": "record", "state": "flowing"}, 0},
		{"strait_partition_stopped", map[string]string{"topic": "audit", "partition": "0", "reason": "writing audit[0] offset 7 to A.audit: TOPIC_AUTHORIZATION_FAILED"}, 1},
		{"strait_errors_total", map[string]string{"kind": "produce_retriable"}, 3},
		{"strait_checkpoint_age_seconds", map[string]string{"flow": "A->B"}, 3},
		{"strait_group_offsets_synced_total", map[string]string{"flow": "A->B"}, 2},
		{"strait_checkpoints_emitted_total", map[string]string{"flow": "A->B"}, 4},
		{"strait_transactions_total", map[string]string{"flow": "A->B", "result": "committed"}, 41},
		{"strait_transactions_total", map[string]string{"flow": "A->B", "result": "aborted"}, 2},
		// MM2's series, as the JMX exporter names them.
		{"kafka_connect_mirror_source_connector_record_count", map[string]string{"source": "A", "target": "B", "topic": "A.orders", "partition": "1"}, 50},
		{"kafka_connect_mirror_source_connector_byte_count", map[string]string{"topic": "A.orders", "partition": "0"}, 1000},
		{"kafka_connect_mirror_source_connector_replication_latency_ms_max", map[string]string{"topic": "A.orders", "partition": "0"}, 9},
		{"kafka_connect_mirror_source_connector_replication_latency_ms_avg", map[string]string{"topic": "A.orders", "partition": "0"}, 5},
		{"kafka_connect_mirror_source_connector_record_age_ms", map[string]string{"topic": "A.orders", "partition": "0"}, 4},
		{"kafka_connect_mirror_checkpoint_connector_checkpoint_latency_ms_max", map[string]string{"group": "g1", "topic": "A.orders", "partition": "0"}, 9},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// A partition whose lag in seconds is unknown has no lag_seconds series.
	for _, m := range fams["strait_lag_seconds"].Metric {
		for _, l := range m.Label {
			if l.GetValue() == "audit" {
				t.Errorf("strait_lag_seconds has a series for audit, whose age is unknown")
			}
		}
	}
}

// MM2's rates run over the last minute of scrapes.
func TestMM2Rates(t *testing.T) {
	now := time.Unix(10_000, 0)
	reg := prometheus.NewRegistry()
	r, err := New(reg, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{sampleStatus(now)}
	r.SetSource(src)
	scrape(t, reg)
	now = now.Add(10 * time.Second)
	src.st.Flows[0].Mirror.Partitions[0].Records += 200
	fams := scrape(t, reg)
	p0 := map[string]string{"topic": "A.orders", "partition": "0"}
	if got := value(t, fams, "kafka_connect_mirror_source_connector_record_rate", p0); got != 20 {
		t.Fatalf("record_rate = %v, want 20 (200 records in the 10 s since the last scrape)", got)
	}
}

// With partition labels, Strait's series are per partition.
func TestPartitionLabels(t *testing.T) {
	now := time.Unix(10_000, 0)
	reg := prometheus.NewRegistry()
	r, err := New(reg, Options{PartitionLabels: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	r.SetSource(&fakeSource{sampleStatus(now)})
	fams := scrape(t, reg)
	if got := value(t, fams, "strait_records_copied_total", map[string]string{"topic": "orders", "partition": "1"}); got != 50 {
		t.Fatalf("orders[1] copied = %v, want 50", got)
	}
	if !strings.Contains(fams["strait_records_copied_total"].GetHelp(), "Records") {
		t.Errorf("no help text")
	}
}

// The Grafana dashboard in deploy/grafana queries only series this
// package exports.
func TestGrafanaDashboardUsesExportedSeries(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/strait.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/strait.json: %v", err)
	}
	now := time.Unix(10_000, 0)
	reg := prometheus.NewRegistry()
	r, err := New(reg, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	r.SetSource(&fakeSource{sampleStatus(now)})
	r.Latency("A->B", "orders", 0)(0.1)
	fams := scrape(t, reg)
	series := regexp.MustCompile(`\bstrait_[a-z_]+`)
	used := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, name := range series.FindAllString(tg.Expr, -1) {
				used++
				family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				if fams[family] == nil {
					t.Errorf("panel %q queries %s, which is not exported", p.Title, name)
				}
			}
		}
	}
	if used == 0 {
		t.Fatal("the dashboard queries no strait_ series")
	}
}
