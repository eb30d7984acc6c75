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
			src: base + off + "refresh.groups.enabled = false\nB.exactly.once.source.support = enabled\n" +
				"A->B.exactly.once.support = required\nA.consumer.isolation.level = read_committed\n" +
				"A->B.transaction.boundary = interval\nA->B.transaction.boundary.interval.ms = 100\n" +
				"tasks.max = 4\nadmin.timeout.ms = 30000\nconsumer.poll.timeout.ms = 500\nA->B.offsets.storage.topic = mm2-offsets.custom\n",
			want: `key "refresh.groups.enabled" (line 7): false is not honoured yet on A->B: Strait lists the source's consumer groups every 10s (refresh.groups.interval.seconds) anyway
key "B.exactly.once.source.support" (line 8): enabled is not honoured yet on A->B: Strait has no exactly-once mode; it copies at least once with an idempotent producer, so a crash copies again the records written since the last progress commit (offset.flush.interval.ms)
key "A->B.exactly.once.support" (line 9): required is not honoured yet on A->B: Strait has no exactly-once mode and copies at least once
key "A->B.transaction.boundary" (line 11): not honoured yet on A->B: Strait has no exactly-once mode, so it writes no transactions to bound
key "A->B.transaction.boundary.interval.ms" (line 12): not honoured yet on A->B: Strait has no exactly-once mode, so it writes no transactions to bound
key "tasks.max" (line 13): not honoured on A->B: Strait does not split a flow into tasks; one process copies every partition of the flow, fetching from all source brokers at once
key "admin.timeout.ms" (line 14): 30000 is not honoured yet on A->B: Strait gives each round of topic and checkpoint admin calls one minute (MM2's default)
key "consumer.poll.timeout.ms" (line 15): no effect on A->B: Strait does not poll with a timeout; a fetch waits at most the consumer's fetch.max.wait.ms, and checkpoints follow emit.checkpoints.interval.seconds
key "A->B.offsets.storage.topic" (line 16): not honoured yet on A->B: Strait takes over a Java MM2's progress from the worker's offset.storage.topic (mm2-offsets.A.internal), not from this per-connector topic, so partitions MM2 copied resume by auto.offset.reset instead of where MM2 stopped
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
