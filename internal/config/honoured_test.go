package config

import "testing"

// TestNotHonouredWarnings: every setting Strait reads and does not act on
// yet gets a warning saying so and what Strait does instead, once per key,
// naming the enabled flows it applies to.
func TestNotHonouredWarnings(t *testing.T) {
	const off = "sync.topic.configs.enabled = false\nsync.topic.acls.enabled = false\n"
	tests := []struct {
		name string
		src  string
		want string // every warning
	}{
		{
			name: "MM2's defaults for config and ACL sync: both are honoured",
			src:  base,
			want: "",
		},
		{
			name: "every other setting that is read and not acted on",
			src: base + off + "refresh.groups.enabled = false\n" +
				"A->B.transaction.boundary = interval\nA->B.transaction.boundary.interval.ms = 100\n" +
				"tasks.max = 4\nadmin.timeout.ms = 30000\nconsumer.poll.timeout.ms = 500\nA->B.offsets.storage.topic = mm2-offsets.custom\n",
			want: `key "refresh.groups.enabled" (line 7): false is not honoured yet on A->B: Strait lists the source's consumer groups every 10s (refresh.groups.interval.seconds) anyway
key "A->B.transaction.boundary" (line 8): no effect on A->B: exactly-once mode is off, so Strait writes no transactions to bound; to turn it on, set B.exactly.once.source.support = enabled or strait.exactly.once = true
key "A->B.transaction.boundary.interval.ms" (line 9): no effect on A->B: exactly-once mode is off, so Strait writes no transactions to bound; to turn it on, set B.exactly.once.source.support = enabled or strait.exactly.once = true
key "tasks.max" (line 10): not honoured on A->B: Strait does not split a flow into tasks; each process that runs the file copies a share of the flow's partitions (several nodes), fetching from all source brokers at once
key "admin.timeout.ms" (line 11): 30000 is not honoured yet on A->B: Strait gives each round of topic and checkpoint admin calls one minute (MM2's default)
key "consumer.poll.timeout.ms" (line 12): no effect on A->B: Strait does not poll with a timeout; a fetch waits at most the consumer's fetch.max.wait.ms, and checkpoints follow emit.checkpoints.interval.seconds
key "A->B.offsets.storage.topic" (line 13): not honoured yet on A->B: Strait takes over a Java MM2's progress from the worker's offset.storage.topic (mm2-offsets.A.internal), not from this per-connector topic, so partitions MM2 copied resume by auto.offset.reset instead of where MM2 stopped
`,
		},
		{
			name: "exactly-once settings are honoured in exactly-once mode",
			src: base + off + "B.exactly.once.source.support = enabled\nA->B.exactly.once.support = required\nA.consumer.isolation.level = read_committed\n" +
				"A->B.transaction.boundary = interval\nA->B.transaction.boundary.interval.ms = 100\n",
		},
		{
			name: "transaction.boundary.interval.ms needs the interval boundary",
			src:  base + off + "strait.exactly.once = true\nA->B.transaction.boundary.interval.ms = 100\n",
			want: `key "A->B.transaction.boundary.interval.ms" (line 8): no effect on A->B: transaction.boundary is poll, so each transaction collects data for offset.flush.interval.ms (1s); set A->B.transaction.boundary = interval to use this key
`,
		},
		{
			name: "values Strait matches, and flows that are not enabled, warn nothing",
			src:  base + off + "admin.timeout.ms = 60000\nB.exactly.once.source.support = preparing\nB->A.tasks.max = 2\nB->A.refresh.groups.enabled = false\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			if got := warningsText(c); got != tt.want {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
