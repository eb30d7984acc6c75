package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/flowconn"
	"strait/internal/kafkaclient"
	"strait/internal/verify"
)

func newVerifyCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cf                   configFlags
		flow, topics, groups string
		since                string
		asJSON, progress     bool
		timeout              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "verify [-c] FILE [--flow A->B] [--topics RE] [--groups RE] [--since TIME] [--json]",
		Short: "Prove the copy complete and exact: every record where the offset index says, every checkpoint exact",
		Long: `Read each replicated partition on the source and its copy on the target, and
check through Strait's offset index that every source record is at the target
offset the index gives it, identical in key, value, headers and timestamp.
Reports missing, changed, reordered and extra records with their offsets on
both sides, and duplicates (an at-least-once flow's re-sends after a fault,
which are allowed). For each consumer group the flow checkpoints, reports
whether its checkpoint is there and exact, and why not.

The check runs up to the source end as it starts, or less where the flow has
not copied that far yet (its lag, reported, not a fault). Exit code 0 when the
copy is complete and exact up to the offsets reported, 1 when it is not.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.resolve(cmd, args); err != nil {
				return err
			}
			topicRE, err := optionalRegexp("--topics", topics)
			if err != nil {
				return err
			}
			groupRE, err := optionalRegexp("--groups", groups)
			if err != nil {
				return err
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			cfg, plan, err := cf.load()
			if err != nil {
				return err
			}
			flows, err := selectFlows(cf.file, plan, flow)
			if err != nil {
				return err
			}
			showProgress := progress || isTerminal(stderr)
			var reports []verify.FlowReport
			for _, name := range flows {
				src, dst, _ := parseFlow(name)
				err := func() error {
					ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
					defer cancel()
					o, err := open(ctx, cf.file, cfg, plan, src, dst, "verify")
					if err != nil {
						return err
					}
					defer o.Close()
					if err := o.LoadReverse(ctx); err != nil {
						return err
					}
					vf := verifyFlow(o, topicRE, groupRE, from)
					if showProgress {
						vf.Progress = newProgress(stderr, "verifying "+name)
					}
					rep, err := verify.Check(ctx, vf)
					if showProgress {
						fmt.Fprintln(stderr)
					}
					reports = append(reports, rep)
					return err
				}()
				if err != nil {
					return err
				}
			}
			if asJSON {
				if err := printJSON(stdout, map[string]any{"flows": reports}); err != nil {
					return err
				}
			} else {
				for _, r := range reports {
					printVerify(stdout, r)
				}
			}
			for _, r := range reports {
				if !r.OK() {
					return errors.New("the copy is not complete and exact (above)")
				}
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&flow, "flow", "", "the flow to verify, SOURCE->TARGET (default: every enabled flow)")
	cmd.Flags().StringVar(&topics, "topics", "", "verify only the source topics this regular expression matches in full")
	cmd.Flags().StringVar(&groups, "groups", "", "check only the groups this regular expression matches in full (default: every group the flow checkpoints)")
	cmd.Flags().StringVar(&since, "since", "", "check only records from this time on: RFC 3339 (2026-12-04T10:00:00Z) or a duration ago (90m)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	cmd.Flags().BoolVar(&progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "give up after this long")
	return cmd
}

// verifyFlow is the verify.Flow of o, narrowed to the topics and groups the
// expressions match in full (nil: all).
func verifyFlow(o *flowconn.Conn, topics, groups *regexp.Regexp, since time.Time) verify.Flow {
	fc := o.Flow
	every := fc.EmitCheckpointsInterval
	if !fc.EmitCheckpointsEnabled {
		every = 0
	}
	return verify.Flow{
		Name: fc.Name(), Source: fc.Source, Target: fc.Target,
		SourceAdmin: o.SourceAdmin, TargetAdmin: o.TargetAdmin, SourceReader: o.SourceReader, TargetReader: o.TargetReader,
		Index: o.Index, Translate: o.Translator(),
		Topics:           func(t string) bool { return o.Replicates(t) && matches(topics, t) },
		Groups:           func(g string) bool { return o.SelectedGroup(groups, g) },
		CheckpointsTopic: o.Policy.CheckpointsTopic(fc.Source),
		CheckpointsEvery: every,
		ActiveActive:     o.Reverse != nil,
		Since:            since,
	}
}

func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// optionalRegexp compiles a flag's expression anchored to match in full, as
// MM2's topic and group lists are; "" is nil.
func optionalRegexp(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, usageError{fmt.Errorf("%s %q is not a regular expression: %w", flag, expr, err)}
	}
	return re, nil
}

// parseSince reads --since: an RFC 3339 time or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageError{fmt.Errorf("--since %q: give an RFC 3339 time such as 2026-12-04T10:00:00Z or a duration ago such as 90m", s)}
}

// selectFlows returns the flow --flow names, or every enabled flow.
func selectFlows(file string, plan *kafkaclient.Plan, flow string) ([]string, error) {
	if flow != "" {
		from, to, err := parseFlow(flow)
		if err != nil {
			return nil, err
		}
		if fp := plan.Flow(from, to); fp == nil || !fp.Replicates {
			return nil, usageError{fmt.Errorf("%s has no enabled flow %s: set %s.enabled = true (flows: %s)", file, flow, flow, enabledFlows(plan))}
		}
		return []string{flow}, nil
	}
	var out []string
	for _, fp := range plan.Flows {
		if fp.Replicates {
			out = append(out, fp.Flow.Name())
		}
	}
	if len(out) == 0 {
		return nil, configError{fmt.Errorf("%s enables no flow: set A->B.enabled = true", file)}
	}
	return out, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newProgress returns a progress callback that redraws one line on w at
// most twice a second, with an ETA from the rate so far.
func newProgress(w io.Writer, what string) func(done, total int64) {
	start := time.Now()
	var last time.Time
	return func(done, total int64) {
		now := time.Now()
		if now.Sub(last) < 500*time.Millisecond && done < total {
			return
		}
		last = now
		frac := 1.0
		if total > 0 {
			frac = float64(done) / float64(total)
		}
		eta := "ETA unknown"
		if el := now.Sub(start).Seconds(); done > 0 && el > 0 {
			eta = "ETA " + durationText(float64(total-done)/(float64(done)/el))
		}
		fmt.Fprintf(w, "\r%s %s %3.0f%%  %s of %s %s, %s   ", what, progressBar(frac, 30), 100*frac, countText(float64(done)), countText(float64(total)), nouns(total, "offset"), eta)
	}
}

func printVerify(w io.Writer, r verify.FlowReport) {
	verdict := "complete and exact up to the offsets below"
	if !r.OK() {
		verdict = "NOT complete and exact: see the faults below"
	}
	fmt.Fprintf(w, "Flow %s: %s\n", r.Flow, verdict)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tSOURCE OFFSETS\tRECORDS\tMATCHED\tNOT COPIED YET\tMISSING\tCHANGED\tREORDERED\tEXTRA\tDUPLICATES")
	var findings []string
	for _, t := range r.Topics {
		if t.Problem != "" {
			fmt.Fprintf(tw, "%s\t-\t%s\n", t.Topic, t.Problem)
			continue
		}
		for _, p := range t.Partitions {
			fmt.Fprintf(tw, "%s\t%d\t[%d, %d)\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", t.Topic, p.Partition, p.From, p.UpTo, p.Records, p.Matched, p.NotCopied, p.Missing, p.Changed, p.Reordered, p.Extra, p.Duplicates)
			for _, f := range p.Findings {
				findings = append(findings, fmt.Sprintf("  %s[%d] -> %s[%d] %s", t.Topic, p.Partition, t.Remote, p.Partition, f))
			}
			if n := p.Missing + p.Changed + p.Reordered + p.Extra + p.Duplicates; n > int64(len(p.Findings)) {
				findings = append(findings, fmt.Sprintf("  %s[%d]: %d more not listed", t.Topic, p.Partition, n-int64(len(p.Findings))))
			}
		}
	}
	tw.Flush()
	if len(findings) > 0 {
		fmt.Fprintln(w, "Findings:")
		for _, f := range findings {
			fmt.Fprintln(w, f)
		}
	}
	rows := 0
	for _, g := range r.Groups {
		rows += len(g.Partitions)
	}
	if rows == 0 {
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tTRANSLATED\tCHECKPOINT\tSTATE\tWHY")
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			cp := "-"
			if p.Upstream >= 0 {
				cp = fmt.Sprintf("%d->%d", p.Upstream, p.Downstream)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", g.Group, p.Topic, p.Partition, p.Committed, p.Translated, cp, p.State, p.Why)
		}
	}
	tw.Flush()
}
