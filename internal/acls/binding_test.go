package acls

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBindingOfNamesUnknownValues(t *testing.T) {
	b := bindingOf(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", "*",
		kmsg.ACLOperation(42), kmsg.ACLPermissionTypeAllow)
	if b.Operation != "UNKNOWN(42)" {
		t.Fatalf("Operation = %q, want UNKNOWN(42)", b.Operation)
	}
	if got := b.unknownField(); got != "operation UNKNOWN(42)" {
		t.Fatalf("unknownField() = %q, want the operation", got)
	}
	known := bindingOf(kmsg.ACLResourceTypeGroup, "app", kmsg.ACLResourcePatternTypePrefixed, "User:alice", "*",
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLPermissionTypeDeny)
	want := Binding{ResourceType: Group, ResourceName: "app", PatternType: Prefixed, Principal: "User:alice", Host: "*", Operation: "DESCRIBE_CONFIGS", Permission: Deny}
	if known != want || known.unknownField() != "" {
		t.Fatalf("bindingOf = %v, want %v", known, want)
	}
}

// Every operation franz-go names must survive the round trip through a Binding's text,
// since bindings are created from it.
func TestEntryBuilderParsesEveryOperation(t *testing.T) {
	for _, name := range kmsg.ACLOperationStrings() {
		if name == "ANY" {
			continue // a filter, never a binding
		}
		e := entry{resourceType: Topic, pattern: Literal, principal: "User:alice", host: "*", operation: name, permission: Allow}
		if _, err := e.builder([]string{"A.orders"}); err != nil {
			t.Errorf("operation %s: %v", name, err)
		}
	}
}
