package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/kafkaclient"
)

// configFlags are the flags that select a config file and its clusters,
// accepting MM2's own form too: `strait run mm2.properties --clusters A B`,
// and the command line of the MM2 guide, which connect-mirror-maker.sh
// rejects (its per-cluster files and --whitelist are MirrorMaker 1's):
//
//	--clusters SOURCE,TARGET --source-cluster-config source.properties
//	--target-cluster-config target.properties --whitelist '.*' --config mm2.properties
type configFlags struct {
	file       string
	clusters   []string
	sourceFile string // --source-cluster-config: the keys of the first --clusters alias
	targetFile string // --target-cluster-config: the keys of the second
	whitelist  string

	overlays []config.Overlay // what the guide's flags add to the file, built by resolve
}

func (c *configFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&c.file, "config", "c", "", "MM2 properties file (or give it as the first argument)")
	cmd.Flags().StringSliceVar(&c.clusters, "clusters", nil, "run only the flows whose target is one of these aliases (MM2's --clusters); with the per-cluster files, SOURCE,TARGET in that order")
	cmd.Flags().StringVar(&c.sourceFile, "source-cluster-config", "", "a file of client settings for the source cluster, read as <SOURCE>.<key> (the MM2 guide's form; needs --clusters SOURCE,TARGET)")
	cmd.Flags().StringVar(&c.targetFile, "target-cluster-config", "", "a file of client settings for the target cluster, read as <TARGET>.<key> (the MM2 guide's form; needs --clusters SOURCE,TARGET)")
	cmd.Flags().StringVar(&c.whitelist, "whitelist", "", "MirrorMaker 1's topic regex, read as topics = REGEX")
}

// resolve applies positional arguments: the first is the config file when
// -c is absent; further ones are more --clusters aliases, as MM2 takes them.
// It then turns the guide's flags into overlays of the file.
func (c *configFlags) resolve(cmd *cobra.Command, args []string) error {
	if c.file == "" && len(args) > 0 {
		c.file, args = args[0], args[1:]
	}
	if c.file == "" {
		return usageError{errors.New("no config file: use -c mm2.properties (or give the file as the first argument)")}
	}
	if len(args) > 0 {
		if !cmd.Flags().Changed("clusters") {
			return usageError{fmt.Errorf("unexpected arguments %q: give cluster aliases with --clusters", args)}
		}
		c.clusters = append(c.clusters, args...)
	}
	return c.guideOverlays(cmd)
}

// guideOverlays reads the MM2 guide's flags. The per-cluster files name the
// direction SOURCE->TARGET (--clusters in that order), so the flow is
// enabled, as the guide means; --clusters keeps MM2's meaning too (the
// flows whose target it names), which with both aliases of the pair keeps
// every flow between them. The command line wins over the file: a key set
// in both is taken from the command line, with a warning.
func (c *configFlags) guideOverlays(cmd *cobra.Command) error {
	perCluster := cmd.Flags().Changed("source-cluster-config") || cmd.Flags().Changed("target-cluster-config")
	if perCluster {
		if len(c.clusters) != 2 {
			return usageError{fmt.Errorf("--source-cluster-config and --target-cluster-config need --clusters SOURCE,TARGET: the two aliases, source first (got %d: %q)", len(c.clusters), c.clusters)}
		}
		for i, f := range []struct{ flag, file string }{{"--source-cluster-config", c.sourceFile}, {"--target-cluster-config", c.targetFile}} {
			if !cmd.Flags().Changed(strings.TrimPrefix(f.flag, "--")) {
				continue
			}
			data, err := os.ReadFile(f.file)
			if err != nil {
				return usageError{fmt.Errorf("%s %s: %w", f.flag, f.file, err)}
			}
			c.overlays = append(c.overlays, config.Overlay{Name: f.file, Prefix: c.clusters[i] + ".", Data: data})
		}
		c.overlays = append(c.overlays, config.Overlay{Name: "--clusters " + strings.Join(c.clusters, ","),
			Data: []byte(escapeKey(c.clusters[0]+"->"+c.clusters[1]+".enabled") + " = true\n")})
	}
	if cmd.Flags().Changed("whitelist") {
		c.overlays = append(c.overlays, config.Overlay{Name: "--whitelist", Data: []byte("topics = " + escapeValue(c.whitelist) + "\n")})
	}
	return nil
}

// logNotice logs what the guide's flags were read as, so the user can move
// them into the file and drop the flags. Secret values are not shown.
func (c *configFlags) logNotice(logger *slog.Logger) {
	if len(c.overlays) == 0 {
		return
	}
	var lines []string
	for _, o := range c.overlays {
		lines = append(lines, o.Lines()...)
	}
	logger.Warn("flags read as keys of the configuration file; to use the file alone, add these lines to it (secret values are [redacted]: copy them from the files named) and drop the flags",
		"file", c.file, "equivalent", strings.Join(lines, "\n"))
}

// load reads the config file and plans the clients of its flows: run,
// check and offsets translate all validate a file with exactly this. On
// error the config and plan are returned as far as they were built, so
// that check can show their warnings.
func (c *configFlags) load() (*config.Config, *kafkaclient.Plan, error) {
	cfg, err := config.Load(c.file, config.LoadOptions{Clusters: c.clusters, Overlays: c.overlays})
	if err != nil {
		return cfg, nil, configError{fmt.Errorf("%s has problems:\n%w", c.file, err)}
	}
	plan, err := kafkaclient.NewPlan(cfg)
	if noSettingAtFault(err) {
		// No flow is enabled: the error names the file and says what to do.
		return cfg, plan, configError{err}
	}
	if err != nil {
		return cfg, plan, configError{fmt.Errorf("%s has client settings Strait cannot honour:\n%w", c.file, err)}
	}
	return cfg, plan, nil
}

// noSettingAtFault says whether a plan's errors name no key: the file as a
// whole cannot run (no flow is enabled), and no client setting is at fault.
func noSettingAtFault(err error) bool {
	var errs *config.Errors
	return errors.As(err, &errs) && !slices.ContainsFunc(*errs, func(e config.Error) bool { return e.Origin.Key != "" })
}

// escapeKey and escapeValue write a flag's text as java.util.Properties
// reads it back.
func escapeKey(k string) string {
	return strings.NewReplacer(`\`, `\\`, "=", `\=`, ":", `\:`, " ", `\ `).Replace(k)
}

func escapeValue(v string) string {
	v = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(v)
	if strings.HasPrefix(v, " ") || strings.HasPrefix(v, "\t") {
		v = `\` + v
	}
	return v
}

// runUntilStopped runs the daemon and, once a stop was asked for, gives it
// the shutdown timeout plus a grace period to finish: a stop never hangs,
// whatever the clusters do.
func runUntilStopped(ctx context.Context, d *daemon.Daemon, shutdown time.Duration, logger *slog.Logger) error {
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			logger.Info("stopped")
		}
		return err
	case <-ctx.Done():
	}
	grace := shutdown + 15*time.Second
	select {
	case err := <-done:
		if err == nil {
			logger.Info("stopped")
		}
		return err
	case <-time.After(grace):
		return fmt.Errorf("stopping did not finish within %s (the clusters did not answer); records not acknowledged by the target will be copied again on restart", grace)
	}
}

func newRunCmd(stderr io.Writer) *cobra.Command {
	var (
		cf          configFlags
		lf          logFlags
		shutdown    time.Duration
		noTakeover  bool
		debugAddr   string
		insecureAPI bool
		apiListen   string
	)
	cmd := &cobra.Command{
		Use:   "run [mm2.properties] [-c FILE] [--clusters ALIAS...] [--source-cluster-config FILE --target-cluster-config FILE --whitelist REGEX]",
		Short: "Replicate the enabled flows of an MM2 configuration until stopped",
		Long: `Replicate every enabled flow (SOURCE->TARGET.enabled = true) of an MM2
dedicated-mode configuration. SIGTERM or Ctrl-C stops fetching, waits for the
target to acknowledge in-flight records (up to --shutdown-timeout), commits
final progress and exits 0. A second signal exits at once.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			logger, err := lf.logger(stderr)
			if err != nil {
				return err
			}
			cf.logNotice(logger)
			cfg, plan, err := cf.load()
			if err != nil {
				return err
			}
			for _, w := range cfg.Warnings {
				logger.Warn("config", "warning", w.String())
			}
			if cmd.Flags().Changed("api-listen") {
				// Several nodes on one machine share one file.
				cfg.Node.APIListen, cfg.Node.APIListenSet = apiListen, true
			}
			if limit := setMemoryLimit(plan); limit > 0 {
				logger.Info("soft memory limit for the Go runtime", "bytes", limit, "override", "GOMEMLIMIT")
			}
			if debugAddr != "" {
				stop, err := serveDebug(cmd.Context(), debugAddr, logger)
				if err != nil {
					return usageError{err}
				}
				defer stop()
			}
			node, err := newNodeAPI(cfg)
			if err != nil {
				return err
			}
			d := daemon.New(cfg, daemon.Options{Logger: logger, Plan: plan, ShutdownTimeout: shutdown, NoMM2Takeover: noTakeover, Latency: node.latency})
			if err := node.start(cmd.Context(), cfg, insecureAPI, d, logger); err != nil {
				return err
			}
			defer node.close()
			return runUntilStopped(cmd.Context(), d, shutdown, logger)
		},
	}
	cf.register(cmd)
	lf.register(cmd, "info")
	cmd.Flags().DurationVar(&shutdown, "shutdown-timeout", daemon.DefaultShutdownTimeout, "how long a stop waits for in-flight records before giving up on them")
	cmd.Flags().StringVar(&debugAddr, "debug-addr", "", "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); for troubleshooting")
	cmd.Flags().StringVar(&apiListen, "api-listen", "", "serve the API on this host:port instead of strait.api.listen (empty: no API; 127.0.0.1:0: any free port), so that several nodes on one machine can run with one file")
	cmd.Flags().BoolVar(&insecureAPI, "insecure-api", false, "serve the API on a non-loopback strait.api.listen without TLS or a bearer token")
	cmd.Flags().BoolVar(&noTakeover, "no-mm2-takeover", false, "ignore a Java MirrorMaker 2's stored progress (mm2-offsets.<source>.internal) and start partitions without Strait progress by auto.offset.reset")
	return cmd
}
