package kafka

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/auth"
)

// DescribeAcls v0–3: the ACLs of the users (KairoUser resources, kept in
// the metadata quorum), each user's rules as Kafka's bindings of principal
// User:<name>, filtered as Kafka filters them: any resource type,
// operation or permission (ANY), or one; a name exactly (ANY or the
// pattern type given), or, with MATCH, every literal, wildcard and
// prefixed rule that applies to that name; a principal and a host, or
// any. They are read-only here: users and their rules change through the
// KairoUser resource or the HTTP API, so CreateAcls and DeleteAcls are not
// served. Superusers (--super-users) hold no rules and are not listed.
// Authorization: Describe on the cluster. As in Kafka, a listener that
// does not authorize (--authorization off) answers
// SECURITY_DISABLED: its rules would not apply to the asker.
func init() { register(29, 0, 3, (*Server).describeACLs) }

func (s *Server) describeACLs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	if !s.opts.Security.Authorization {
		resp.ErrorCode = kerr.SecurityDisabled.Code
		resp.ErrorMessage = kmsg.StringPtr("this listener does not authorize requests, so no ACLs apply on it")
		return resp
	}
	if r.Version == 0 {
		r.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	}
	users, err := s.opts.Core.Users(ctx)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		return resp
	}
	type resource struct {
		kind    kmsg.ACLResourceType
		name    string
		pattern kmsg.ACLResourcePatternType
	}
	at := map[resource]int{} // index in resp.Resources
	for _, u := range users {
		for _, acl := range u.ACLs {
			b := bindingOf(u.Name, acl)
			if !b.matches(r) {
				continue
			}
			key := resource{b.kind, b.name, b.pattern}
			i, ok := at[key]
			if !ok {
				res := kmsg.NewDescribeACLsResponseResource()
				res.ResourceType, res.ResourceName, res.ResourcePatternType = b.kind, b.name, b.pattern
				i = len(resp.Resources)
				at[key] = i
				resp.Resources = append(resp.Resources, res)
			}
			for _, op := range b.ops {
				if r.Operation != kmsg.ACLOperationAny && r.Operation != op {
					continue
				}
				a := kmsg.NewDescribeACLsResponseResourceACL()
				a.Principal, a.Host, a.Operation, a.PermissionType = b.principal, b.host, op, b.permission
				resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, a)
			}
		}
	}
	return resp
}

// binding is one user's ACL rule in Kafka's terms.
type binding struct {
	kind       kmsg.ACLResourceType
	name       string
	pattern    kmsg.ACLResourcePatternType
	principal  string
	host       string
	permission kmsg.ACLPermissionType
	ops        []kmsg.ACLOperation
}

// clusterResourceName is the name of Kafka's one cluster resource.
const clusterResourceName = "kafka-cluster"

var aclKinds = map[auth.ResourceType]kmsg.ACLResourceType{
	auth.ResourceTopic: kmsg.ACLResourceTypeTopic, auth.ResourceGroup: kmsg.ACLResourceTypeGroup,
	auth.ResourceCluster: kmsg.ACLResourceTypeCluster,
}

var aclOps = map[auth.Operation]kmsg.ACLOperation{
	auth.OpRead: kmsg.ACLOperationRead, auth.OpWrite: kmsg.ACLOperationWrite, auth.OpCreate: kmsg.ACLOperationCreate,
	auth.OpDelete: kmsg.ACLOperationDelete, auth.OpAlter: kmsg.ACLOperationAlter, auth.OpDescribe: kmsg.ACLOperationDescribe,
	auth.OpDescribeConfigs: kmsg.ACLOperationDescribeConfigs, auth.OpAlterConfigs: kmsg.ACLOperationAlterConfigs,
	auth.OpAll: kmsg.ACLOperationAll,
}

// bindingOf is user's rule acl as Kafka shows it.
func bindingOf(user string, acl auth.ACL) binding {
	b := binding{kind: aclKinds[acl.Resource], name: acl.Name, pattern: kmsg.ACLResourcePatternTypeLiteral,
		principal: "User:" + user, host: acl.Host, permission: kmsg.ACLPermissionTypeAllow}
	if acl.Resource == auth.ResourceCluster {
		b.name = clusterResourceName
	}
	if acl.Pattern == auth.PatternPrefix {
		b.pattern = kmsg.ACLResourcePatternTypePrefixed
	}
	if b.host == "" {
		b.host = auth.Wildcard
	}
	if acl.Permission == auth.Deny {
		b.permission = kmsg.ACLPermissionTypeDeny
	}
	for _, op := range acl.Operations {
		b.ops = append(b.ops, aclOps[op])
	}
	return b
}

// matches says whether the filter of r selects b (its operation is
// filtered per operation).
func (b binding) matches(r *kmsg.DescribeACLsRequest) bool {
	if r.ResourceType != kmsg.ACLResourceTypeAny && r.ResourceType != b.kind {
		return false
	}
	if r.Principal != nil && *r.Principal != b.principal || r.Host != nil && *r.Host != b.host {
		return false
	}
	if r.PermissionType != kmsg.ACLPermissionTypeAny && r.PermissionType != b.permission {
		return false
	}
	switch r.ResourcePatternType {
	case kmsg.ACLResourcePatternTypeAny:
		return r.ResourceName == nil || *r.ResourceName == b.name
	case kmsg.ACLResourcePatternTypeMatch:
		if r.ResourceName == nil {
			return true
		}
		name := *r.ResourceName
		if b.pattern == kmsg.ACLResourcePatternTypePrefixed {
			return strings.HasPrefix(name, b.name)
		}
		return b.name == name || b.name == auth.Wildcard
	default:
		return r.ResourcePatternType == b.pattern && (r.ResourceName == nil || *r.ResourceName == b.name)
	}
}
