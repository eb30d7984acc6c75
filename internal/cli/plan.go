package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/kafkaclient"
)

// errPending is check --plan's answer when changes are pending: exit code
// ExitPending, for GitOps pipelines.
var errPending = errors.New("changes are pending")

// writePlanJSON prints the plan as check --plan --json does.
func writePlanJSON(w io.Writer, changes []daemon.FlowChanges) error {
	return printJSON(w, struct {
		Pending bool                 `json:"pending"`
		Flows   []daemon.FlowChanges `json:"flows"`
	}{pending(changes), changes})
}

// checkPlan prints what every flow's control plane would change on its
// target, as text or JSON, and changes nothing. It returns errPending when
// something would change.
func checkPlan(ctx context.Context, w io.Writer, cfg *config.Config, plan *kafkaclient.Plan, asJSON bool) error {
	changes, err := daemon.New(cfg, daemon.Options{Plan: plan, Logger: slog.New(slog.DiscardHandler)}).Plan(ctx)
	if changes == nil {
		return err
	}
	if asJSON {
		if err := writePlanJSON(w, changes); err != nil {
			return err
		}
	} else {
		renderPlan(w, changes)
	}
	if err != nil {
		return err // a flow's plan is incomplete: not "in sync"
	}
	if pending(changes) {
		return errPending
	}
	return nil
}

func pending(changes []daemon.FlowChanges) bool {
	return slices.ContainsFunc(changes, daemon.FlowChanges.Pending)
}

// renderPlan prints the plan of every flow, one change per line.
func renderPlan(w io.Writer, changes []daemon.FlowChanges) {
	for _, c := range changes {
		fmt.Fprintf(w, "Flow %s:\n", c.Flow)
		var lines []string
		add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
		t := c.Topics
		for _, ct := range t.Create {
			add("+ create topic %s (from %s, %s)%s", ct.Remote, ct.Source, plural(int(ct.Partitions), "partition"), configList(ct.Configs))
		}
		for _, g := range t.Grow {
			add("~ grow %s: %d -> %d partitions", g.Remote, g.From, g.To)
		}
		for _, cc := range t.Configs {
			old := "(unset)"
			if cc.Old != nil {
				old = *cc.Old
			}
			add("~ config %s: %s %s -> %s", cc.Remote, cc.Key, old, cc.New)
		}
		for _, d := range t.Deleted {
			if d.Delete {
				add("- delete topic %s (its source topic %s was deleted; strait.sync.topic.deletion=true)", d.Remote, d.Source)
			} else {
				add("! source topic %s was deleted; %s stays (strait.sync.topic.deletion=false)", d.Source, d.Remote)
			}
		}
		if c.ACLs != nil {
			for _, b := range c.ACLs.Add {
				add("+ ACL %s", b)
			}
		}
		for _, p := range t.Problems {
			what := p.Topic
			if p.Key != "" {
				what += " " + p.Key
			}
			add("! %s: %s", what, p.Err)
		}
		if c.ACLs != nil {
			for _, p := range c.ACLs.Problems {
				add("! ACL %s", p)
			}
			if c.ACLs.SourceSecurityDisabled {
				add("  (ACLs: the source has no authorizer, so there are none to copy)")
			}
		}
		if len(lines) == 0 {
			lines = append(lines, "in sync: nothing to change")
		}
		if len(c.KeepOffsets) > 0 {
			lines = append(lines, "keeps the source's offsets (strait.offsets.preserve):")
			for _, g := range c.KeepOffsets {
				lines = append(lines, fmt.Sprintf("  %s -> %s: %s", g.Source, g.Remote, g))
			}
		}
		if len(t.Names) > 0 {
			lines = append(lines, "topics (source -> remote):")
			for _, n := range t.Names {
				lines = append(lines, fmt.Sprintf("  %s -> %s", n.Source, n.Remote))
			}
		}
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if pending(changes) {
		fmt.Fprintln(w, "\nChanges are pending (exit code 3); `strait run` applies them.")
	} else {
		fmt.Fprintln(w, "\nIn sync: nothing to change.")
	}
}

// configList prints a topic's configs as " with k=v, k=v", sorted.
func configList(cfgs map[string]string) string {
	if len(cfgs) == 0 {
		return ""
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(cfgs)) {
		kv = append(kv, k+"="+cfgs[k])
	}
	return " with " + strings.Join(kv, ", ")
}
