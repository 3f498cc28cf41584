package httpapi

import (
	"net/http"
	"reflect"

	"github.com/kairolog/kairolog/broker/auth"
)

// right is one operation a route needs on the topic, the group or the
// cluster its request names.
type right struct {
	resource auth.ResourceType
	op       auth.Operation
}

var (
	clusterDescribe     = right{auth.ResourceCluster, auth.OpDescribe}
	clusterAlter        = right{auth.ResourceCluster, auth.OpAlter}
	clusterAlterConfigs = right{auth.ResourceCluster, auth.OpAlterConfigs}
	topicRead           = right{auth.ResourceTopic, auth.OpRead}
	topicWrite          = right{auth.ResourceTopic, auth.OpWrite}
	topicCreate         = right{auth.ResourceTopic, auth.OpCreate}
	topicDelete         = right{auth.ResourceTopic, auth.OpDelete}
	topicAlter          = right{auth.ResourceTopic, auth.OpAlter}
	topicDescribe       = right{auth.ResourceTopic, auth.OpDescribe}
	topicAlterConfigs   = right{auth.ResourceTopic, auth.OpAlterConfigs}
	groupRead           = right{auth.ResourceGroup, auth.OpRead}
	groupDescribe       = right{auth.ResourceGroup, auth.OpDescribe}
	groupDelete         = right{auth.ResourceGroup, auth.OpDelete}
)

// routeRights are the rights of every route, by route name, as Kafka
// asks them of its requests: a producer needs Write on its topic, a
// consumer Read on its topic and its group, an administrator Alter or
// Delete. A route listed with no rights takes any authenticated user
// (the cluster's metadata and the lists of names). A route missing here
// takes only superusers; TestEveryRouteHasRights keeps the table whole.
var routeRights = map[string][]right{
	"metadata":          nil,
	"list_brokers":      {clusterDescribe},
	"describe_broker":   {clusterDescribe},
	"safe_to_restart":   {clusterDescribe},
	"drain_broker":      {clusterAlter},
	"cancel_drain":      {clusterAlter},
	"remove_broker":     {clusterAlter},
	"demote_voter":      {clusterAlter},
	"rebalance_cluster": {clusterAlter},

	"create_topic":           {topicCreate},
	"list_topics":            nil,
	"describe_topic":         {topicDescribe},
	"delete_topic":           {topicDelete},
	"add_partitions":         {topicAlter},
	"delete_records":         {topicDelete},
	"elect_leaders":          {clusterAlter},
	"reassign_partitions":    {clusterAlter},
	"set_topic_config":       {topicAlterConfigs},
	"patch_topic_config":     {topicAlterConfigs},
	"set_replication_factor": {topicAlter},
	"produce":                {topicWrite},
	// A producer id alone writes nothing; its produces need Write.
	"new_producer": nil,
	"fetch":        {topicRead},

	"list_groups":      nil,
	"describe_group":   {groupDescribe},
	"delete_group":     {groupDelete},
	"delete_offsets":   {groupDelete},
	"set_group_config": {clusterAlterConfigs},
	"reset_offsets":    {groupRead},
	"join_group":       {groupRead},
	"sync_group":       {groupRead},
	"heartbeat":        {groupRead},
	"leave_group":      {groupRead},
	"commit_offsets":   {groupRead},
	"group_offsets":    {groupDescribe},

	"member_join":           {groupRead},
	"member_leave":          {groupRead},
	"member_heartbeat":      {groupRead},
	"members":               {groupDescribe},
	"stale_members":         {groupDescribe},
	"remove_stale":          {groupRead},
	"assign":                {topicDescribe},
	"rebalance":             {groupRead, topicDescribe},
	"cleanup_and_rebalance": {groupRead, topicDescribe},
	"saved_assignments":     {groupDescribe, topicDescribe},
	"delete_assignments":    {groupRead},
	"commit_offset":         {groupRead},
	"get_offset":            {groupDescribe},

	"list_users":    {clusterDescribe},
	"describe_user": {clusterDescribe},
	"put_user":      {clusterAlter},
	"delete_user":   {clusterAlter},
}

// routeNeeds are the needs of r's route for its request req: each right
// on the name the request gives (its path value, else its Topic, Name or
// Group field, else req itself when the route reads a bare name). known
// is false for a route without a line in routeRights.
func (s *Server) routeNeeds(r *http.Request, req any) (needs []auth.Need, known bool) {
	rt := s.routes[r.Pattern]
	if rt == nil {
		return nil, false
	}
	rights, known := routeRights[rt.name]
	for _, rg := range rights {
		needs = append(needs, auth.Need{Resource: rg.resource, Name: nameFor(r, req, rg.resource), Op: rg.op})
	}
	return needs, known
}

// nameFor is the topic or group a request names.
func nameFor(r *http.Request, req any, res auth.ResourceType) string {
	var pathKey string
	var fields []string
	switch res {
	case auth.ResourceTopic:
		pathKey, fields = "name", []string{"Topic", "Name"}
	case auth.ResourceGroup:
		pathKey, fields = "group", []string{"Group"}
	default:
		return ""
	}
	if v := r.PathValue(pathKey); v != "" {
		return v
	}
	if name, ok := req.(string); ok {
		return name
	}
	// The core's requests (broker/api) name their topic and group in
	// fields of these names.
	v := reflect.Indirect(reflect.ValueOf(req))
	if v.Kind() != reflect.Struct {
		return ""
	}
	for _, f := range fields {
		if fv := v.FieldByName(f); fv.IsValid() && fv.Kind() == reflect.String {
			return fv.String()
		}
	}
	return ""
}
