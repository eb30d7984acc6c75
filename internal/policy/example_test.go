package policy_test

import (
	"fmt"

	"strait/internal/policy"
)

func ExampleNew() {
	p, err := policy.New(policy.DefaultClass, ".", true, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	remote := p.FormatRemoteTopic("us-west", "orders")
	src, _ := p.TopicSource("us-west.orders")
	fmt.Println(remote, src, p.OriginalTopic("eu.us-west.orders"))
	fmt.Println(p.CheckpointsTopic("us-west"), p.OffsetSyncsTopic("eu"))
	// Output:
	// us-west.orders us-west orders
	// us-west.checkpoints.internal mm2-offset-syncs.eu.internal
}

func ExampleShouldReplicateTopic() {
	p, _ := policy.New(policy.DefaultClass, ".", true, "")
	topics, _ := policy.NewFilter([]string{"orders.*"}, []string{"heartbeats"})
	// Flow A->B: B.orders came from B, so it is never sent back; heartbeats are replicated
	// although topics.exclude names them, because heartbeats.replication.enabled is true.
	for _, topic := range []string{"orders", "B.orders", "heartbeats", "payments", "__consumer_offsets"} {
		fmt.Println(topic, policy.ShouldReplicateTopic(p, topics, true, "B", topic))
	}
	// Output:
	// orders true
	// B.orders false
	// heartbeats true
	// payments false
	// __consumer_offsets false
}

func ExampleCompilePattern() {
	_, err := policy.CompilePattern([]string{"orders.*", "payments(?!-test).*"})
	fmt.Println(err)
	// Output:
	// pattern "payments(?!-test).*" uses negative lookahead "(?!": Go's RE2 engine does not support it (it has no lookaround, which keeps matching linear-time); rewrite the rule with an include list plus an exclude list (e.g. topics=foo.* with topics.exclude=foobar.* instead of foo(?!bar).*)
}
