package acls

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Binding is one Kafka ACL: a resource pattern and an access control entry, every field in
// Kafka's own upper-case names ("TOPIC", "PREFIXED", "READ", "ALLOW"), as kafka-acls.sh
// prints them. Bindings are comparable: equal fields are the same ACL.
type Binding struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// The names of the values the sync rules look at.
const (
	Topic    = "TOPIC"
	Group    = "GROUP"
	Literal  = "LITERAL"
	Prefixed = "PREFIXED"
	Allow    = "ALLOW"
	Deny     = "DENY"
	All      = "ALL"
	Read     = "READ"
	Write    = "WRITE"
	// Wildcard is the resource name of a LITERAL ACL that applies to every resource of its
	// type.
	Wildcard = "*"
)

// unknownPrefix starts the name of an enum value this build of franz-go does not know,
// such as an operation a newer Kafka added.
const unknownPrefix = "UNKNOWN"

// String prints b as Kafka's AclBinding does, e.g.
// "ResourcePattern(resourceType=TOPIC, name=A.orders, patternType=LITERAL): (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)".
func (b Binding) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s): (principal=%s, host=%s, operation=%s, permissionType=%s)",
		b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission)
}

// compareBindings orders bindings by resource first, as kafka-acls.sh groups them, then by
// entry: the order of every list this package returns.
func compareBindings(a, b Binding) int {
	return cmp.Or(
		strings.Compare(a.ResourceType, b.ResourceType),
		strings.Compare(a.ResourceName, b.ResourceName),
		strings.Compare(a.PatternType, b.PatternType),
		strings.Compare(a.Principal, b.Principal),
		strings.Compare(a.Host, b.Host),
		strings.Compare(a.Operation, b.Operation),
		strings.Compare(a.Permission, b.Permission),
	)
}

// sortedUnique sorts bs and drops duplicates, in place.
func sortedUnique(bs []Binding) []Binding {
	slices.SortFunc(bs, compareBindings)
	return slices.Compact(bs)
}

// bindingOf turns the enums of a described or created ACL into a Binding. A value franz-go
// does not know is named "UNKNOWN(<code>)", so that it can be reported and is never
// mistaken for another unknown value.
func bindingOf(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType,
	principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType,
) Binding {
	return Binding{
		ResourceType: enumName(typ.String(), int8(typ)),
		ResourceName: name,
		PatternType:  enumName(pattern.String(), int8(pattern)),
		Principal:    principal,
		Host:         host,
		Operation:    enumName(op.String(), int8(op)),
		Permission:   enumName(perm.String(), int8(perm)),
	}
}

func enumName(name string, code int8) string {
	if name == unknownPrefix {
		return fmt.Sprintf("%s(%d)", unknownPrefix, code)
	}
	return name
}

// unknownField names the first field of b whose value franz-go does not know, or "".
func (b Binding) unknownField() string {
	for _, f := range []struct{ name, value string }{
		{"resource type", b.ResourceType},
		{"pattern type", b.PatternType},
		{"operation", b.Operation},
		{"permission", b.Permission},
	} {
		if strings.HasPrefix(f.value, unknownPrefix) {
			return f.name + " " + f.value
		}
	}
	return ""
}

// Problem is a binding that was not copied because of an error: the target refused it, or
// Strait cannot read it. One problem never stops the other bindings.
type Problem struct {
	Binding Binding `json:"binding"`
	Error   string  `json:"error"`
}

// String prints the binding and its error.
func (p Problem) String() string { return p.Binding.String() + ": " + p.Error }

// Skip is a source binding the sync rules do not copy, with the rule that says so.
type Skip struct {
	Binding Binding `json:"binding"`
	Reason  string  `json:"reason"`
}

// String prints the binding and the reason.
func (s Skip) String() string { return s.Binding.String() + ": " + s.Reason }

func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(compareBindings(a.Binding, b.Binding), strings.Compare(a.Error, b.Error))
	})
}
