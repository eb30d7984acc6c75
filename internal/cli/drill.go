package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"strait/internal/config"
	"strait/internal/drill"
)

func newDrillCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		file, flow string
		opts       drill.Options
		asJSON     bool
		timeout    time.Duration
		lf         logFlags
	)
	cmd := &cobra.Command{
		Use:   "drill [-c FILE --flow A->B]",
		Short: "Rehearse the disaster-recovery day and measure its RPO and RTO",
		Long: `Run the whole disaster-recovery sequence with a synthetic producer and
consumer group, and print what it cost: the RPO (records not copied when the
primary was lost, and how old the oldest was), the RTO (from the loss to the
first record read on the copy), and the records the consumer lost, skipped or
read twice. Exit code 0 when nothing was skipped and nothing lost beyond the
RPO window.

  1. records are written to A and read by a consumer group, while Strait copies
     A->B;
  2. A is taken for lost (the drill stops using it; it does not stop brokers);
  3. strait failover moves the group to B, from its checkpoints;
  4. the group reads on B while records are written to B;
  5. strait failback returns the group to A, and B's records to A;
  6. the group reads on A again.

Without -c it runs on two embedded clusters (as strait demo). With -c FILE
--flow A->B it runs on those clusters, with their connection settings, but
with flows, a topic (strait-drill-TIME) and a group of its own under the
aliases drill-A and drill-B: it never touches the file's flows, topics or
groups, and it deletes its topic and group at the end.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" && len(args) > 0 {
				file = args[0]
			}
			logger, err := lf.logger(stderr)
			if err != nil {
				return err
			}
			if opts.Rate <= 0 || opts.Partitions <= 0 || opts.Warmup <= 0 {
				return usageError{errors.New("--rate, --partitions and --warmup must be positive")}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			opts.Out, opts.Log = stdout, logger
			if asJSON {
				opts.Out = stderr
			}
			var data []byte
			a, b := "A", "B"
			if file == "" {
				ka, err := kfake.NewCluster(kfake.NumBrokers(1))
				if err != nil {
					return err
				}
				defer ka.Close()
				kb, err := kfake.NewCluster(kfake.NumBrokers(1))
				if err != nil {
					return err
				}
				defer kb.Close()
				fmt.Fprintf(opts.Out, "Embedded clusters: A at %s, B at %s.\n", ka.ListenAddrs()[0], kb.ListenAddrs()[0])
				data = fmt.Appendf(nil, `clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
`, ka.ListenAddrs()[0], kb.ListenAddrs()[0])
			} else {
				if flow == "" {
					return usageError{errors.New("with -c FILE, name the pair with --flow SOURCE->TARGET")}
				}
				if a, b, err = parseFlow(flow); err != nil {
					return err
				}
				if data, err = os.ReadFile(file); err != nil {
					return usageError{err}
				}
			}
			drillProps, err := drill.Configure(data, a, b)
			if err != nil {
				return configError{err}
			}
			cfg, err := config.Parse("drill of "+a+"->"+b, drillProps, config.LoadOptions{})
			if err != nil {
				return configError{err}
			}
			res, err := drill.Run(ctx, cfg, drill.Alias(a), drill.Alias(b), opts)
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(stdout, res); err != nil {
					return err
				}
			} else {
				printDrill(stdout, res, a, b)
			}
			if !res.OK() {
				return errors.New("the drill skipped records or lost more than its RPO (above)")
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "config", "c", "", "MM2 properties file with the two clusters (default: two embedded clusters)")
	cmd.Flags().StringVar(&flow, "flow", "", "with -c: the pair, SOURCE->TARGET")
	cmd.Flags().IntVar(&opts.Rate, "rate", 1000, "records per second the synthetic producer writes")
	cmd.Flags().DurationVar(&opts.Warmup, "warmup", 8*time.Second, "how long records flow on A before it is taken for lost (half as long on B, and on A after the failback)")
	cmd.Flags().Int32Var(&opts.Partitions, "partitions", 2, "partitions of the drill topic")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON (progress goes to stderr)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	lf.register(cmd, "error")
	return cmd
}

func printDrill(w io.Writer, r drill.Result, a, b string) {
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "Drill %s->%s: %s\n", a, b, verdict)
	fmt.Fprintf(w, "  RPO         %d %s not copied when %s was lost, the oldest written %.1f s before\n", r.RPORecords, nouns(r.RPORecords, "record"), a, r.RPOSeconds)
	fmt.Fprintf(w, "  RTO         %.1f s from the loss to the first record read on %s (strait failover: %.1f s)\n", r.RTOSeconds, b, r.FailoverSeconds)
	fmt.Fprintf(w, "  records     %d written, %d read; %d lost (the RPO's orphans not read before the loss), %d skipped, %d read twice\n", r.Produced, r.Read, r.Lost, r.Skipped, r.ReadTwice)
	fmt.Fprintf(w, "              (read twice: what the group read on %s after its last checkpoint, which a failover without %s must take;\n", a, a)
	fmt.Fprintf(w, "              a failover while %s is reachable waits for the copy and moves the group exactly)\n", a)
}
