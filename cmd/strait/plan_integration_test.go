//go:build integration

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/kafkatest"
)

// checkPlan runs strait check --plan and returns its output and exit code.
func checkPlan(t *testing.T, cfg string, extra ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(straitBinary(t), append([]string{"check", "--plan", "-c", cfg}, extra...)...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("running strait check --plan: %v", err)
		return "", 0
	}
}

// TestCheckPlanShowsPendingChangesThenNone: before the first run, --plan
// lists the remote topic to create, with its config, and exits 3; once
// strait run has synced, it exits 0 with nothing to change; a config
// changed on the source shows as old -> new, in the JSON form too.
func TestCheckPlanShowsPendingChangesThenNone(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "plan")
	remote := "A." + topic
	retention := "86400000"
	a.CreateTopic(t, topic, 2, map[string]*string{"retention.ms": &retention})
	cfg := writeConfig(t, fmt.Sprintf("topics = %s\nsync.topic.configs.interval.seconds = 1\nsync.topic.acls.enabled = false", topic))

	out, code := checkPlan(t, cfg)
	if code != 3 || !strings.Contains(out, "+ create topic "+remote+" (from "+topic+", 2 partitions) with retention.ms=86400000") ||
		!strings.Contains(out, "    "+topic+" -> "+remote+"\n") {
		t.Fatalf("before the first run: exit %d, output:\n%s\nwant exit 3 and the topic to create", code, out)
	}
	if n := len(endOffsets(t, b, remote)); n != 0 {
		t.Fatalf("check --plan created %s (%d partitions): it must change nothing", remote, n)
	}

	p := startStrait(t, "run", cfg)
	kafkatest.Eventually(t, time.Minute, func() error {
		if out, code := checkPlan(t, cfg); code != 0 {
			return fmt.Errorf("exit %d while strait run syncs:\n%s", code, out)
		}
		return nil
	})
	if err := p.stop(t, syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	out, code = checkPlan(t, cfg)
	if code != 0 || !strings.Contains(out, "In sync: nothing to change.") {
		t.Fatalf("once in sync: exit %d, output:\n%s", code, out)
	}

	shorter := "3600000"
	if _, err := a.Admin(t).AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &shorter}}, topic); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() error {
		out, code = checkPlan(t, cfg, "--json")
		if code != 3 {
			return fmt.Errorf("after a source config change: exit %d, output:\n%s", code, out)
		}
		return nil
	})
	var plan struct {
		Pending bool `json:"pending"`
		Flows   []struct {
			Flow   string `json:"flow"`
			Topics struct {
				Configs []struct {
					Remote string  `json:"remote"`
					Key    string  `json:"key"`
					Old    *string `json:"old"`
					New    string  `json:"new"`
				} `json:"configs"`
			} `json:"topics"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if !plan.Pending || len(plan.Flows) != 1 || len(plan.Flows[0].Topics.Configs) != 1 {
		t.Fatalf("--json plan %+v, want one pending config change:\n%s", plan, out)
	}
	c := plan.Flows[0].Topics.Configs[0]
	if c.Remote != remote || c.Key != "retention.ms" || c.Old == nil || *c.Old != retention || c.New != shorter {
		t.Fatalf("config change %+v, want %s retention.ms %s -> %s", c, remote, retention, shorter)
	}
}
