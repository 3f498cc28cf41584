package kafka

import (
	"context"
	"errors"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// Authorization on a Kafka listener: with Options.Security.Authorization
// on, every handler talks to the core through authorizing, which checks
// each topic, group or cluster a core call touches against the principal's
// ACLs (the same users and rules as the HTTP API's) before the call runs,
// and answers TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED for what the
// principal may not do. The rights are Kafka's: Write to produce, Read to
// fetch and to commit, Describe to list offsets and to see a topic or a
// group at all (Metadata and ListGroups leave out the rest), Create on the
// topic or the cluster to create one, Delete, Alter and AlterConfigs to
// change one. The handlers stay as they are: a refused call is an error
// in the place of the reply where any other error of that call goes, per
// partition, topic or group. On the gateway the check runs on the broker
// the client is connected to, with the client's principal, before the core
// passes the request on to its owner.

// authorizing is a Core that checks the caller's rights first.
type authorizing struct {
	Core
	sec   auth.Listener
	users func(string) *auth.User
}

// allowed reports whether ctx's principal may do need. Kafka lets a
// cluster Create stand in for a topic Create.
func (a authorizing) allowed(ctx context.Context, need auth.Need) bool {
	id := identityOf(ctx)
	user := a.users(id.principal.Name)
	if a.sec.Authorizer.Allowed(id.principal, user, id.host, need) {
		return true
	}
	return need.Resource == auth.ResourceTopic && need.Op == auth.OpCreate &&
		a.sec.Authorizer.Allowed(id.principal, user, id.host, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpCreate})
}

// check is nil when ctx's principal may do need, else the Kafka
// authorization error of need's resource.
func (a authorizing) check(ctx context.Context, need auth.Need) error {
	if a.allowed(ctx, need) {
		return nil
	}
	p := identityOf(ctx).principal
	switch need.Resource {
	case auth.ResourceTopic:
		return api.Errorf(api.CodeTopicAuthorizationFailed, "%s may not %s topic %q", p, need.Op, need.Name)
	case auth.ResourceGroup:
		return api.Errorf(api.CodeGroupAuthorizationFailed, "%s may not %s group %q", p, need.Op, need.Name)
	}
	return api.Errorf(api.CodeClusterAuthorizationFailed, "%s may not %s the cluster", p, need.Op)
}

func topicNeed(name string, op auth.Operation) auth.Need {
	return auth.Need{Resource: auth.ResourceTopic, Name: name, Op: op}
}

func groupNeed(name string, op auth.Operation) auth.Need {
	return auth.Need{Resource: auth.ResourceGroup, Name: name, Op: op}
}

// mayDescribeTopic reports whether ctx's principal may see topic name; a
// Core that does not authorize lets everyone.
func mayDescribeTopic(core Core, ctx context.Context, name string) bool {
	a, ok := core.(authorizing)
	return !ok || a.allowed(ctx, topicNeed(name, auth.OpDescribe))
}

// topicName is the name of the topic a request names by name or by id
// ("" when the id is unknown: the core answers that).
func (a authorizing) topicName(ctx context.Context, name, id string) string {
	if name != "" || id == "" {
		return name
	}
	topo, err := a.Core.Topology(ctx)
	if err != nil {
		return ""
	}
	for _, t := range topo.Topics {
		if t.TopicID == id {
			return t.Name
		}
	}
	return ""
}

// Topology leaves out the topics the principal may not Describe.
func (a authorizing) Topology(ctx context.Context) (api.Topology, error) {
	topo, err := a.Core.Topology(ctx)
	if err != nil {
		return topo, err
	}
	visible := make([]api.TopicPlacement, 0, len(topo.Topics))
	for _, t := range topo.Topics {
		if a.allowed(ctx, topicNeed(t.Name, auth.OpDescribe)) {
			visible = append(visible, t)
		}
	}
	topo.Topics = visible
	return topo, nil
}

// AutoCreateTopic needs Create. A principal that may not create the
// topic but may Describe it is told it does not exist (yet), which clients
// retry: this broker's metadata may lag a topic just created, by an
// administrator, on the controller.
func (a authorizing) AutoCreateTopic(ctx context.Context, name string) error {
	if err := a.check(ctx, topicNeed(name, auth.OpCreate)); err != nil {
		if a.allowed(ctx, topicNeed(name, auth.OpDescribe)) {
			return api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", name)
		}
		return err
	}
	return a.Core.AutoCreateTopic(ctx, name)
}

func (a authorizing) ProduceBatch(ctx context.Context, req api.ProduceBatchRequest) (api.ProduceBatchResult, error) {
	if name := a.topicName(ctx, req.Topic, req.TopicID); name != "" {
		if err := a.check(ctx, topicNeed(name, auth.OpWrite)); err != nil {
			return api.ProduceBatchResult{}, err
		}
	}
	return a.Core.ProduceBatch(ctx, req)
}

// FetchBatches fetches the partitions of topics the principal may Read,
// and answers the others TOPIC_AUTHORIZATION_FAILED in their places.
func (a authorizing) FetchBatches(ctx context.Context, req api.FetchBatchesRequest) (api.FetchBatchesResult, error) {
	refused := make([]*api.Error, len(req.Partitions))
	allowed := req
	allowed.Partitions = nil
	for i, p := range req.Partitions {
		name := a.topicName(ctx, p.Topic, p.TopicID)
		if name == "" {
			allowed.Partitions = append(allowed.Partitions, p)
			continue
		}
		if err := a.check(ctx, topicNeed(name, auth.OpRead)); err != nil {
			refused[i] = asAPIError(err)
			continue
		}
		allowed.Partitions = append(allowed.Partitions, p)
	}
	if len(allowed.Partitions) == len(req.Partitions) {
		return a.Core.FetchBatches(ctx, req)
	}
	var res api.FetchBatchesResult
	if len(allowed.Partitions) > 0 {
		var err error
		if res, err = a.Core.FetchBatches(ctx, allowed); err != nil {
			return res, err
		}
	}
	out := api.FetchBatchesResult{Partitions: make([]api.FetchedPartition, len(req.Partitions))}
	k := 0
	for i, p := range req.Partitions {
		if refused[i] != nil {
			out.Partitions[i] = api.FetchedPartition{Topic: p.Topic, Partition: p.Partition, Err: refused[i]}
			continue
		}
		out.Partitions[i] = res.Partitions[k]
		k++
	}
	return out, nil
}

func (a authorizing) ListOffset(ctx context.Context, req api.ListOffsetRequest) (api.ListOffsetResult, error) {
	if err := a.check(ctx, topicNeed(req.Topic, auth.OpDescribe)); err != nil {
		return api.ListOffsetResult{}, err
	}
	return a.Core.ListOffset(ctx, req)
}

func (a authorizing) EpochEndOffset(ctx context.Context, req api.EpochEndOffsetRequest) (api.EpochEndOffsetResult, error) {
	if err := a.check(ctx, topicNeed(req.Topic, auth.OpDescribe)); err != nil {
		return api.EpochEndOffsetResult{}, err
	}
	return a.Core.EpochEndOffset(ctx, req)
}

func (a authorizing) CreateTopic(ctx context.Context, spec api.CreateTopicRequest) (*api.CreateTopicResult, error) {
	if err := a.check(ctx, topicNeed(spec.Name, auth.OpCreate)); err != nil {
		return nil, err
	}
	return a.Core.CreateTopic(ctx, spec)
}

func (a authorizing) DeleteTopic(ctx context.Context, name string) error {
	if err := a.check(ctx, topicNeed(name, auth.OpDelete)); err != nil {
		return err
	}
	return a.Core.DeleteTopic(ctx, name)
}

// DeleteRecords needs Delete on the topic, as in Kafka.
func (a authorizing) DeleteRecords(ctx context.Context, req api.DeleteRecordsRequest) (api.DeleteRecordsResult, error) {
	if err := a.check(ctx, topicNeed(req.Topic, auth.OpDelete)); err != nil {
		return api.DeleteRecordsResult{}, err
	}
	return a.Core.DeleteRecords(ctx, req)
}

func (a authorizing) AddPartitions(ctx context.Context, name string, partitions int32) error {
	if err := a.check(ctx, topicNeed(name, auth.OpAlter)); err != nil {
		return err
	}
	return a.Core.AddPartitions(ctx, name, partitions)
}

// Settings serves DescribeConfigs of a broker: DescribeConfigs on the
// cluster.
func (a authorizing) Settings(ctx context.Context) ([]api.BrokerSetting, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpDescribeConfigs}); err != nil {
		return nil, err
	}
	return a.Core.Settings(ctx)
}

// Users serves DescribeAcls: Describe on the cluster.
func (a authorizing) Users(ctx context.Context) ([]*auth.User, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpDescribe}); err != nil {
		return nil, err
	}
	return a.Core.Users(ctx)
}

// ElectPreferredLeaders serves ElectLeaders: Alter on the cluster.
func (a authorizing) ElectPreferredLeaders(ctx context.Context, partitions []api.TopicPartition) ([]api.LeaderElection, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpAlter}); err != nil {
		return nil, err
	}
	return a.Core.ElectPreferredLeaders(ctx, partitions)
}

// ReassignPartitions serves AlterPartitionReassignments: Alter on the
// cluster.
func (a authorizing) ReassignPartitions(ctx context.Context, partitions []api.PartitionReassignment) ([]api.ReassignmentAnswer, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpAlter}); err != nil {
		return nil, err
	}
	return a.Core.ReassignPartitions(ctx, partitions)
}

// Reassignments serves ListPartitionReassignments: Describe on the
// cluster.
func (a authorizing) Reassignments(ctx context.Context, topics []string) ([]api.Reassignment, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpDescribe}); err != nil {
		return nil, err
	}
	return a.Core.Reassignments(ctx, topics)
}

// LogDir serves DescribeLogDirs: Describe on the cluster.
func (a authorizing) LogDir(ctx context.Context) (api.LogDir, error) {
	if err := a.check(ctx, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpDescribe}); err != nil {
		return api.LogDir{}, err
	}
	return a.Core.LogDir(ctx)
}

// DescribeTopic serves DescribeConfigs: DescribeConfigs on the topic.
func (a authorizing) DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error) {
	if err := a.check(ctx, topicNeed(name, auth.OpDescribeConfigs)); err != nil {
		return nil, err
	}
	return a.Core.DescribeTopic(ctx, name)
}

func (a authorizing) AlterTopicConfig(ctx context.Context, change api.TopicConfigChange) (map[string]string, error) {
	if err := a.check(ctx, topicNeed(change.Topic, auth.OpAlterConfigs)); err != nil {
		return nil, err
	}
	return a.Core.AlterTopicConfig(ctx, change)
}

// NewProducer gives an idempotent producer an id when the principal may
// Write to some topic, as Kafka does since idempotence became the
// default (KIP-679).
func (a authorizing) NewProducer(ctx context.Context) (api.Producer, error) {
	if !a.mayWriteSomeTopic(ctx) {
		return api.Producer{}, api.Errorf(api.CodeClusterAuthorizationFailed,
			"%s may write to no topic: an idempotent producer id is refused", identityOf(ctx).principal)
	}
	return a.Core.NewProducer(ctx)
}

func (a authorizing) mayWriteSomeTopic(ctx context.Context) bool {
	id := identityOf(ctx)
	// A superuser, or the operator, may do anything.
	if a.sec.Authorizer.Allowed(id.principal, nil, id.host, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpAll}) {
		return true
	}
	user := a.users(id.principal.Name)
	if user == nil {
		return false
	}
	for _, acl := range user.ACLs {
		if acl.Resource == auth.ResourceTopic && acl.Permission != auth.Deny &&
			(acl.Host == "" || acl.Host == auth.Wildcard || acl.Host == id.host) {
			for _, op := range acl.Operations {
				if op == auth.OpWrite || op == auth.OpAll {
					return true
				}
			}
		}
	}
	return false
}

// GroupCoordinator serves FindCoordinator: Describe on the group.
func (a authorizing) GroupCoordinator(ctx context.Context, group string) (int32, error) {
	if err := a.check(ctx, groupNeed(group, auth.OpDescribe)); err != nil {
		return 0, err
	}
	return a.Core.GroupCoordinator(ctx, group)
}

func (a authorizing) JoinGroup(ctx context.Context, req api.JoinGroupRequest) (api.JoinGroupResult, error) {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpRead)); err != nil {
		return api.JoinGroupResult{}, err
	}
	return a.Core.JoinGroup(ctx, req)
}

func (a authorizing) SyncGroup(ctx context.Context, req api.SyncGroupRequest) (api.SyncGroupResult, error) {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpRead)); err != nil {
		return api.SyncGroupResult{}, err
	}
	return a.Core.SyncGroup(ctx, req)
}

func (a authorizing) Heartbeat(ctx context.Context, req api.MemberGeneration) error {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpRead)); err != nil {
		return err
	}
	return a.Core.Heartbeat(ctx, req)
}

func (a authorizing) LeaveGroup(ctx context.Context, req api.LeaveGroupRequest) error {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpRead)); err != nil {
		return err
	}
	return a.Core.LeaveGroup(ctx, req)
}

// CommitOffsets needs Read on the group and on every topic committed.
func (a authorizing) CommitOffsets(ctx context.Context, req api.CommitOffsetsRequest) error {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpRead)); err != nil {
		return err
	}
	for _, o := range req.Offsets {
		if err := a.check(ctx, topicNeed(o.Topic, auth.OpRead)); err != nil {
			return err
		}
	}
	return a.Core.CommitOffsets(ctx, req)
}

// Offsets serves OffsetFetch: Describe on the group; the offsets of topics
// the principal may not Describe are left out.
func (a authorizing) Offsets(ctx context.Context, req api.OffsetsRequest) ([]api.OffsetCommit, error) {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpDescribe)); err != nil {
		return nil, err
	}
	commits, err := a.Core.Offsets(ctx, req)
	if err != nil {
		return nil, err
	}
	visible := commits[:0:0]
	for _, c := range commits {
		if a.allowed(ctx, topicNeed(c.Topic, auth.OpDescribe)) {
			visible = append(visible, c)
		}
	}
	return visible, nil
}

// ListGroups leaves out the groups the principal may not Describe.
func (a authorizing) ListGroups(ctx context.Context) (api.GroupList, error) {
	list, err := a.Core.ListGroups(ctx)
	if err != nil {
		return list, err
	}
	visible := make([]api.GroupSummary, 0, len(list.Groups))
	for _, g := range list.Groups {
		if a.allowed(ctx, groupNeed(g.Group, auth.OpDescribe)) {
			visible = append(visible, g)
		}
	}
	list.Groups = visible
	return list, nil
}

func (a authorizing) DescribeGroup(ctx context.Context, req api.DescribeGroupRequest) (api.GroupDescription, error) {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpDescribe)); err != nil {
		return api.GroupDescription{}, err
	}
	return a.Core.DescribeGroup(ctx, req)
}

// DeleteOffsets needs Delete on the group; a partition of a topic the
// principal may not Read is TOPIC_AUTHORIZATION_FAILED and keeps its offset.
func (a authorizing) DeleteOffsets(ctx context.Context, req api.DeleteOffsetsRequest) ([]api.DeletedOffset, error) {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpDelete)); err != nil {
		return nil, err
	}
	out := make([]api.DeletedOffset, len(req.Partitions))
	allowed := api.DeleteOffsetsRequest{Group: req.Group}
	var at []int // out's index of each allowed partition
	for i, tp := range req.Partitions {
		out[i] = api.DeletedOffset{Topic: tp.Topic, Partition: tp.Partition}
		if err := a.check(ctx, topicNeed(tp.Topic, auth.OpRead)); err != nil {
			errors.As(err, &out[i].Err)
			continue
		}
		allowed.Partitions = append(allowed.Partitions, tp)
		at = append(at, i)
	}
	if len(allowed.Partitions) == 0 {
		return out, nil
	}
	deleted, err := a.Core.DeleteOffsets(ctx, allowed)
	if err != nil {
		return nil, err
	}
	for j, d := range deleted {
		if j < len(at) {
			out[at[j]] = d
		}
	}
	return out, nil
}

func (a authorizing) DeleteGroup(ctx context.Context, req api.DeleteGroupRequest) error {
	if err := a.check(ctx, groupNeed(req.Group, auth.OpDelete)); err != nil {
		return err
	}
	return a.Core.DeleteGroup(ctx, req)
}
