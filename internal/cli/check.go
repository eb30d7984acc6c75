package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
		planned bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "check [mm2.properties] [-c FILE] [--offline | --plan [--json]]",
		Short: "Validate a configuration and print the resolved flows",
		Long: `Validate an MM2 configuration exactly as 'strait run' would, print the
resolved flows with their effective settings (secrets redacted) or every
problem with its key and line, and, unless --offline, connect to every
cluster the flows use.

With --plan it prints, instead, every topic it would create, partition it
would add, config it would change (old -> new) and ACL it would add on each
flow's target, changing nothing. The exit code is 0 when the clusters are in
sync and 3 when changes are pending (for GitOps pipelines); --json prints the
plan as JSON.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			if planned && offline {
				return usageError{errors.New("--plan reads both clusters of every flow: it cannot run --offline")}
			}
			if asJSON && !planned {
				return usageError{errors.New("--json applies to --plan only: add --plan")}
			}
			cfg, plan, err := cf.load()
			if planned {
				if plan == nil {
					return err
				}
				return checkPlan(cmd.Context(), stdout, cfg, plan, asJSON)
			}
			if plan == nil {
				// Show the warnings too: they often explain the errors.
				if cfg != nil {
					printWarnings(stdout, cfg.Warnings, nil)
				}
				return err
			}
			if noSettingAtFault(err) {
				// Nothing to run: the settings would bury the error and
				// the warning that explains it (a misspelt key).
				printWarnings(stdout, cfg.Warnings, plan.Warnings)
				return err
			}
			printTypos(stdout, cfg.Warnings)
			cfg.Describe(stdout)
			if len(plan.Warnings) > 0 {
				fmt.Fprintln(stdout, "\nClient settings:")
				for _, w := range plan.Warnings {
					fmt.Fprintln(stdout, "  warning: "+w.String())
				}
			}
			if err != nil {
				return err
			}
			if offline {
				return nil
			}
			return checkClusters(cmd.Context(), stdout, cfg, plan, timeout)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&offline, "offline", false, "do not connect to the clusters")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for each cluster")
	cmd.Flags().BoolVar(&planned, "plan", false, "print what strait run would change on the targets (topics, partitions, configs, ACLs) and change nothing; exit 3 when changes are pending")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --plan: print the plan as JSON")
	return cmd
}

// checkClusters connects to every cluster the daemon would contact at
// start (the ends of replicating flows, the targets of heartbeats), with the
// client it would use, and reports each.
func checkClusters(ctx context.Context, w io.Writer, cfg *config.Config, plan *kafkaclient.Plan, timeout time.Duration) error {
	fmt.Fprintln(w, "\nConnectivity:")
	var errs []error
	seen := map[string]bool{}
	for _, fp := range plan.Flows {
		sides := replicationSides(fp)
		if !fp.Replicates && fp.Heartbeats {
			sides = []clusterSide{{fp.Flow.Target, fp.TargetProducer}}
		}
		for _, s := range sides {
			if seen[s.alias] {
				continue
			}
			seen[s.alias] = true
			bootstrap := strings.Join(cfg.Cluster[s.alias].BootstrapServers, ",")
			if err := ping(ctx, cfg, fp, s.alias, s.client, "check", timeout); err != nil {
				fmt.Fprintf(w, "  %s (%s): FAILED: %v\n", s.alias, bootstrap, err)
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(w, "  %s (%s): reachable\n", s.alias, bootstrap)
		}
	}
	return errors.Join(errs...)
}

// clusterSide is one cluster a flow contacts, with the client to reach it.
type clusterSide struct {
	alias  string
	client *kafkaclient.Client
}

// replicationSides are the source and the target of a replicating flow,
// each with its admin client; none for a flow that does not replicate.
func replicationSides(fp *kafkaclient.FlowPlan) []clusterSide {
	if !fp.Replicates {
		return nil
	}
	return []clusterSide{{fp.Flow.Source, fp.SourceAdmin}, {fp.Flow.Target, fp.TargetAdmin}}
}

// ping connects to cluster alias with client, as check does, so that
// every command that cannot reach a cluster says so with check's hint
// (kafkaclient.Ping: the key to look at, the login that failed).
func ping(ctx context.Context, cfg *config.Config, fp *kafkaclient.FlowPlan, alias string, client *kafkaclient.Client, role string, timeout time.Duration) error {
	bootstrap := strings.Join(cfg.Cluster[alias].BootstrapServers, ",")
	cl, err := client.New(kafkaclient.Identity{Flow: fp.Flow.Name(), Role: role}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer cl.Close()
	return kafkaclient.Ping(ctx, cl, alias, bootstrap, timeout)
}

// printWarnings lists the file's and the client settings' warnings.
func printWarnings(w io.Writer, file []config.Warning, clients []config.Warning) {
	if len(file)+len(clients) == 0 {
		return
	}
	fmt.Fprintln(w, "Warnings:")
	for _, x := range append(slices.Clone(file), clients...) {
		fmt.Fprintln(w, "  "+x.String())
	}
}

// printTypos lists first the unknown keys with a guess (misspelt keys),
// which the settings below would otherwise bury: such a key is ignored, as
// MM2 ignores it, so the flow runs without the setting it meant.
func printTypos(w io.Writer, warnings []config.Warning) {
	var typos []string
	for _, x := range warnings {
		if strings.Contains(x.Message, "did you mean") {
			typos = append(typos, "  "+x.String())
		}
	}
	if len(typos) == 0 {
		return
	}
	fmt.Fprintln(w, "Misspelt keys? These are not keys and are ignored:")
	fmt.Fprintln(w, strings.Join(typos, "\n"))
	fmt.Fprintln(w)
}
