package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

// initCluster is one side of the flow init writes: an MM2 cluster alias
// and its bootstrap servers.
type initCluster struct {
	Alias     string
	Bootstrap string
}

// aliasPattern is what init accepts as an alias: MM2 takes more, but an
// alias becomes part of remote topic names (A.orders) and of keys (A->B.),
// so a first config keeps to names that are safe in both.
var aliasPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// parseInitCluster reads ALIAS=HOST:PORT[,HOST:PORT...].
func parseInitCluster(flag, v string) (initCluster, error) {
	alias, servers, ok := strings.Cut(v, "=")
	alias, servers = strings.TrimSpace(alias), strings.TrimSpace(servers)
	switch {
	case !ok || alias == "" || servers == "":
		return initCluster{}, usageError{fmt.Errorf("--%s %q: give ALIAS=HOST:PORT[,HOST:PORT...], e.g. --%s A=kafka-a:9092", flag, v, flag)}
	case !aliasPattern.MatchString(alias):
		return initCluster{}, usageError{fmt.Errorf("--%s: alias %q must start with a letter and hold only letters, digits, '_' and '-'", flag, alias)}
	}
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if i := strings.LastIndexByte(s, ':'); i <= 0 || i == len(s)-1 {
			return initCluster{}, usageError{fmt.Errorf("--%s: bootstrap server %q has no HOST:PORT form", flag, s)}
		}
	}
	return initCluster{Alias: alias, Bootstrap: servers}, nil
}

// initFile is the commented mm2.properties init writes. Every key in it is
// one `strait check` accepts without a warning (TestInitWritesAFileCheckAccepts).
var initFile = template.Must(template.New("mm2.properties").Parse(`# MirrorMaker 2 configuration, written by 'strait init'. Strait and Apache
# MirrorMaker 2 both read it. Check it with 'strait check -c FILE', then run
# 'strait run -c FILE'. Every key: docs/configuration.md.

# The clusters, by alias. Remote topics are named ALIAS.topic on the other side.
clusters = {{.Source.Alias}}, {{.Target.Alias}}
{{.Source.Alias}}.bootstrap.servers = {{.Source.Bootstrap}}
{{.Target.Alias}}.bootstrap.servers = {{.Target.Bootstrap}}

# Security, per cluster (docs/security.md). For example, SCRAM over TLS:
# {{.Source.Alias}}.security.protocol = SASL_SSL
# {{.Source.Alias}}.sasl.mechanism = SCRAM-SHA-512
# {{.Source.Alias}}.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="USER" password="${file:/etc/strait/secrets.properties:password}";
# {{.Source.Alias}}.ssl.truststore.location = /etc/strait/truststore.p12

# The flow: copy {{.Source.Alias}}'s topics and consumer groups to {{.Target.Alias}}.
{{.Source.Alias}}->{{.Target.Alias}}.enabled = true
{{.Source.Alias}}->{{.Target.Alias}}.topics = {{.Topics}}
{{.Source.Alias}}->{{.Target.Alias}}.groups = {{.Groups}}
# Groups' offsets on {{.Target.Alias}}, translated exactly, for consumers that fail over:
# {{.Source.Alias}}->{{.Target.Alias}}.sync.group.offsets.enabled = true

# The other way too (active-active); each side skips what it copied itself:
# {{.Target.Alias}}->{{.Source.Alias}}.enabled = true

# Replication factor of the topics Strait creates on {{.Target.Alias}}.
{{- if .ReplicationFactor}}
replication.factor = {{.ReplicationFactor}}
checkpoints.topic.replication.factor = {{.ReplicationFactor}}
heartbeats.topic.replication.factor = {{.ReplicationFactor}}
offset-syncs.topic.replication.factor = {{.ReplicationFactor}}
{{- else}}
# MM2's defaults are 2 for remote topics and 3 for its internal topics; -1
# takes the broker's default.replication.factor.
# replication.factor = 3
# checkpoints.topic.replication.factor = 3
# heartbeats.topic.replication.factor = 3
# offset-syncs.topic.replication.factor = 3
{{- end}}

# Topic configs and ACLs follow the source (MM2's defaults). Without an
# authorizer on {{.Source.Alias}} there are no ACLs to sync: set this to false.
# sync.topic.acls.enabled = true

# No duplicates on {{.Target.Alias}} even after a crash (docs/configuration.md):
# strait.exactly.once = true
`))

func newInitCmd(stdout io.Writer) *cobra.Command {
	var (
		source, target string
		topics, groups string
		factor         int
		out            string
		force          bool
	)
	cmd := &cobra.Command{
		Use:   "init --source ALIAS=HOST:PORT --target ALIAS=HOST:PORT [-o FILE]",
		Short: "Write a commented mm2.properties for two clusters",
		Long: `Write a first MM2 configuration file for a flow from one cluster to another,
with comments on the keys a user changes first (security, group offset
sync, the reverse flow, replication factors, exactly-once mode). Strait and
Apache MirrorMaker 2 both read it.

It prints the file, or writes it to -o FILE; an existing FILE is kept unless
--force.`,
		Example: `  strait init --source A=kafka-a:9092 --target B=kafka-b:9092 -o mm2.properties
  strait check -c mm2.properties`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if source == "" || target == "" {
				return usageError{errors.New("give both clusters: --source ALIAS=HOST:PORT --target ALIAS=HOST:PORT")}
			}
			src, err := parseInitCluster("source", source)
			if err != nil {
				return err
			}
			dst, err := parseInitCluster("target", target)
			if err != nil {
				return err
			}
			if src.Alias == dst.Alias {
				return usageError{fmt.Errorf("--source and --target have the same alias %q: give each cluster its own", src.Alias)}
			}
			for _, re := range []struct{ flag, v string }{{"topics", topics}, {"groups", groups}} {
				if _, err := regexp.Compile(re.v); err != nil {
					return usageError{fmt.Errorf("--%s %q is not a regular expression: %v", re.flag, re.v, err)}
				}
			}
			if factor < -1 || factor == 0 && cmd.Flags().Changed("replication-factor") {
				return usageError{fmt.Errorf("--replication-factor %d: give a number from 1, or -1 for the broker's default", factor)}
			}
			data := struct {
				Source, Target    initCluster
				Topics, Groups    string
				ReplicationFactor int
			}{src, dst, topics, groups, factor}
			var b strings.Builder
			if err := initFile.Execute(&b, data); err != nil {
				return err
			}
			if out == "" {
				_, err := io.WriteString(stdout, b.String())
				return err
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(out, flags, 0o644) // no secrets: they belong in the files config providers read
			if errors.Is(err, os.ErrExist) {
				return usageError{fmt.Errorf("%s exists: keep it, or add --force to replace it", out)}
			}
			if err != nil {
				return err
			}
			if _, err := f.WriteString(b.String()); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s: check it with 'strait check -c %s', then 'strait run -c %s'\n", out, out, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "the source cluster: ALIAS=HOST:PORT[,HOST:PORT...]")
	cmd.Flags().StringVar(&target, "target", "", "the target cluster: ALIAS=HOST:PORT[,HOST:PORT...]")
	cmd.Flags().StringVar(&topics, "topics", ".*", "the source topics to copy (a regular expression)")
	cmd.Flags().StringVar(&groups, "groups", ".*", "the consumer groups whose offsets to translate (a regular expression)")
	cmd.Flags().IntVar(&factor, "replication-factor", 0, "replication factor of every topic Strait creates (1 for single-broker clusters, -1 for the broker's default); unset keeps MM2's defaults, commented")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the file here instead of printing it")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE when it exists")
	return cmd
}
