package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExamples checks the example files (copied from the project's shared
// examples) resolve as the comment at the top of each says.
func TestExamples(t *testing.T) {
	type flowWant struct {
		name    string
		enabled bool
	}
	tests := []struct {
		file         string
		wantFlows    []flowWant
		wantPolicy   string
		wantErr      string
		wantWarnings string
		check        func(t *testing.T, c *Config)
	}{
		{
			file:         "active-active.properties",
			wantFlows:    []flowWant{{"west->east", true}, {"east->west", true}},
			wantPolicy:   DefaultPolicyClass,
			wantWarnings: "",
			check: func(t *testing.T, c *Config) {
				we := flowOf(t, c, "west->east")
				if !slices.Equal(we.Topics, []string{"orders.*", "payments"}) {
					t.Errorf("topics = %q", we.Topics)
				}
				// java.util.Properties reads `\-` and `\.` as plain characters.
				if want := []string{`.*[-.]internal`, `.*.replica`, `__.*`}; !slices.Equal(we.TopicsExclude, want) {
					t.Errorf("topics.exclude = %q, want %q", we.TopicsExclude, want)
				}
				if !we.SyncGroupOffsetsEnabled || we.EmitCheckpointsInterval != 5*time.Second ||
					we.SyncGroupOffsetsInterval != 5*time.Second || we.ReplicationFactor != 1 {
					t.Errorf("checkpoint settings = %v %v %v rf %d", we.SyncGroupOffsetsEnabled,
						we.EmitCheckpointsInterval, we.SyncGroupOffsetsInterval, we.ReplicationFactor)
				}
				if we.RefreshTopicsInterval != 10*time.Second || !we.RefreshTopicsIntervalSet {
					t.Errorf("refresh = %v set %v", we.RefreshTopicsInterval, we.RefreshTopicsIntervalSet)
				}
				if v, _ := we.TargetProducer.Get("compression.type"); v != "zstd" {
					t.Errorf("west->east target producer compression.type = %q, want zstd", v)
				}
				if v, _ := we.SourceConsumer.Get("max.poll.records"); v != "2000" {
					t.Errorf("west->east source consumer max.poll.records = %q, want 2000", v)
				}
				ew := flowOf(t, c, "east->west")
				if _, ok := ew.TargetProducer.Get("compression.type"); ok {
					t.Error("east->west writes to west, which has no producer override")
				}
				if v, _ := ew.TargetConsumer.Get("max.poll.records"); v != "2000" {
					t.Errorf("east->west target consumer max.poll.records = %q, want 2000", v)
				}
			},
		},
		{
			file:       "active-passive.properties",
			wantFlows:  []flowWant{{"eu-west1->eu-north1", true}, {"eu-north1->eu-west1", false}},
			wantPolicy: IdentityPolicyClass,
			check: func(t *testing.T, c *Config) {
				f := flowOf(t, c, "eu-west1->eu-north1")
				if f.SyncTopicACLsEnabled || !f.SyncTopicConfigsEnabled || !f.SyncGroupOffsetsEnabled {
					t.Errorf("acls %v configs %v group offsets %v", f.SyncTopicACLsEnabled, f.SyncTopicConfigsEnabled, f.SyncGroupOffsetsEnabled)
				}
				if v, _ := f.SourceConsumer.Get("isolation.level"); v != "read_committed" {
					t.Errorf("isolation.level = %q", v)
				}
				if len(c.EnabledFlows()) != 1 {
					t.Errorf("enabled flows = %d, want 1", len(c.EnabledFlows()))
				}
			},
		},
		{
			file:       "seed-guide.properties",
			wantFlows:  []flowWant{{"SOURCE->TARGET", false}, {"TARGET->SOURCE", false}},
			wantPolicy: DefaultPolicyClass,
			wantErr: `seed-guide.properties:14: key "SOURCE.ssl.truststore.location": file "/path/to/source/truststore.jks" does not exist: fix the path or remove the key
seed-guide.properties:16: key "SOURCE.ssl.keystore.location": file "/path/to/source/keystore.jks" does not exist: fix the path or remove the key
seed-guide.properties:23: key "TARGET.ssl.truststore.location": file "/path/to/target/truststore.jks" does not exist: fix the path or remove the key
seed-guide.properties:25: key "TARGET.ssl.keystore.location": file "/path/to/target/keystore.jks" does not exist: fix the path or remove the key`,
			wantWarnings: "no flow is enabled: MM2 and Strait replicate data only for pairs with `<source>-><target>.enabled = true`; add e.g. `SOURCE->TARGET.enabled = true`\n" +
				`key "sync.acls.enabled" (line 42): unknown key (not an MM2, Connect or Kafka client setting), ignored; did you mean sync.topic.acls.enabled?` + "\n",
			check: func(t *testing.T, c *Config) {
				if got := c.Cluster["SOURCE"]; got.SecurityProtocol != "SSL" || len(got.BootstrapServers) != 2 {
					t.Errorf("SOURCE = %+v", got)
				}
				p, ok := flowOf(t, c, "TARGET->SOURCE").TargetProducer.Prop("ssl.keystore.password")
				if !ok || !p.Secret || p.Value.Reveal() != "keystore-password" {
					t.Errorf("ssl.keystore.password = %+v", p)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/examples", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			c, err := Parse(tt.file, data, testOptions())
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("error:\n%s\nwant:\n%s", got, tt.wantErr)
			}
			var got []flowWant
			for _, f := range c.Flows {
				got = append(got, flowWant{f.Name(), f.Enabled})
				if f.Policy.Class != tt.wantPolicy {
					t.Errorf("%s policy = %s, want %s", f.Name(), f.Policy.Class, tt.wantPolicy)
				}
			}
			if !slices.Equal(got, tt.wantFlows) {
				t.Errorf("flows = %v, want %v", got, tt.wantFlows)
			}
			if got := warningsText(c); got != tt.wantWarnings {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.wantWarnings)
			}
			tt.check(t, c)
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
