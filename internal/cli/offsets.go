package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/index"
	"strait/internal/kafkaclient"
	"strait/internal/tail"
)

func newOffsetsCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "offsets",
		Short: "Consumer offset tools",
	}
	cmd.AddCommand(newTranslateCmd(stdout))
	return cmd
}

func newTranslateCmd(stdout io.Writer) *cobra.Command {
	var (
		cf       configFlags
		group    string
		from, to string
		asJSON   bool
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "translate --group G --from A --to B [-c] FILE",
		Short: "Print where a source group's committed offsets land on the target",
		Long: `Read the committed offsets of a consumer group on the source cluster of the
flow FROM->TO and translate each one exactly through Strait's offset index on
the target: the printed target offset is where a consumer must start to read
first exactly the record the group would read next on the source.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			if group == "" || from == "" || to == "" {
				return usageError{errors.New("--group, --from and --to are required")}
			}
			cfg, plan, err := cf.load()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			ts, err := translateGroup(ctx, cf.file, cfg, plan, from, to, group)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"group": group, "from": from, "to": to, "partitions": ts})
			}
			printTranslations(stdout, group, from, to, ts)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&group, "group", "", "consumer group on the source cluster")
	cmd.Flags().StringVar(&from, "from", "", "source cluster alias")
	cmd.Flags().StringVar(&to, "to", "", "target cluster alias")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the clusters")
	return cmd
}

// translateGroup translates a group with the flow from->to of the plan,
// using the clients run builds for that flow.
func translateGroup(ctx context.Context, file string, cfg *config.Config, plan *kafkaclient.Plan, from, to, group string) ([]checkpoint.Translation, error) {
	o, err := open(ctx, file, cfg, plan, from, to, "offsets-translate")
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return checkpoint.TranslateGroup(ctx, o.srcAdm, o.translator(), o.idx, group)
}

// loadReverse reads the reverse flow's offset index, on the flow's source,
// when the flow is active-active and topics may come back under their own
// names (daemon.ReversePolicy), as run's checkpoints follow it.
func loadReverse(ctx context.Context, cfg *config.Config, fp *kafkaclient.FlowPlan, id kafkaclient.Identity, log *slog.Logger, tgt *kadm.Client) (*checkpoint.Reverse, error) {
	fc := fp.Flow
	pol, err := daemon.ReversePolicy(cfg, fc)
	if pol == nil || err != nil {
		return nil, err
	}
	cl, err := fp.SourceConsumer.New(id, log, tail.ClientOpts()...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	m, err := index.Load(ctx, cl, index.TopicName(fc.Target))
	if err != nil {
		return nil, fmt.Errorf("reading the offset index of the reverse flow %s->%s on %s: %w", fc.Target, fc.Source, fc.Source, err)
	}
	return &checkpoint.Reverse{Policy: pol, Index: checkpoint.LoadedIndex(m), TargetAdmin: tgt}, nil
}

func printTranslations(w io.Writer, group, from, to string, ts []checkpoint.Translation) {
	if len(ts) == 0 {
		fmt.Fprintf(w, "group %q has no committed offsets on %s for topics the flow %s->%s replicates\n", group, from, from, to)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TOPIC\tPARTITION\t%s OFFSET\t%s TOPIC\t%s OFFSET\tSTATUS\n", from, to, to)
	for _, t := range ts {
		down := "-"
		if t.Downstream >= 0 {
			down = fmt.Sprint(t.Downstream)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", t.Topic, t.Partition, t.Upstream, t.RemoteTopic, down, t.Status)
	}
	tw.Flush()
}
