package kafka

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclRow is one ACL a DescribeAcls answer lists, flattened.
type aclRow struct {
	kind       kmsg.ACLResourceType
	name       string
	pattern    kmsg.ACLResourcePatternType
	principal  string
	operation  kmsg.ACLOperation
	permission kmsg.ACLPermissionType
}

// describeACLRows asks cl's brokers for the ACLs the filter selects.
func describeACLRows(t *testing.T, cl *kgo.Client, filter func(*kmsg.DescribeACLsRequest)) ([]aclRow, error) {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if filter != nil {
		filter(req)
	}
	resp, err := req.RequestWith(testContext(t, 20*time.Second), cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var rows []aclRow
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			if a.Host != "*" {
				t.Fatalf("ACL %+v of %s: host %q, want *", a, r.ResourceName, a.Host)
			}
			rows = append(rows, aclRow{r.ResourceType, r.ResourceName, r.ResourcePatternType, a.Principal, a.Operation, a.PermissionType})
		}
	}
	return rows, nil
}

// describeACLs: the superuser lists the users' rules as Kafka's bindings;
// MATCH on a topic name selects the rules that apply to it; a user without
// Describe on the cluster is CLUSTER_AUTHORIZATION_FAILED.
func describeACLs(t *testing.T, p *securePKI, seeds []string) {
	root := scramClient(t, p, seeds, "root", "root-pw")
	all, err := describeACLRows(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	allow := kmsg.ACLPermissionTypeAllow
	topic, group, literal, prefixed := kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup,
		kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	want := []aclRow{
		{topic, "sec-a", literal, "User:writer", kmsg.ACLOperationWrite, allow},
		{topic, "sec-a", literal, "User:writer", kmsg.ACLOperationRead, allow},
		{group, "writers-", prefixed, "User:writer", kmsg.ACLOperationRead, allow},
		{topic, "sec-a", literal, "User:carol", kmsg.ACLOperationRead, allow},
		{group, "*", literal, "User:carol", kmsg.ACLOperationRead, allow},
	}
	sortRows := func(rs []aclRow) {
		slices.SortFunc(rs, func(a, b aclRow) int {
			return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name), cmp.Compare(a.pattern, b.pattern),
				cmp.Compare(a.principal, b.principal), cmp.Compare(a.operation, b.operation))
		})
	}
	sortRows(all)
	sortRows(want)
	if !slices.Equal(all, want) {
		t.Fatalf("every ACL:\n%v\nwant\n%v", all, want)
	}

	matched, err := describeACLRows(t, root, func(r *kmsg.DescribeACLsRequest) {
		r.ResourceType, r.ResourcePatternType, r.ResourceName = group, kmsg.ACLResourcePatternTypeMatch, kmsg.StringPtr("writers-7")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(matched) != 2 ||
		!slices.Contains(matched, aclRow{group, "writers-", prefixed, "User:writer", kmsg.ACLOperationRead, allow}) ||
		!slices.Contains(matched, aclRow{group, "*", literal, "User:carol", kmsg.ACLOperationRead, allow}) {
		t.Fatalf("the ACLs that apply to group writers-7: %v, want writer's prefix rule and carol's wildcard", matched)
	}

	writer := scramClient(t, p, seeds, "writer", "writer-pw")
	if _, err := describeACLRows(t, writer, nil); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("writer lists the ACLs: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
}
