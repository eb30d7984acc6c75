package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mm2ClientLog is a real excerpt of MM2's log (Kafka 4.1.1, a bench run of 8 partitions with
// lz4): the ProducerConfig and ConsumerConfig blocks of a worker's offsets clients, the
// heartbeat connector's producer, a MirrorSourceConnector task producer and two source
// consumers.
const mm2ClientLog = "mm2-client-configs.log"

// mm2LogWanted is what the run that wrote mm2ClientLog gave MM2 (bench/props.go).
func mm2LogWanted() mm2Wanted {
	f := flowSpec{source: "A1", target: "B1", sourceBoot: "127.0.0.1:22448", destBoot: "127.0.0.1:35722",
		topic: backlogTopic, tuning: defaultParams().MM2, targetCodec: "lz4"}
	return f.wantedMM2Settings(false)
}

func TestParseClientConfigs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", mm2ClientLog))
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseClientConfigs(string(b))
	var got []string
	for _, c := range blocks {
		got = append(got, c.Kind+" "+c.clientID())
	}
	want := []string{
		"producer A1-mm2-A1->B1-offsets",
		"consumer A1-mm2-A1->B1-offsets",
		"producer connector-producer-MirrorHeartbeatConnector-0",
		"producer connector-producer-MirrorSourceConnector-4",
		"consumer A1->B1|MirrorSourceConnector-4|replication-consumer",
		"consumer A1->B1|MirrorSourceConnector-5|replication-consumer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	p := blocks[3]
	if p.Values["batch.size"] != "262144" || p.bootstrap() != "127.0.0.1:35722" || p.Values["acks"] != "-1" {
		t.Errorf("task producer: batch.size %q, bootstrap %q, acks %q", p.Values["batch.size"], p.bootstrap(), p.Values["acks"])
	}
	if v, ok := p.Values["ssl.key.password"]; !ok || v != "null" {
		t.Errorf("ssl.key.password = %q, %v; want null", v, ok)
	}
}

func TestCheckMM2Settings(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", mm2ClientLog))
	if err != nil {
		t.Fatal(err)
	}
	real := string(b)
	tests := []struct {
		name    string
		log     string
		want    func(*mm2Wanted)
		checks  int
		wantErr []string // substrings; none for success
	}{
		{name: "every setting applied", log: real, want: func(*mm2Wanted) {}, checks: 6 + 3 + 3},
		{name: "unset compression is not checked", log: real, want: func(w *mm2Wanted) { delete(w.producer, "compression.type") }, checks: 5 + 3 + 3},
		{
			name: "producer ignored max.request.size",
			// The logged keys are sorted: max.request.size comes after client.id.
			log:  replaceAfter(real, "client.id = connector-producer-MirrorSourceConnector-4", "\tmax.request.size = 1048576\n", ""),
			want: func(*mm2Wanted) {}, checks: 12,
			wantErr: []string{`producer "connector-producer-MirrorSourceConnector-4": max.request.size = (not logged), the file says 1048576`},
		},
		{
			name: "settings MM2 did not apply",
			log:  real,
			want: func(w *mm2Wanted) { w.producer["linger.ms"] = "20"; w.consumer["max.poll.records"] = "5000" },
			wantErr: []string{
				`producer "connector-producer-MirrorSourceConnector-4": linger.ms = 10, the file says 20`,
				`consumer "A1->B1|MirrorSourceConnector-4|replication-consumer": max.poll.records = 2000, the file says 5000`,
				`consumer "A1->B1|MirrorSourceConnector-5|replication-consumer": max.poll.records = 2000, the file says 5000`,
			},
			checks: 12,
		},
		{
			name:    "exactly-once wanted, the task producer is not transactional",
			log:     real,
			want:    func(w *mm2Wanted) { w.transactional = true },
			checks:  13,
			wantErr: []string{`producer "connector-producer-MirrorSourceConnector-4": transactional.id = null: MM2 did not run its exactly-once mode`},
		},
		{
			name:   "exactly-once, a transactional task producer",
			log:    replaceAfter(real, "client.id = connector-producer-MirrorSourceConnector-4", "transactional.id = null", "transactional.id = A1-mm2-MirrorSourceConnector-4"),
			want:   func(w *mm2Wanted) { w.transactional = true },
			checks: 13,
		},
		{
			name: "exactly-once wants read_committed sources",
			log:  real,
			want: func(w *mm2Wanted) {
				eos := flowSpec{source: "A1", target: "B1", sourceBoot: "127.0.0.1:22448", destBoot: "127.0.0.1:35722",
					topic: backlogTopic, tuning: defaultParams().MM2, targetCodec: "lz4"}.wantedMM2Settings(true)
				w.consumer, w.transactional = eos.consumer, false
			},
			checks: 6 + 4 + 4,
			wantErr: []string{
				`consumer "A1->B1|MirrorSourceConnector-4|replication-consumer": isolation.level = read_uncommitted, the file says read_committed`,
				`consumer "A1->B1|MirrorSourceConnector-5|replication-consumer": isolation.level = read_uncommitted, the file says read_committed`,
			},
		},
		{
			name: "no task clients in the log",
			log:  "[2026-12-01 11:58:38,033] INFO Kafka version: 4.1.1\n",
			want: func(*mm2Wanted) {},
			wantErr: []string{
				"no ProducerConfig block of a MirrorSourceConnector task producer",
				"no ConsumerConfig block of a source consumer",
			},
		},
		{
			name:    "other bootstrap: the task clients are another flow's",
			log:     real,
			want:    func(w *mm2Wanted) { w.producerBootstrap = "127.0.0.1:1" },
			checks:  6,
			wantErr: []string{"no ProducerConfig block of a MirrorSourceConnector task producer (client.id connector-producer-MirrorSourceConnector-N) writing to 127.0.0.1:1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mm2LogWanted()
			tt.want(&w)
			path := filepath.Join(t.TempDir(), "mm2.log")
			if err := os.WriteFile(path, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			checks, err := checkMM2Settings(path, w)
			if len(checks) != tt.checks {
				t.Errorf("%d checks, want %d: %+v", len(checks), tt.checks, checks)
			}
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("checkMM2Settings: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkMM2Settings succeeded, want errors %q", tt.wantErr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// replaceAfter replaces the first old after marker in s.
func replaceAfter(s, marker, old, new string) string {
	i := strings.Index(s, marker)
	if i < 0 {
		panic("marker not found: " + marker)
	}
	return s[:i] + strings.Replace(s[i:], old, new, 1)
}
