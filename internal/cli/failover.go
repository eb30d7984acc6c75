package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/switchover"
)

func newFailoverCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cf     configFlags
		flow   string
		ff     switchover.Options
		groups string
	)
	cmd := &cobra.Command{
		Use:   "failover -c FILE --flow A->B [--groups RE] [--max-rpo 30s] [--fence-source] [--execute]",
		Short: "Move consumer groups from the source to the target of a flow, exactly, and stop the flow",
		Long: `Fail the flow A->B over to B: consumers move from A to B with the exact
offsets of Strait's index. Without --execute it only prints the plan.

With --execute, when A is reachable:
  1. --fence-source adds DENY WRITE ACLs for every principal on A's replicated
     topics, so no producer writes there during the switch (A needs an
     authorizer; without one the failover refuses, changing nothing);
  2. a gate waits until every record on A is copied, or until what is not
     copied was written less than --max-rpo ago;
  3. every node running the flow stops it (the failover state on B tells
     them), flushing and committing what it copied;
  4. each group's committed offsets on A are translated exactly through the
     index and committed to B; a group with active members on B is refused,
     by name, before anything changes;
  5. a before/after table per group and partition is printed and written as
     JSON (--report).
When A is unreachable, the groups' offsets come from the checkpoints on B,
translated again through the index, and the report says exactly what was
copied up to when. The flow copies nothing again until strait failback.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sa, err := loadSwitch(cmd, args, &cf, flow, groups, "to fail over")
			if err != nil {
				return err
			}
			ff.Groups = sa.groups
			if ff.MaxRPO < 0 {
				return usageError{fmt.Errorf("--max-rpo %s: give a duration from 0", ff.MaxRPO)}
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			o, err := open(ctx, cf.file, sa.cfg, sa.plan, sa.from, sa.to, "failover")
			if err != nil {
				return err
			}
			defer o.Close()
			ff.Out, ff.Log = stdout, stderr
			return switchover.Failover(ctx, o, ff)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&flow, "flow", "", "the flow to fail over, SOURCE->TARGET")
	cmd.Flags().StringVar(&groups, "groups", "", "move only the groups this regular expression matches in full (default: every group the flow checkpoints)")
	cmd.Flags().DurationVar(&ff.MaxRPO, "max-rpo", 0, "let the gate pass while what is not copied was written less than this long ago (default 0: nothing may be lost)")
	cmd.Flags().BoolVar(&ff.Fence, "fence-source", false, "add DENY WRITE ACLs on the source topics for the switch (needs an authorizer on the source)")
	cmd.Flags().BoolVar(&ff.Execute, "execute", false, "carry the plan out (without it, only print it)")
	cmd.Flags().StringVar(&ff.Report, "report", "", "write the before/after table as JSON to this file (default strait-failover-SOURCE-TARGET-TIME.json)")
	cmd.Flags().DurationVar(&ff.GateTimeout, "gate-timeout", 5*time.Minute, "how long the gate waits for the copy to catch up")
	cmd.Flags().DurationVar(&ff.StopTimeout, "stop-timeout", 2*time.Minute, "how long to wait for the nodes running the flow to stop it")
	cmd.Flags().DurationVar(&ff.SourceTimeout, "source-timeout", 15*time.Second, "how long to try the source before taking it for lost")
	return cmd
}
