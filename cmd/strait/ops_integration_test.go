//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/api/dashboard/dashboardtest"
	"strait/internal/kafkatest"
)

// TestStatusDuringBacklogCopy runs strait with its API on a throttled backlog copy and
// checks `strait status` against it: while the backlog copies, a progress bar with an ETA;
// once caught up, no backlog, lag 0 and exit code 0. The Connect-style status and the
// probes answer as MM2 scripts and Kubernetes expect.
func TestStatusDuringBacklogCopy(t *testing.T) {
	a := env.Clusters[0]
	w := &workload{topic: kafkatest.Name(t, "status"), partitions: 4}
	a.CreateTopic(t, w.topic, 4, nil)
	// About 2.5 MB, uncompressed so that the throttle below makes the copy last about 16 s.
	// Batches of 16 KiB at most: a fetch holds at least one whole batch.
	w.produce(t, a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), 20_000)
	addr := kafkatest.FreeAddr(t)
	const token = "status-test-token"
	// Small fetches, so that the throttle paces the copy fetch by fetch.
	cfg := writeConfig(t, fmt.Sprintf("topics = %s\nstrait.throttle.bytes.per.second = 150000\nA.consumer.max.partition.fetch.bytes = 32768\nA.consumer.fetch.max.bytes = 131072\nstrait.api.listen = %s\nstrait.api.token = %s", w.topic, addr, token))
	p := startStrait(t, "run", cfg)
	base := "http://" + addr

	bar := regexp.MustCompile(`backlog +\[#*\.*\] +\d+%  [\d.k]+ of [\d.k]+ records, ETA \d`)
	var during string
	kafkatest.Eventually(t, time.Minute, func() error {
		out, err := straitStatus(t, base, token)
		if err != nil {
			return err
		}
		if !bar.MatchString(out) {
			return fmt.Errorf("no progress bar with an ETA yet:\n%s", out)
		}
		during = out
		return nil
	})
	t.Logf("strait status during the copy:\n%s", during)
	if !strings.Contains(during, "Flow A->B: running") || !strings.Contains(during, "lag (RPO)") {
		t.Errorf("status during the copy lacks the flow's state or lag:\n%s", during)
	}

	waitCaughtUp(t, w.topic, "A."+w.topic, 2*time.Minute)
	var after string
	kafkatest.Eventually(t, 30*time.Second, func() error {
		out, err := straitStatus(t, base, token)
		if err != nil {
			return err
		}
		if strings.Contains(out, "backlog") || !strings.Contains(out, "lag (RPO)   0 records, 0.0 s") {
			return fmt.Errorf("not caught up in the status yet:\n%s", out)
		}
		after = out
		return nil
	})
	t.Logf("strait status after the copy:\n%s", after)

	// The dashboard of the running node, in headless Chromium.
	parts := []dashboardtest.Partition{}
	for p := range int32(4) {
		parts = append(parts, dashboardtest.Partition{Flow: "A->B", Topic: w.topic, Partition: p})
	}
	root, err := dashboardtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dashboardtest.Check(t, base, token, filepath.Join(root, "bin", "artifacts", "dashboard-node.png"), dashboardtest.Want{
		Flows: []string{"A->B"}, Partitions: parts, NewPoints: true, Timeout: time.Minute,
	})

	// --json is for scripts.
	out, err := exec.Command(straitBinary(t), "status", "--api", base, "--token", token, "--json").Output()
	if err != nil {
		t.Fatalf("strait status --json: %v", err)
	}
	var doc struct {
		Flows []struct {
			Name       string `json:"name"`
			LagRecords int64  `json:"lag_records"`
			Records    int64  `json:"records"`
		} `json:"flows"`
		Partitions []struct{ State string } `json:"partitions"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Flows) != 1 || doc.Flows[0].Records < 20_000 /* and the heartbeats */ || doc.Flows[0].LagRecords != 0 || len(doc.Partitions) != 5 /* and heartbeats' */ {
		t.Errorf("strait status --json: %v\n%s", err, out)
	}

	// What MM2 users curl, and the probes.
	for _, c := range []struct {
		path, token string
		code        int
		has         string
	}{
		{"/connectors/MirrorSourceConnector/status", token, 200, `"state": "RUNNING"`},
		{"/connectors", token, 200, `"MirrorSourceConnector"`},
		{"/connectors", "", 401, "missing bearer token"},
		{"/healthz", "", 200, "alive"},
		{"/readyz", "", 200, `"ready": true`},
		{"/metrics", token, 200, "strait_records_copied_total"},
	} {
		code, body := apiGet(t, base+c.path, c.token)
		if code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("GET %s: %d %s; want %d with %q", c.path, code, body, c.code, c.has)
		}
	}
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	// With the node gone, status says it cannot reach it and exits 1.
	cmd := exec.Command(straitBinary(t), "status", "--api", base, "--token", token)
	msg, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(msg), "cannot reach the node's API") {
		t.Errorf("strait status with no node: %v\n%s", err, msg)
	}
}

func straitStatus(t *testing.T, base, token string) (string, error) {
	t.Helper()
	out, err := exec.Command(straitBinary(t), "status", "--api", base, "--token", token).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("strait status: %v: %s", err, out)
	}
	return string(out), nil
}

func apiGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
