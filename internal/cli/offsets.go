package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/checkpoint"
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
		cf          configFlags
		group, flow string
		from, to    string
		topic       string
		partition   int32
		offset      int64
		asJSON      bool
		format      string
		timeout     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "translate (--group G | --topic T --partition P --offset O) --flow A->B [-c] FILE",
		Short: "Print where a source group's committed offsets, or any stored offset, land on the target",
		Long: `Translate source offsets of the flow A->B exactly through Strait's offset
index on the target: the printed target offset is where a consumer must start
to read first exactly the record it would read next on the source.

With --group, the group's committed offsets on the source. With --topic,
--partition and --offset, one offset a consumer keeps outside consumer groups
(Flink, Spark, sink connectors). --format csv prints the file that
kafka-consumer-groups.sh --reset-offsets --from-file takes on the target
(TOPIC,PARTITION,OFFSET), and fails, printing nothing, when some partition has
no exact translation. --from A --to B is the same as --flow A->B.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			if flow != "" {
				var err error
				if from, to, err = parseFlow(flow); err != nil {
					return err
				}
			}
			if from == "" || to == "" {
				return usageError{errors.New("name the flow with --flow A->B (or --from A --to B)")}
			}
			one := cmd.Flags().Changed("topic") || cmd.Flags().Changed("partition") || cmd.Flags().Changed("offset")
			switch {
			case group != "" && one:
				return usageError{errors.New("give either --group or --topic, --partition and --offset, not both")}
			case one && (topic == "" || !cmd.Flags().Changed("partition") || !cmd.Flags().Changed("offset") || partition < 0 || offset < 0):
				return usageError{errors.New("--topic needs --partition and --offset, each a whole number from 0")}
			case group == "" && !one:
				return usageError{errors.New("give --group G, or --topic T --partition P --offset O")}
			}
			if asJSON {
				format = "json"
			}
			if format != "table" && format != "json" && format != "csv" {
				return usageError{fmt.Errorf("--format %q: use table, json or csv", format)}
			}
			cfg, plan, err := cf.load()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if fp := plan.Flow(from, to); fp != nil {
				// Both clusters answer first, or the error says which and why.
				for _, side := range replicationSides(fp) {
					if err := ping(ctx, cfg, fp, side.alias, side.client, "offsets-translate", timeout); err != nil {
						return err
					}
				}
			}
			o, err := open(ctx, cf.file, cfg, plan, from, to, "offsets-translate")
			if err != nil {
				return err
			}
			defer o.Close()
			if err := o.LoadReverse(ctx); err != nil {
				return err
			}
			var ts []checkpoint.Translation
			if one {
				t, err := checkpoint.TranslateOffset(ctx, o.SourceAdmin, o.Translator(), o.Index, topic, partition, offset)
				if err != nil {
					return err
				}
				ts = []checkpoint.Translation{t}
			} else if ts, err = checkpoint.TranslateGroup(ctx, o.SourceAdmin, o.Translator(), o.Index, group); err != nil {
				return err
			} else if err := requireTranslations(group, from, ts); err != nil {
				return err
			}
			switch format {
			case "json":
				doc := map[string]any{"from": from, "to": to, "partitions": ts}
				if group != "" {
					doc["group"] = group
				}
				return printJSON(stdout, doc)
			case "csv":
				return writeResetCSV(stdout, ts)
			}
			printTranslations(stdout, group, from, to, ts)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&group, "group", "", "consumer group on the source cluster")
	cmd.Flags().StringVar(&flow, "flow", "", "the flow, SOURCE->TARGET")
	cmd.Flags().StringVar(&from, "from", "", "source cluster alias")
	cmd.Flags().StringVar(&to, "to", "", "target cluster alias")
	cmd.Flags().StringVar(&topic, "topic", "", "source topic of a stored offset")
	cmd.Flags().Int32Var(&partition, "partition", -1, "partition of a stored offset")
	cmd.Flags().Int64Var(&offset, "offset", -1, "a stored source offset: the next record to read")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv (kafka-consumer-groups.sh --reset-offsets --from-file)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (--format json)")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the clusters")
	return cmd
}

// requireTranslations refuses a group translation that found nothing: the
// group has no committed offset on the source for the flow's topics (or
// does not exist there), and exit 0 would read as "translated".
func requireTranslations(group, source string, ts []checkpoint.Translation) error {
	if len(ts) > 0 {
		return nil
	}
	return fmt.Errorf("nothing to translate: group %q has no committed offset on %s for the topics the flow copies (is the name right? kafka-consumer-groups.sh --describe --group %s on %s shows its offsets)", group, source, group, source)
}

// writeResetCSV writes the target topic, partition and offset of each
// translation, as kafka-consumer-groups.sh --reset-offsets --from-file reads
// them; it writes nothing and fails when one has no usable translation, so
// that no partition is left out of a reset unnoticed.
func writeResetCSV(w io.Writer, ts []checkpoint.Translation) error {
	var bad []string
	for _, t := range ts {
		if !t.Result.Usable() {
			bad = append(bad, fmt.Sprintf("%s[%d] offset %d: %s", t.Topic, t.Partition, t.Upstream, t.Status))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("no CSV: %s without an exact translation (%s); wait until the flow copied them, or reset those by hand", plural(len(bad), "partition"), strings.Join(bad, "; "))
	}
	for _, t := range ts {
		fmt.Fprintf(w, "%s,%d,%d\n", t.RemoteTopic, t.Partition, t.Downstream)
	}
	return nil
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
