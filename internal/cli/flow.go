package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"strait/internal/config"
	"strait/internal/flowconn"
	"strait/internal/kafkaclient"
)

// parseFlow splits "A->B".
func parseFlow(s string) (from, to string, err error) {
	from, to, ok := strings.Cut(s, "->")
	if !ok || from == "" || to == "" {
		return "", "", usageError{fmt.Errorf("--flow %q: give it as SOURCE->TARGET, e.g. --flow 'A->B' (quoted for the shell)", s)}
	}
	return from, to, nil
}

// switchArgs are what failover and failback read from their flags and
// the configuration file.
type switchArgs struct {
	from, to string
	groups   *regexp.Regexp // --groups, nil for every group the flow checkpoints
	cfg      *config.Config
	plan     *kafkaclient.Plan
}

// loadSwitch reads --flow (which names the flow that the command is for, as
// what says), --groups and the configuration file.
func loadSwitch(cmd *cobra.Command, args []string, cf *configFlags, flow, groups, what string) (switchArgs, error) {
	var sa switchArgs
	if err := cf.resolve(cmd, args); err != nil {
		return sa, err
	}
	if flow == "" {
		return sa, usageError{fmt.Errorf("name the flow %s with --flow SOURCE->TARGET", what)}
	}
	var err error
	if sa.from, sa.to, err = parseFlow(flow); err != nil {
		return sa, err
	}
	if sa.groups, err = optionalRegexp("--groups", groups); err != nil {
		return sa, err
	}
	sa.cfg, sa.plan, err = cf.load()
	return sa, err
}

// open opens the enabled flow from->to of plan (flowconn.Open), or says
// which flows file enables.
func open(ctx context.Context, file string, cfg *config.Config, plan *kafkaclient.Plan, from, to, role string) (*flowconn.Conn, error) {
	fp := plan.Flow(from, to)
	if fp == nil || !fp.Replicates {
		return nil, usageError{fmt.Errorf("%s has no enabled flow %s->%s: set %s->%s.enabled = true (flows: %s)", file, from, to, from, to, enabledFlows(plan))}
	}
	return flowconn.Open(ctx, cfg, fp, role)
}

func enabledFlows(plan *kafkaclient.Plan) string {
	var names []string
	for _, fp := range plan.Flows {
		if fp.Replicates {
			names = append(names, fp.Flow.Name())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
