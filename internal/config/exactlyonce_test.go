package config

import (
	"strings"
	"testing"
	"time"
)

// TestExactlyOnce covers what turns exactly-once mode on and the
// transaction settings it runs with. The errors are in testdata/bad/eos-*.
func TestExactlyOnce(t *testing.T) {
	tests := []struct {
		name         string
		src          string
		flow         string // default A->B
		want         bool
		wantInterval time.Duration // checked when want is true
		wantTimeout  time.Duration // checked when want is true
		wantWarning  string        // a substring of the warnings
	}{
		{
			name: "off by default",
			src:  base,
		},
		{
			name: "strait.exactly.once alone",
			src:  base + "strait.exactly.once = true\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "strait.exactly.once per flow",
			src:  base + "B->A.enabled = true\nA->B.strait.exactly.once = true\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "strait.exactly.once per flow leaves the other flow alone",
			src:  base + "B->A.enabled = true\nA->B.strait.exactly.once = true\n",
			flow: "B->A",
		},
		{
			name: "a flow turns off what the top level turns on",
			src:  base + "strait.exactly.once = true\nA->B.strait.exactly.once = false\n",
		},
		{
			name:        "strait.exactly.once per cluster has no effect",
			src:         base + "B.strait.exactly.once = true\n",
			wantWarning: "has no effect: Strait reads strait.exactly.once at the top level or per flow (B->A.strait.exactly.once), not per cluster",
		},
		{
			name: "MM2's worker setting alone",
			src:  base + "B.exactly.once.source.support = enabled\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "both keys",
			src:  base + "B.exactly.once.source.support = enabled\nstrait.exactly.once = true\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "strait.exactly.once turns on a flow MM2's setting leaves off",
			src:  base + "B.exactly.once.source.support = disabled\nA->B.strait.exactly.once = true\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "preparing is not exactly-once",
			src:  base + "B.exactly.once.source.support = preparing\n",
		},
		{
			name: "the interval is offset.flush.interval.ms",
			src:  base + "strait.exactly.once = true\nB.offset.flush.interval.ms = 5000\n",
			want: true, wantInterval: 5 * time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "the interval boundary without an interval is offset.flush.interval.ms",
			src:  base + "strait.exactly.once = true\nB.offset.flush.interval.ms = 5000\nA->B.transaction.boundary = interval\n",
			want: true, wantInterval: 5 * time.Second, wantTimeout: 15 * time.Second,
		},
		{
			name: "transaction.boundary = interval with transaction.boundary.interval.ms",
			src:  base + "strait.exactly.once = true\nB.offset.flush.interval.ms = 5000\nA->B.transaction.boundary = INTERVAL\nA->B.transaction.boundary.interval.ms = 250\n",
			want: true, wantInterval: 250 * time.Millisecond, wantTimeout: 15 * time.Second,
		},
		{
			name: "transaction.boundary.interval.ms without the interval boundary",
			src:  base + "strait.exactly.once = true\nA->B.transaction.boundary.interval.ms = 250\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
			wantWarning: `key "A->B.transaction.boundary.interval.ms" (line 6): no effect on A->B: transaction.boundary is poll`,
		},
		{
			name: "the timeout from the target's producer",
			src:  base + "strait.exactly.once = true\nB.producer.transaction.timeout.ms = 30000\n",
			want: true, wantInterval: time.Second, wantTimeout: 30 * time.Second,
		},
		{
			name: "the timeout from the flow's producer override",
			src:  base + "strait.exactly.once = true\nB.producer.transaction.timeout.ms = 30000\nA->B.producer.override.transaction.timeout.ms = 45000\n",
			want: true, wantInterval: time.Second, wantTimeout: 45 * time.Second,
		},
		{
			name: "a timeout of exactly twice the interval",
			src:  base + "strait.exactly.once = true\nB.offset.flush.interval.ms = 10000\nB.producer.transaction.timeout.ms = 20000\n",
			want: true, wantInterval: 10 * time.Second, wantTimeout: 20 * time.Second,
		},
		{
			name: "a long interval with a timeout to match",
			src:  base + "B.exactly.once.source.support = enabled\nB.offset.flush.interval.ms = 60000\nB.producer.transaction.timeout.ms = 120000\n",
			want: true, wantInterval: time.Minute, wantTimeout: 2 * time.Minute,
		},
		{
			name: "transaction settings are not checked when exactly-once mode is off",
			src:  base + "B.offset.flush.interval.ms = 60000\nB.producer.transaction.timeout.ms = soon\nstrait.fast.path = false\nB.producer.enable.idempotence = false\n",
		},
		{
			name: "nor on a flow that only emits heartbeats",
			src:  base + "strait.exactly.once = true\nB->A.strait.fast.path = false\nA.producer.transaction.timeout.ms = 100\nA->B.strait.fast.path = true\n",
			flow: "B->A",
			want: true, wantInterval: time.Second, wantTimeout: 100 * time.Millisecond,
		},
		{
			name: "acks = all is the default and allowed",
			src:  base + "strait.exactly.once = true\nB.producer.acks = -1\n",
			want: true, wantInterval: time.Second, wantTimeout: 15 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			name := tt.flow
			if name == "" {
				name = "A->B"
			}
			f := flowOf(t, c, name)
			if f.ExactlyOnce != tt.want {
				t.Fatalf("ExactlyOnce = %v, want %v", f.ExactlyOnce, tt.want)
			}
			if tt.want && (f.TransactionInterval != tt.wantInterval || f.TransactionTimeout != tt.wantTimeout) {
				t.Errorf("interval %v timeout %v, want %v and %v", f.TransactionInterval, f.TransactionTimeout, tt.wantInterval, tt.wantTimeout)
			}
			if !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant them to contain:\n%s", warningsText(c), tt.wantWarning)
			}
		})
	}
}

// TestExactlyOnceOrigins: the transaction settings record where they came
// from, as every other setting does.
func TestExactlyOnceOrigins(t *testing.T) {
	c := mustParse(t, base+"B.exactly.once.source.support = enabled\nA->B.strait.exactly.once = true\n"+
		"A->B.transaction.boundary = interval\nA->B.transaction.boundary.interval.ms = 500\nB.producer.transaction.timeout.ms = 20000\n")
	f := flowOf(t, c, "A->B")
	for key, want := range map[string]Origin{
		"exactly.once.source.support":      {Key: "B.exactly.once.source.support", Line: 5},
		keyExactlyOnce:                     {Key: "A->B.strait.exactly.once", Line: 6},
		"transaction.boundary":             {Key: "A->B.transaction.boundary", Line: 7},
		"transaction.boundary.interval.ms": {Key: "A->B.transaction.boundary.interval.ms", Line: 8},
		"transaction.timeout.ms":           {Key: "B.producer.transaction.timeout.ms", Line: 9},
	} {
		if got := f.Origins[key]; got != want {
			t.Errorf("origin of %s = %v, want %v", key, got, want)
		}
	}
}

// exactlyOnceConfig has an exactly-once flow each way: A->B by MM2's worker
// setting, with the interval from offset.flush.interval.ms, and B->A by
// strait.exactly.once, with the interval boundary and a timeout of its own.
const exactlyOnceConfig = `clusters = A, B
A.bootstrap.servers = a.example:9092
B.bootstrap.servers = b.example:9092
A->B.enabled = true
B->A.enabled = true
B.exactly.once.source.support = enabled
B.offset.flush.interval.ms = 5000
A->B.transaction.boundary.interval.ms = 2000
B->A.strait.exactly.once = true
B->A.transaction.boundary = interval
B->A.transaction.boundary.interval.ms = 500
A.producer.transaction.timeout.ms = 30000
`

// TestClusterKeyIsTheDefault: every process shares each replicating flow, so
// strait.cluster.enabled = true is what happens anyway (a warning says the
// line can go), and false is refused (bad/cluster-disabled) rather than
// accepted and ignored.
func TestClusterKeyIsTheDefault(t *testing.T) {
	c, err := Parse("mm2.properties", []byte("clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nstrait.cluster.enabled = true\n"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := warningsText(c); !strings.Contains(got, "strait.cluster.enabled is no longer needed") {
		t.Errorf("warnings %q, want one that says the line can go", got)
	}
}
