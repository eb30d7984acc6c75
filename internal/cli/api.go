package cli

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"strait/internal/api"
	"strait/internal/api/dashboard"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/metrics"
)

// Samples the API keeps for rates and charts: every 5 s for an hour.
const (
	historyInterval = 5 * time.Second
	historyKeep     = 720
)

// nodeAPI is a node's metrics registry and, once started, its API server.
type nodeAPI struct {
	reg     *prometheus.Registry
	metrics *metrics.Registry
	server  *api.Server
	stop    context.CancelFunc
}

// newNodeAPI registers the node's metrics (Strait's and MM2's series, and
// the Go and process collectors) before the daemon starts, so the data
// plane can feed the latency histogram.
func newNodeAPI(cfg *config.Config) (*nodeAPI, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := metrics.New(reg, metrics.Options{PartitionLabels: cfg.Node.MetricsPartitionLabels})
	if err != nil {
		return nil, err
	}
	return &nodeAPI{reg: reg, metrics: m}, nil
}

// latency is the daemon's latency observer.
func (n *nodeAPI) latency(flow, topic string, partition int32) func(float64) {
	return n.metrics.Latency(flow, topic, partition)
}

// start serves the API on strait.api.listen, unless it is empty. An
// address the file sets must be free; the default one, when taken (a
// second node on this machine), only gives a warning: the API must not
// stop replication.
func (n *nodeAPI) start(ctx context.Context, cfg *config.Config, insecure bool, d *daemon.Daemon, log *slog.Logger) error {
	n.metrics.SetSource(d)
	node := cfg.Node
	if node.APIListen == "" {
		log.Info("api off (strait.api.listen is empty)")
		return nil
	}
	hist := api.NewHistory(d.Status, historyInterval, historyKeep)
	srv, err := api.Listen(api.Options{
		Listen: node.APIListen, Token: node.APIToken.Reveal(), CertFile: node.APITLSCertFile, KeyFile: node.APITLSKeyFile, Insecure: insecure,
		Node: d, Config: cfg, History: hist, Log: log, Dashboard: dashboard.Handler(),
		Metrics: promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}),
	})
	if err != nil {
		if !node.APIListenSet && errors.Is(err, syscall.EADDRINUSE) {
			log.Warn("api not started: its default address is in use (another node on this machine?); set strait.api.listen to another address, or to empty to turn the API off", "address", node.APIListen)
			return nil
		}
		return usageError{err}
	}
	hctx, cancel := context.WithCancel(ctx)
	go hist.Run(hctx)
	n.server, n.stop = srv, cancel
	log.Info("api listening", "url", srv.URL(), "token", node.APIToken.Reveal() != "")
	return nil
}

// close stops the API.
func (n *nodeAPI) close() {
	if n.server == nil {
		return
	}
	n.stop()
	_ = n.server.Close()
}
