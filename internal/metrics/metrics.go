// Package metrics exposes a node's state as Prometheus metrics: Strait's
// own series (strait_*), and MM2's, named as the usual JMX exporter rules
// render MM2's MBeans (kafka_connect_mirror_*; spec section 7), so that
// existing MM2 dashboards keep working.
//
// Everything but the replication latency histogram is read from a status
// snapshot at scrape time (Source), so scrapes cost the data plane
// nothing; the histogram is fed by the data plane itself, once per record
// acknowledged (Registry.Latency).
package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"strait/internal/daemon"
)

// Source is what a scrape reads: the node's status snapshot.
type Source interface {
	Status() daemon.Status
}

// Options shape the series.
type Options struct {
	// PartitionLabels adds a partition label to Strait's per-topic series
	// (strait.metrics.partition.labels): a series per partition instead of
	// per topic. MM2's series always have it, as MM2's MBeans do.
	PartitionLabels bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Registry registers a node's collectors on a Prometheus registerer.
type Registry struct {
	opts    Options
	latency *prometheus.HistogramVec

	mu     sync.Mutex
	source Source
	rates  rates // MM2's record-rate and byte-rate, from the counts scrapes saw
}

// LatencyBuckets are the replication latency histogram's buckets, in
// seconds: from a millisecond, for a live flow, to a day, for a backlog.
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400}

// New registers the node's collectors on reg. The source may be set
// later (SetSource): until then a scrape shows the histogram only.
func New(reg prometheus.Registerer, opts Options) (*Registry, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Registry{opts: opts, rates: newRates(opts.Now())}
	r.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "strait_replication_latency_seconds",
		Help:    "Time from a record's timestamp to the target's acknowledgement of its copy (MM2's replication-latency-ms as a histogram).",
		Buckets: LatencyBuckets,
	}, r.topicLabels())
	if err := reg.Register(r.latency); err != nil {
		return nil, err
	}
	if err := reg.Register(collector{r}); err != nil {
		return nil, err
	}
	return r, nil
}

// SetSource sets the snapshot scrapes read.
func (r *Registry) SetSource(s Source) {
	r.mu.Lock()
	r.source = s
	r.mu.Unlock()
}

// Latency returns the latency observer of one source partition of a flow,
// for daemon.Options.Latency.
func (r *Registry) Latency(flow, topic string, partition int32) func(seconds float64) {
	return r.latency.WithLabelValues(r.topicValues(flow, topic, partition)...).Observe
}

func (r *Registry) topicLabels() []string {
	if r.opts.PartitionLabels {
		return []string{"flow", "topic", "partition"}
	}
	return []string{"flow", "topic"}
}

func (r *Registry) topicValues(flow, topic string, partition int32) []string {
	if r.opts.PartitionLabels {
		return []string{flow, topic, itoa(partition)}
	}
	return []string{flow, topic}
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }
