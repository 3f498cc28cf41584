package auth

import (
	"fmt"
	"strings"
)

// ResourceType is what an ACL rule is about.
type ResourceType string

// Resource types, as KairoUser spells them.
const (
	ResourceTopic   ResourceType = "topic"
	ResourceGroup   ResourceType = "group"
	ResourceCluster ResourceType = "cluster"
)

// Operation is one operation of an ACL rule, as Kafka names it.
type Operation string

// Operations.
const (
	OpRead            Operation = "Read"
	OpWrite           Operation = "Write"
	OpCreate          Operation = "Create"
	OpDelete          Operation = "Delete"
	OpAlter           Operation = "Alter"
	OpDescribe        Operation = "Describe"
	OpDescribeConfigs Operation = "DescribeConfigs"
	OpAlterConfigs    Operation = "AlterConfigs"
	OpAll             Operation = "All"
)

// Pattern types of a rule's name.
const (
	PatternLiteral = "literal"
	PatternPrefix  = "prefix"
)

// Permissions of a rule.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Wildcard as a literal name or a host matches every one.
const Wildcard = "*"

// ACL allows or denies operations on the resources its name matches.
type ACL struct {
	Resource   ResourceType `json:"resource"`
	Name       string       `json:"name,omitempty"`
	Pattern    string       `json:"pattern,omitempty"`
	Operations []Operation  `json:"operations"`
	Permission string       `json:"permission,omitempty"`
	Host       string       `json:"host,omitempty"`
}

var validOps = map[ResourceType][]Operation{
	ResourceTopic:   {OpRead, OpWrite, OpCreate, OpDelete, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs, OpAll},
	ResourceGroup:   {OpRead, OpDescribe, OpDelete, OpAll},
	ResourceCluster: {OpCreate, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs, OpAll},
}

// Validate refuses a rule the authorizer could not read: an unknown
// resource type, pattern or permission, an operation the resource type
// does not take (the KairoUser CRD's CEL rules, again), or a topic or
// group rule without a name.
func (a ACL) Validate() error {
	ops, ok := validOps[a.Resource]
	if !ok {
		return fmt.Errorf("unknown resource type %q", a.Resource)
	}
	if a.Resource != ResourceCluster && a.Name == "" {
		return fmt.Errorf("a %s rule needs a name (%q for all)", a.Resource, Wildcard)
	}
	switch a.Pattern {
	case "", PatternLiteral, PatternPrefix:
	default:
		return fmt.Errorf("unknown pattern type %q", a.Pattern)
	}
	switch a.Permission {
	case "", Allow, Deny:
	default:
		return fmt.Errorf("unknown permission %q", a.Permission)
	}
	if len(a.Operations) == 0 {
		return fmt.Errorf("a rule needs operations")
	}
	for _, op := range a.Operations {
		if !contains(ops, op) {
			return fmt.Errorf("a %s rule does not take %s", a.Resource, op)
		}
	}
	return nil
}

// matches reports whether the rule applies to op on the resource from host.
func (a ACL) matches(res ResourceType, name string, op Operation, host string) bool {
	if a.Resource != res || !a.matchesName(name) {
		return false
	}
	if a.Host != "" && a.Host != Wildcard && a.Host != host {
		return false
	}
	for _, granted := range a.Operations {
		if implies(granted, op, a.Permission == Deny) {
			return true
		}
	}
	return false
}

func (a ACL) matchesName(name string) bool {
	if a.Resource == ResourceCluster {
		return true
	}
	if a.Pattern == PatternPrefix {
		return strings.HasPrefix(name, a.Name)
	}
	return a.Name == Wildcard || a.Name == name
}

// implies reports whether a rule naming granted covers op. All covers
// everything. As in Kafka, an allowed Read, Write, Delete or Alter also
// allows Describe, and AlterConfigs allows DescribeConfigs; a deny covers
// only what it names (and All).
func implies(granted, op Operation, deny bool) bool {
	if granted == OpAll || granted == op {
		return true
	}
	if deny {
		return false
	}
	switch op {
	case OpDescribe:
		return granted == OpRead || granted == OpWrite || granted == OpDelete || granted == OpAlter
	case OpDescribeConfigs:
		return granted == OpAlterConfigs
	}
	return false
}

func contains(ops []Operation, op Operation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}
