package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"strait/internal/strimzi"
)

// newImportCmd groups the converters from other tools' configurations.
func newImportCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Convert another tool's MirrorMaker 2 configuration into mm2.properties",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newImportStrimziCmd(stdout, stderr))
	return cmd
}

func newImportStrimziCmd(stdout, stderr io.Writer) *cobra.Command {
	var secretsDir string
	cmd := &cobra.Command{
		Use:   "strimzi FILE.yaml",
		Short: "Convert a Strimzi KafkaMirrorMaker2 resource into mm2.properties on stdout",
		Long: `Convert the KafkaMirrorMaker2 resources in FILE.yaml (kafka.strimzi.io/v1beta2
or v1; other kinds in the file are skipped; - reads stdin) into one mm2.properties
on stdout. Several resources, such as the two halves of an active-active pair,
become one file with all their flows.

Every field that needs attention gets one line on stderr: "note" when it is
mapped but needs something from you (such as mounting a Secret at
--secrets-dir/<secret name>), "unmapped" when the properties have no equivalent,
with the reason and what to do instead. Unknown fields (typos) are unmapped.

Exit codes: 0 every field mapped; 1 the properties were printed but some fields
are unmapped (a script must not deploy them unread); 2 the file cannot be
converted (not YAML, no KafkaMirrorMaker2, no mirror to convert).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("give one file: strait import strimzi FILE.yaml (got %d arguments)", len(args))}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			var data []byte
			var err error
			if name == "-" {
				data, err = io.ReadAll(os.Stdin)
				name = "stdin"
			} else {
				data, err = os.ReadFile(name)
			}
			if err != nil {
				return usageError{fmt.Errorf("reading %s: %w", name, err)}
			}
			res, err := strimzi.Convert(name, data, strimzi.Options{SecretsDir: secretsDir})
			for _, l := range res.Lines() {
				fmt.Fprintln(stderr, l)
			}
			var ie *strimzi.InputError
			if errors.As(err, &ie) {
				return configError{err}
			}
			if err != nil {
				return err
			}
			if _, err := io.WriteString(stdout, res.Properties); err != nil {
				return fmt.Errorf("writing the properties: %w", err)
			}
			if !res.Complete() {
				n := 0
				for _, f := range res.Findings {
					if f.Kind == strimzi.Unmapped {
						n++
					}
				}
				have := "have"
				if n == 1 {
					have = "has"
				}
				return fmt.Errorf("%s of %s %s no equivalent in the properties (the unmapped lines above): do what each says before deploying", plural(n, "field"), name, have)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&secretsDir, "secrets-dir", strimzi.DefaultSecretsDir, "where Strait's pod mounts the Kubernetes Secrets the resource names, one directory per Secret")
	return cmd
}
