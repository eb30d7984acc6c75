package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/config"
	"strait/internal/kafkaclient"
)

func newCheckCmd(stdout io.Writer) *cobra.Command {
	var (
		cf      configFlags
		offline bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check [mm2.properties] [-c FILE] [--offline]",
		Short: "Validate a configuration and print the resolved flows",
		Long: `Validate an MM2 configuration exactly as 'strait run' would, print the
resolved flows with their effective settings (secrets redacted) or every
problem with its key and line, and, unless --offline, connect to every
cluster the flows use.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			cfg, err := config.Load(cf.file, config.LoadOptions{Clusters: cf.clusters})
			if err != nil {
				// Show the warnings too: they often explain the errors.
				if cfg != nil && len(cfg.Warnings) > 0 {
					fmt.Fprintln(stdout, "Warnings:")
					for _, w := range cfg.Warnings {
						fmt.Fprintln(stdout, "  "+w.String())
					}
				}
				return usageError{fmt.Errorf("%s has problems:\n%w", cf.file, err)}
			}
			cfg.Describe(stdout)
			if err := clientSettings(stdout, cfg); err != nil {
				return usageError{err}
			}
			if offline {
				return nil
			}
			return checkClusters(cmd.Context(), stdout, cfg, timeout)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&offline, "offline", false, "do not connect to the clusters")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for each cluster")
	return cmd
}

// clientSettings prints the Java client settings that have no franz-go
// equivalent, once per key, and fails on settings Strait cannot honour.
func clientSettings(w io.Writer, cfg *config.Config) error {
	seen := map[string]bool{}
	var lines []string
	var errs []error
	for _, f := range cfg.Flows {
		for _, rc := range flowClients(f) {
			m, err := kafkaclient.Map(rc.role, rc.client)
			msgs := make([]string, 0, len(m.Warnings)+1)
			for _, warn := range m.Warnings {
				msgs = append(msgs, "warning: "+warn.String())
			}
			if err != nil && !seen["error: "+err.Error()] {
				msgs = append(msgs, "error: "+err.Error())
				errs = append(errs, err)
			}
			for _, msg := range msgs {
				if !seen[msg] {
					seen[msg] = true
					lines = append(lines, msg)
				}
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nClient settings:")
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: client settings Strait cannot honour: %w", cfg.Path, errors.Join(errs...))
	}
	return nil
}

type roleClient struct {
	role   kafkaclient.Role
	name   string
	client config.Client
}

func flowClients(f *config.Flow) []roleClient {
	return []roleClient{
		{kafkaclient.Consumer, "replication-consumer", f.SourceConsumer},
		{kafkaclient.Producer, "replication-producer", f.TargetProducer},
		{kafkaclient.Admin, "source-admin", f.SourceAdmin},
		{kafkaclient.Admin, "target-admin", f.TargetAdmin},
	}
}

// checkClusters connects to every cluster a flow uses and reports each.
func checkClusters(ctx context.Context, w io.Writer, cfg *config.Config, timeout time.Duration) error {
	fmt.Fprintln(w, "\nConnectivity:")
	var errs []error
	seen := map[string]bool{}
	for _, f := range cfg.Flows {
		for _, side := range []struct {
			alias  string
			client config.Client
		}{{f.Source, f.SourceAdmin}, {f.Target, f.TargetAdmin}} {
			if seen[side.alias] {
				continue
			}
			seen[side.alias] = true
			bootstrap := strings.Join(cfg.Cluster[side.alias].BootstrapServers, ",")
			cl, _, err := kafkaclient.New(kafkaclient.Admin, side.client, kafkaclient.Identity{Flow: f.Name(), Role: "check"}, slog.New(slog.DiscardHandler))
			if err == nil {
				err = kafkaclient.Ping(ctx, cl, side.alias, bootstrap, timeout)
				cl.Close()
			}
			if err != nil {
				fmt.Fprintf(w, "  %s (%s): FAILED: %v\n", side.alias, bootstrap, err)
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(w, "  %s (%s): reachable\n", side.alias, bootstrap)
		}
	}
	return errors.Join(errs...)
}
