package kafkaclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"strait/internal/config"
)

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("mm2.properties", []byte(src), config.LoadOptions{
		Env: func(string) (string, bool) { return "", false },
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestPlanClients: the plan holds exactly the clients the daemon builds
// for each flow.
func TestPlanClients(t *testing.T) {
	const base = "clusters = A, B, C\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n"
	tests := []struct {
		name  string
		extra string
		want  map[string]string // flow -> its clients; a flow not listed is not planned
	}{
		{name: "replicating flow, heartbeat pairs and a target without bootstrap servers", want: map[string]string{
			"A->B": "replicates heartbeats source-consumer source-admin source-producer target-producer target-admin target-consumer",
			"B->A": "heartbeats target-producer", "C->A": "heartbeats target-producer", "C->B": "heartbeats target-producer",
			"A->C": "", "B->C": "", // C has no bootstrap servers: no heartbeats into it
		}},
		{name: "offset syncs on the target need no source producer", extra: "emit.heartbeats.enabled = false\noffset-syncs.topic.location = target\n",
			want: map[string]string{"A->B": "replicates source-consumer source-admin target-producer target-admin target-consumer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := NewPlan(parse(t, base+tt.extra))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, fp := range plan.Flows {
				var parts []string
				if fp.Replicates {
					parts = append(parts, "replicates")
				}
				if fp.Heartbeats {
					parts = append(parts, "heartbeats")
				}
				for _, c := range []struct {
					name string
					c    *Client
				}{{"source-consumer", fp.SourceConsumer}, {"source-admin", fp.SourceAdmin}, {"source-producer", fp.SourceProducer},
					{"target-producer", fp.TargetProducer}, {"target-admin", fp.TargetAdmin}, {"target-consumer", fp.TargetConsumer}} {
					if c.c != nil {
						parts = append(parts, c.name)
					}
				}
				got[fp.Flow.Name()] = strings.Join(parts, " ")
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("flow %s: %q, want %q", name, got[name], want)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("planned flows %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPlanReportsEachProblemOnce: a key shared by several clients is one
// error (and one warning) that names every client it was meant for.
func TestPlanReportsEachProblemOnce(t *testing.T) {
	cfg := parse(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nB->A.enabled = true\n"+
		"B.consumer.fetch.max.bytes = abc\nA.producer.batch.size = 1\n")
	plan, err := NewPlan(cfg)
	var errs *config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v (%T), want *config.Errors", err, err)
	}
	const want = `mm2.properties:6: key "B.consumer.fetch.max.bytes": fetch.max.bytes must be a non-negative integer, got "abc" (target consumer of A->B, source consumer of B->A)`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if plan == nil || len(plan.Warnings) != 1 {
		t.Fatalf("plan warnings %v, want one", plan)
	}
	const wantWarning = `key "A.producer.batch.size" (line 7): batch.size has no franz-go equivalent: franz-go fills each partition batch up to max.request.size while a request is in flight; tune linger.ms instead (source producer of A->B, target producer of B->A)`
	if got := plan.Warnings[0].String(); got != wantWarning {
		t.Errorf("warning:\n%s\nwant:\n%s", got, wantWarning)
	}
}

// TestPlanTransactionTimeout: transaction.timeout.ms is the config's
// (config.Flow.TransactionTimeout) for the data producer of an exactly-once
// flow, and a warning names every other client it reaches.
func TestPlanTransactionTimeout(t *testing.T) {
	cfg := parse(t, "clusters = A, B, C\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nC.bootstrap.servers = c:9092\n"+
		"A->B.enabled = true\nC->B.enabled = true\nemit.heartbeats.enabled = false\nA->B.strait.exactly.once = true\n"+
		"B.producer.transaction.timeout.ms = 30000\n")
	plan, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f := plan.Flow("A", "B").Flow; !f.ExactlyOnce || f.TransactionTimeout != 30*time.Second {
		t.Errorf("A->B exactly once %v, timeout %v", f.ExactlyOnce, f.TransactionTimeout)
	}
	var got []string
	for _, w := range plan.Warnings {
		got = append(got, w.String())
	}
	want := []string{`key "B.producer.transaction.timeout.ms" (line 9): transaction.timeout.ms applies only in exactly-once mode, to the producer of an exactly-once flow's data; it is ignored here (target producer of C->B)`}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlanCompressionLevels: the level keys of the file reach the data
// producer's settings; a level for another codec than compression.type is
// accepted with a warning, and a level out of Kafka's range is an error
// naming the key, its line, the value and the range.
func TestPlanCompressionLevels(t *testing.T) {
	const base = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nemit.heartbeats.enabled = false\n" +
		"B.producer.compression.type = zstd\n"
	plan, err := NewPlan(parse(t, base+"B.producer.compression.zstd.level = 12\nB.producer.compression.gzip.level = 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Flow("A", "B").TargetProducer.Mapped.Settings; s.Compression != "zstd" || s.CompressionLevel != 12 {
		t.Errorf("target producer compression %q level %d, want zstd level 12", s.Compression, s.CompressionLevel)
	}
	var got []string
	for _, w := range plan.Warnings {
		got = append(got, w.String())
	}
	want := []string{`key "B.producer.compression.gzip.level" (line 8): compression.gzip.level has no effect with compression.type=zstd: it sets the level of gzip only; set compression.type=gzip to use it (target producer of A->B)`}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, err = NewPlan(parse(t, base+"B.producer.compression.zstd.level = 23\n"))
	const wantErr = `mm2.properties:7: key "B.producer.compression.zstd.level": compression.zstd.level must be between -131072 and 22 (3 is the default); got 23 (target producer of A->B)`
	if err == nil || err.Error() != wantErr {
		t.Errorf("error:\n%v\nwant:\n%s", err, wantErr)
	}
}
