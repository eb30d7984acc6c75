package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"strait/internal/api"
)

func newStatusCmd(stdout io.Writer) *cobra.Command {
	var (
		url, token, caFile string
		asJSON             bool
		timeout            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status [--api URL]",
		Short: "Summarise a running node: flows, throughput, lag (RPO), backlog progress, stopped partitions",
		Long: `Read a running node's API and print, per flow, its state, throughput, lag in
records and seconds (what a failover now would lose), the progress of its
initial backlog copy, and every stopped partition with its reason. The token
comes from --token or STRAIT_API_TOKEN. Exit code 0 when every flow runs, 1
when a partition stopped or the node cannot be reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv("STRAIT_API_TOKEN")
			}
			c, err := newAPIClient(url, token, caFile, timeout)
			if err != nil {
				return usageError{err}
			}
			var flows api.FlowsView
			var parts api.PartitionsView
			if err := c.get(cmd.Context(), "/api/v1/flows", &flows); err != nil {
				return err
			}
			if err := c.get(cmd.Context(), "/api/v1/partitions", &parts); err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(stdout, map[string]any{"flows": flows.Flows, "partitions": parts.Partitions}); err != nil {
					return err
				}
			} else {
				renderStatus(stdout, flows, parts)
			}
			for _, f := range flows.Flows {
				if f.StoppedPartitions > 0 {
					return errors.New("partitions stopped (above); they copy nothing until Strait restarts")
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "api", "http://"+defaultAPI, "the node's API base URL")
	cmd.Flags().StringVar(&token, "token", "", "bearer token (strait.api.token; default $STRAIT_API_TOKEN)")
	cmd.Flags().StringVar(&caFile, "cacert", "", "PEM CA certificate to trust the API's TLS certificate with")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the flows and partitions as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the node")
	return cmd
}

const defaultAPI = "127.0.0.1:8083"

// apiClient reads a node's API.
type apiClient struct {
	base, token string
	http        *http.Client
}

func newAPIClient(base, token, caFile string, timeout time.Duration) (*apiClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("--api %q: give a URL such as http://%s", base, defaultAPI)
	}
	return &apiClient{base: strings.TrimSuffix(base, "/"), token: token, http: &http.Client{Transport: tr, Timeout: timeout}}, nil
}

func (c *apiClient) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the node's API at %s (is strait run up, and is strait.api.listen this address?): %w", c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading %s%s: %w", c.base, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e api.ErrorView
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return fmt.Errorf("%s%s: %s", c.base, path, e.Message)
		}
		return fmt.Errorf("%s%s: HTTP %d", c.base, path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("%s%s: not the API's JSON: %w", c.base, path, err)
	}
	return nil
}

// renderStatus prints the summary for humans.
func renderStatus(w io.Writer, flows api.FlowsView, parts api.PartitionsView) {
	if len(flows.Flows) == 0 {
		fmt.Fprintln(w, "No flow is running yet.")
	}
	for _, f := range flows.Flows {
		fmt.Fprintf(w, "Flow %s: %s\n", f.Name, f.State)
		fmt.Fprintf(w, "  throughput  %s/s, %s records/s\n", bytesText(f.BytesPerSecond), countText(f.RecordsPerSecond))
		fmt.Fprintf(w, "  lag (RPO)   %s %s, %s\n", countText(float64(f.LagRecords)), nouns(f.LagRecords, "record"), secondsText(f.LagSeconds))
		if f.FailoverNow != "" {
			fmt.Fprintf(w, "  failover    now %s\n", f.FailoverNow)
		}
		if b := f.Backlog; b != nil {
			eta := "ETA unknown"
			if b.ETASeconds != nil {
				eta = "ETA " + durationText(*b.ETASeconds)
			}
			fmt.Fprintf(w, "  backlog     %s %3.0f%%  %s of %s %s, %s\n", progressBar(b.Fraction, 30), 100*b.Fraction, countText(float64(b.Copied)), countText(float64(b.Total)), nouns(b.Total, "record"), eta)
		}
		fmt.Fprintf(w, "  partitions  %d (%d fast path, %d record path), %d stopped\n", f.Partitions, f.FastPath, f.RecordPath, f.StoppedPartitions)
		if s := f.Share; s != nil {
			duty := ""
			if s.Control {
				duty = ", holds the control duty"
			}
			fmt.Fprintf(w, "  shared      node %s, group %s generation %d slot %d (%s): owns %s%s\n", s.Node, s.Group, s.Generation, s.Slot, s.State, plural(len(s.Units), "partition"), duty)
			if s.Error != "" {
				fmt.Fprintf(w, "  ! group: %s\n", s.Error)
			}
		}
		if x := f.Transactions; x != nil {
			fmt.Fprintf(w, "  exactly-once transactional id %s: %d %s committed, %d aborted and copied again\n", x.ID, x.Committed, nouns(x.Committed, "transaction"), x.Aborted)
		}
		switch {
		case f.CheckpointAge != nil && f.CheckpointsEmitted == 0:
			// The checkpointer ran, with no group to checkpoint yet.
			fmt.Fprintf(w, "  checkpoints none written yet (checked %s ago)\n", secondsText(*f.CheckpointAge))
		case f.CheckpointAge != nil:
			fmt.Fprintf(w, "  checkpoints %s ago; %d written, %d group %s synced\n", secondsText(*f.CheckpointAge), f.CheckpointsEmitted, f.GroupOffsetsSynced, nouns(f.GroupOffsetsSynced, "offset"))
		}
		for _, p := range f.Problems {
			fmt.Fprintf(w, "  ! %s %s: %s\n", p.Kind, p.Item, p.Error)
		}
	}
	stopped := 0
	for _, p := range parts.Partitions {
		if p.State != "stopped" {
			continue
		}
		if stopped == 0 {
			fmt.Fprintln(w, "Stopped partitions:")
		}
		stopped++
		fmt.Fprintf(w, "  %s %s[%d]: %s\n", p.Flow, p.Topic, p.Partition, p.LastError)
	}
}

func progressBar(f float64, width int) string {
	n := int(f*float64(width) + 0.5)
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// plural is n and word, with an s unless n is 1: "1 partition", "3 partitions".
func plural(n int, word string) string { return fmt.Sprintf("%d %s", n, nouns(n, word)) }

// nouns is word for a count of 1, else its plural (an s): "1 record",
// "0 records", "3 records".
func nouns[N int | int32 | int64](n N, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// countText is a count with a k, M or G suffix from 10,000 on.
func countText(v float64) string { return scaled(v, 1e4, "", "k", "M", "G") }

// bytesText is a byte count in B, kB, MB or GB.
func bytesText(v float64) string { return scaled(v, 1e3, " B", " kB", " MB", " GB") }

// scaled writes v with the largest of the thousands-units (one, k, M, G)
// it reaches, from from on; below from, as a whole number with unit one.
func scaled(v, from float64, one, k, m, g string) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1f%s", v/1e9, g)
	case v >= 1e6:
		return fmt.Sprintf("%.1f%s", v/1e6, m)
	case v >= from:
		return fmt.Sprintf("%.1f%s", v/1e3, k)
	}
	return fmt.Sprintf("%.0f%s", v, one)
}

func secondsText(s float64) string {
	if s < 0 {
		return "unknown"
	}
	if s < 60 {
		return fmt.Sprintf("%.1f s", s)
	}
	return durationText(s)
}

func durationText(s float64) string {
	return (time.Duration(s) * time.Second).Round(time.Second).String()
}
