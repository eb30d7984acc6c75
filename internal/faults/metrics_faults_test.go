//go:build faults

package faults

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strait/internal/kafkatest"
)

// TestLagMetricsWhileTargetUnreachable scrapes /metrics of a running strait and checks it
// against known traffic: the records copied, MM2's per-partition record counts and the
// latency histogram match what was produced; while the target is unreachable, lag in
// records is exactly what was produced since and lag in seconds grows with the outage;
// once the target is back, both return to 0.
func TestLagMetricsWhileTargetUnreachable(t *testing.T) {
	f := flowA()
	topic := kafkatest.Name(t, "lagmetrics")
	const partitions = 4
	f.src.CreateTopic(t, topic, partitions, nil)
	addr := kafkatest.FreeAddr(t)
	// Without the source's heartbeats topic, whose partition is flowing or caught up by
	// the second: the metrics counted are the test topic's alone.
	s := startStrait(t, "run", f.config(t, topic, "strait.api.listen = "+addr, "heartbeats.replication.enabled = false"), "--shutdown-timeout", "10s")
	l := newLoad(t, f.src, topic, partitions, 100)
	base := "http://" + addr
	labels := map[string]string{"flow": "A->B", "topic": topic}

	l.produce(t, 2000)
	waitCaughtUp(t, f, topic, nil, time.Minute)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		m, err := scrapeMetrics(base)
		if err != nil {
			return err
		}
		return expect(m,
			want{"strait_records_copied_total", labels, eq(2000)},
			want{"strait_lag_records", labels, eq(0)},
			want{"strait_lag_seconds", labels, eq(0)},
			want{"strait_replication_latency_seconds", labels, eq(2000)}, // one observation per record
			want{"kafka_connect_mirror_source_connector_record_count", map[string]string{"source": "A", "target": "B", "topic": f.remote(topic)}, eq(2000)},
			want{"strait_partitions", map[string]string{"flow": "A->B", "path": "fast", "state": "caught-up"}, eq(partitions)},
		)
	})

	// The target goes away; the source gets 1,000 more records, 250 per partition. The
	// load stamps record s of a partition base+s ms, so the oldest record not copied is
	// record 500 of each partition: lag in seconds is its age.
	for _, p := range f.dst.Proxies() {
		p.Blackhole(t)
	}
	oldest := time.UnixMilli(l.base + 500)
	l.produce(t, 1000)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		m, err := scrapeMetrics(base)
		if err != nil {
			return err
		}
		age := time.Since(oldest).Seconds()
		return expect(m,
			want{"strait_lag_records", labels, eq(1000)},
			want{"strait_lag_seconds", labels, between(age-2, age+1)},
			want{"strait_records_copied_total", labels, eq(2000)},
		)
	})
	for _, p := range f.dst.Proxies() {
		p.Heal(t)
	}
	healed := time.Now()
	waitCaughtUp(t, f, topic, nil, time.Minute)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		m, err := scrapeMetrics(base)
		if err != nil {
			return err
		}
		return expect(m,
			want{"strait_records_copied_total", labels, eq(3000)},
			want{"strait_lag_records", labels, eq(0)},
			want{"strait_lag_seconds", labels, eq(0)},
			// The records of the outage were copied after it: their latency is at least
			// their age when the target came back.
			want{"kafka_connect_mirror_source_connector_replication_latency_ms_max", map[string]string{"topic": f.remote(topic), "partition": "0"},
				between(healed.Sub(oldest).Seconds()*1000, time.Since(time.UnixMilli(l.base)).Seconds()*1000)},
		)
	})
	if code, body := httpGet(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after catching up: %d %s", code, body)
	}
	stopCleanly(t, s)
	verifyTopic(t, f, topic)
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrapeMetrics reads /metrics and parses it with Prometheus's text parser.
func scrapeMetrics(base string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: HTTP %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

type want struct {
	name   string
	labels map[string]string
	check  func(float64) error
}

func eq(v float64) func(float64) error {
	return func(got float64) error {
		if got != v {
			return fmt.Errorf("%v, want %v", got, v)
		}
		return nil
	}
}

func between(lo, hi float64) func(float64) error {
	return func(got float64) error {
		if got < lo || got > hi {
			return fmt.Errorf("%v, want between %v and %v", got, lo, hi)
		}
		return nil
	}
}

// expect checks each want against the sum of the matching series (histograms count
// their observations).
func expect(fams map[string]*dto.MetricFamily, wants ...want) error {
	var problems []string
	for _, w := range wants {
		mf := fams[w.name]
		if mf == nil {
			problems = append(problems, w.name+": no such family")
			continue
		}
		var sum float64
		n := 0
		for _, m := range mf.Metric {
			ok := true
			for _, l := range m.Label {
				if v, has := w.labels[l.GetName()]; has && v != l.GetValue() {
					ok = false
				}
			}
			if !ok {
				continue
			}
			n++
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
		if n == 0 {
			problems = append(problems, fmt.Sprintf("%s%v: no series", w.name, w.labels))
			continue
		}
		if err := w.check(sum); err != nil {
			problems = append(problems, fmt.Sprintf("%s%v = %v", w.name, w.labels, err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
