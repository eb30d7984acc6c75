package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/flowconn"
	"strait/internal/switchover"
)

func newFailbackCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cf     configFlags
		flow   string
		groups string
		opts   switchover.FailbackOptions
	)
	cmd := &cobra.Command{
		Use:   "failback -c FILE --flow A->B [--groups RE] [--copy-orphans] [--execute]",
		Short: "Return a failed-over flow's consumers to its source once it is back",
		Long: `Return the flow A->B, which strait failover moved to B, to A. Without
--execute it only prints the plan.

  1. It checks that A is back, and is the cluster the failover left (same
     cluster id).
  2. It reports A's orphans exactly: the records written on A after the last
     one copied to B, which never reached B (topic, partition, offsets, count,
     time range). They stay on A; --copy-orphans also copies them to a side
     topic on A, strait-orphans.TOPIC.internal. A client-side tool cannot
     cut a log's end, so Strait never deletes them: consumers moved back start
     after them.
  3. The reverse flow B->A (it must be enabled in FILE and run by strait run)
     copies what was written on B since the failover; the failback waits until
     it has. With IdentityReplicationPolicy the topics keep their names.
  4. It commits each group's offsets on A, translated exactly from its
     offsets on B, refusing groups with active members on A.
  5. It lifts the failover's fence on A and clears the failover, so that A->B
     copies again once strait run restarts.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sa, err := loadSwitch(cmd, args, &cf, flow, groups, "that was failed over")
			if err != nil {
				return err
			}
			opts.Groups = sa.groups
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			fwd, err := open(ctx, cf.file, sa.cfg, sa.plan, sa.from, sa.to, "failback")
			if err != nil {
				return err
			}
			defer fwd.Close()
			var rev *flowconn.Conn
			if rp := sa.plan.Flow(sa.to, sa.from); rp != nil && rp.Replicates {
				if rev, err = flowconn.Open(ctx, sa.cfg, rp, "failback"); err != nil {
					return fmt.Errorf("the reverse flow %s->%s: %w", sa.to, sa.from, err)
				}
				defer rev.Close()
			}
			opts.Out, opts.Log = stdout, stderr
			return switchover.Failback(ctx, fwd, rev, opts)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&flow, "flow", "", "the flow that was failed over, SOURCE->TARGET")
	cmd.Flags().StringVar(&groups, "groups", "", "move back only the groups this regular expression matches in full (default: every group the flow checkpoints)")
	cmd.Flags().BoolVar(&opts.CopyOrphans, "copy-orphans", false, "copy the orphans to strait-orphans.TOPIC.internal on the source")
	cmd.Flags().DurationVar(&opts.MaxRPO, "max-rpo", 0, "let the gate pass while what the reverse flow has not copied was written less than this long ago")
	cmd.Flags().BoolVar(&opts.Execute, "execute", false, "carry the plan out (without it, only print it)")
	cmd.Flags().StringVar(&opts.Report, "report", "", "write the before/after table and the orphans as JSON to this file (default strait-failback-SOURCE-TARGET-TIME.json)")
	cmd.Flags().DurationVar(&opts.GateTimeout, "gate-timeout", 5*time.Minute, "how long the gate waits for the reverse flow")
	cmd.Flags().DurationVar(&opts.SourceTimeout, "source-timeout", 15*time.Second, "how long to try the source before taking it for still gone")
	return cmd
}
