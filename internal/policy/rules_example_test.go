package policy_test

import (
	"fmt"

	"strait/internal/policy"
)

func ExampleNewRenaming() {
	rules, err := policy.ParseRules("orders=prod.orders, re:^legacy-(.*)$=new-$1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fallback, _ := policy.New(policy.DefaultClass, ".", true, "A")
	p, _ := policy.NewRenaming(fallback, "A", rules)
	for _, topic := range []string{"orders", "legacy-payments", "clicks", "heartbeats"} {
		remote := p.FormatRemoteTopic("A", topic)
		src, _ := p.TopicSource(remote)
		up, _ := p.UpstreamTopic(remote)
		fmt.Println(topic, "->", remote, "from", src, up)
	}
	// Output:
	// orders -> prod.orders from A orders
	// legacy-payments -> new-payments from A legacy-payments
	// clicks -> A.clicks from A clicks
	// heartbeats -> A.heartbeats from A heartbeats
}

func ExampleParseRules() {
	_, err := policy.ParseRules("a=x, b=x, re:^(?:eu|us)-(.*)$=$1")
	fmt.Println(err)
	// Output:
	// rule 2 (b=x): rule 1 (a=x) already names a remote topic "x": two topics cannot share one remote topic; give each its own name; rule 3 (re:^(?:eu|us)-(.*)$=$1): the rule cannot be reversed (outside the groups the replacement uses, the regex has "(?:eu|us)", which matches different texts): two topics could get one remote name, and a remote name could not be traced back to its source topic; capture every part that varies in a group the replacement uses (e.g. re:^(a|b)-(.*)$=$1.$2 rather than re:^(?:a|b)-(.*)$=$1), or write exact rules
}
