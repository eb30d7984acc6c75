// Package cli holds Strait's subcommands. Main is the whole program minus
// process setup, so tests can run any command in-process.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"strait/internal/switchover"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed (cluster unreachable, a flow failed)
	ExitUsage   = 2 // bad flags or a bad configuration file
	ExitPending = 3 // check --plan: changes are pending
)

// usageError marks errors that are the user's input, not the run.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// configError is bad input that is not the command line: a configuration
// file with problems. It exits like a usage error, without the pointer to
// --help: its problems say what to fix.
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

// Main runs strait with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errPending) {
		return ExitPending // the plan printed says what
	}
	fmt.Fprintf(stderr, "strait: %v\n", err)
	var ce configError
	if errors.As(err, &ce) {
		return ExitUsage
	}
	var ue usageError
	var refused switchover.Refusal
	if errors.As(err, &refused) {
		return ExitUsage // the error says what changed: nothing
	}
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") {
		// One line, never the whole help: the error is what to read.
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitUsage
	}
	return ExitFailure
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "strait",
		Short:         "Kafka cross-cluster replication, a drop-in replacement for MirrorMaker 2",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// --version prints what `strait version` prints.
	root.Version = Version()
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(
		newRunCmd(stderr),
		newCheckCmd(stdout),
		newDemoCmd(stdout, stderr),
		newOffsetsCmd(stdout),
		newVerifyCmd(stdout, stderr),
		newFailoverCmd(stdout, stderr),
		newFailbackCmd(stdout, stderr),
		newDrillCmd(stdout, stderr),
		newStatusCmd(stdout),
		newVersionCmd(stdout),
		newImportCmd(stdout, stderr),
		newInitCmd(stdout),
	)
	return root
}

// printJSON writes v as indented JSON, with "->" in flow names as it is.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// logFlags are the logging flags shared by long-running commands.
type logFlags struct {
	level  string
	format string
}

func (l *logFlags) register(cmd *cobra.Command, level string) {
	cmd.Flags().StringVar(&l.level, "log-level", level, "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&l.format, "log-format", "text", "log format: text or json")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: use debug, info, warn or error", l.level)}
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Errorf("--log-format %q: use text or json", l.format)}
}

// versionLine is the version, the commit and the Go toolchain and platform.
func versionLine() string {
	return fmt.Sprintf("strait %s (commit %s, %s, %s/%s)", Version(), Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(stdout, versionLine())
			return nil
		},
	}
}

// buildVersion and buildCommit are set at link time by the Makefile
// (-X strait/internal/cli.buildVersion=... -X strait/internal/cli.buildCommit=...)
// from git describe and git rev-parse. A plain go build leaves them empty,
// and Version and Commit fall back to the build info.
var (
	buildVersion string
	buildCommit  string
)

// Version returns the version Strait was built as: the Makefile's git
// describe, else the module version, else "dev".
func Version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return "dev"
}

// Commit returns the commit Strait was built from: the Makefile's git
// rev-parse, else the VCS revision go build stamped (with "-dirty" for a
// modified tree), else "unknown" (go build -buildvcs=false, or no git).
func Commit() string {
	if buildCommit != "" {
		return buildCommit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "unknown"
	}
	return rev + dirty
}
