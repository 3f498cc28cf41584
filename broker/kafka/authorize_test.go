package kafka

import (
	"context"
	"slices"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// recordingCore answers the calls authorizing passes on and records the
// partitions a fetch reached it with; the calls it does not define are
// never reached in these tests (the embedded nil Core would panic).
type recordingCore struct {
	Core
	fetched []string
}

func (c *recordingCore) Topology(context.Context) (api.Topology, error) {
	return api.Topology{Topics: []api.TopicPlacement{{Name: "mine", TopicID: "id-mine"}, {Name: "theirs", TopicID: "id-theirs"}}}, nil
}

func (c *recordingCore) FetchBatches(_ context.Context, req api.FetchBatchesRequest) (api.FetchBatchesResult, error) {
	var res api.FetchBatchesResult
	for _, p := range req.Partitions {
		c.fetched = append(c.fetched, p.Topic+p.TopicID)
		res.Partitions = append(res.Partitions, api.FetchedPartition{Topic: p.Topic, Partition: p.Partition, HighWatermark: 7})
	}
	return res, nil
}

func (c *recordingCore) ListGroups(context.Context) (api.GroupList, error) {
	return api.GroupList{Groups: []api.GroupSummary{{Group: "mine-1"}, {Group: "theirs"}}}, nil
}

func (c *recordingCore) Offsets(context.Context, api.OffsetsRequest) ([]api.OffsetCommit, error) {
	return []api.OffsetCommit{{Topic: "mine", Offset: 1}, {Topic: "theirs", Offset: 2}}, nil
}

func (c *recordingCore) AutoCreateTopic(context.Context, string) error { return nil }

func (c *recordingCore) CreateTopic(context.Context, api.CreateTopicRequest) (*api.CreateTopicResult, error) {
	return &api.CreateTopicResult{}, nil
}

// TestAuthorizingCreateTopics: CreateTopics needs Create on the topic or
// on the cluster, as in Kafka.
func TestAuthorizingCreateTopics(t *testing.T) {
	users := map[string]*auth.User{
		"by-topic":   {Name: "by-topic", ACLs: []auth.ACL{{Resource: auth.ResourceTopic, Name: "new-", Pattern: auth.PatternPrefix, Operations: []auth.Operation{auth.OpCreate}}}},
		"by-cluster": {Name: "by-cluster", ACLs: []auth.ACL{{Resource: auth.ResourceCluster, Operations: []auth.Operation{auth.OpCreate}}}},
		"reader":     {Name: "reader", ACLs: []auth.ACL{{Resource: auth.ResourceTopic, Name: "*", Operations: []auth.Operation{auth.OpRead}}}},
	}
	a := authorizing{Core: &recordingCore{}, sec: auth.Listener{Authorization: true}, users: func(n string) *auth.User { return users[n] }}
	for _, tc := range []struct {
		user, topic string
		want        string
	}{
		{"by-topic", "new-orders", ""},
		{"by-topic", "orders", api.CodeTopicAuthorizationFailed},
		{"by-cluster", "orders", ""},
		{"reader", "orders", api.CodeTopicAuthorizationFailed},
	} {
		ctx := withIdentity(context.Background(), identity{principal: auth.Principal{Name: tc.user}})
		code := ""
		if _, err := a.CreateTopic(ctx, api.CreateTopicRequest{Name: tc.topic, Partitions: 1}); err != nil {
			code = asAPIError(err).Code
		}
		if code != tc.want {
			t.Errorf("%s creates %s: %q, want %q", tc.user, tc.topic, code, tc.want)
		}
	}
}

// TestAuthorizingCore: a fetch of topics the principal may and may not
// read reaches the core with the readable partitions only (by name or by
// topic id) and answers the others TOPIC_AUTHORIZATION_FAILED in their
// places; ListGroups, Metadata's topology and OffsetFetch leave out what
// the principal may not Describe; auto-creation without Create is
// UNKNOWN_TOPIC for a topic the principal may Describe and
// TOPIC_AUTHORIZATION_FAILED otherwise; a superuser is refused nothing.
func TestAuthorizingCore(t *testing.T) {
	alice := &auth.User{Name: "alice", ACLs: []auth.ACL{
		{Resource: auth.ResourceTopic, Name: "mine", Operations: []auth.Operation{auth.OpRead}},
		{Resource: auth.ResourceTopic, Name: "wanted", Operations: []auth.Operation{auth.OpDescribe}},
		{Resource: auth.ResourceGroup, Name: "mine-", Pattern: auth.PatternPrefix, Operations: []auth.Operation{auth.OpRead}},
	}}
	users := func(name string) *auth.User {
		if name == "alice" {
			return alice
		}
		return nil
	}
	sec := auth.Listener{Authentication: auth.AuthSCRAM, Authorization: true, Authorizer: auth.Authorizer{SuperUsers: []string{"root"}}}
	for _, tc := range []struct {
		user        string
		fetched     []string
		codes       []string // per fetched partition, "" for none
		groups      []string
		topics      []string
		offsets     []string
		createCodes []string // auto-creating "wanted", then "unwanted"
	}{
		{"alice", []string{"mine", "id-mine"}, []string{"", api.CodeTopicAuthorizationFailed, "", api.CodeTopicAuthorizationFailed},
			[]string{"mine-1"}, []string{"mine"}, []string{"mine"}, []string{api.CodeUnknownTopic, api.CodeTopicAuthorizationFailed}},
		{"root", []string{"mine", "theirs", "id-mine", "id-theirs"}, []string{"", "", "", ""},
			[]string{"mine-1", "theirs"}, []string{"mine", "theirs"}, []string{"mine", "theirs"}, []string{"", ""}},
		{"", nil, []string{api.CodeTopicAuthorizationFailed, api.CodeTopicAuthorizationFailed, api.CodeTopicAuthorizationFailed, api.CodeTopicAuthorizationFailed},
			[]string{}, []string{}, []string{}, []string{api.CodeTopicAuthorizationFailed, api.CodeTopicAuthorizationFailed}},
	} {
		core := &recordingCore{}
		a := authorizing{Core: core, sec: sec, users: users}
		ctx := withIdentity(context.Background(), identity{principal: auth.Principal{Name: tc.user}, host: "10.0.0.1"})
		res, err := a.FetchBatches(ctx, api.FetchBatchesRequest{Partitions: []api.FetchPartition{
			{Topic: "mine", Partition: 0}, {Topic: "theirs", Partition: 1}, {TopicID: "id-mine", Partition: 2}, {TopicID: "id-theirs", Partition: 3}}})
		if err != nil {
			t.Fatalf("%q: fetch: %v", tc.user, err)
		}
		if !slices.Equal(core.fetched, tc.fetched) {
			t.Errorf("%q: the core fetched %v, want %v", tc.user, core.fetched, tc.fetched)
		}
		for i, p := range res.Partitions {
			code := ""
			if p.Err != nil {
				code = p.Err.Code
			} else if p.HighWatermark != 7 || p.Partition != int32(i) {
				t.Errorf("%q: partition %d answered out of place: %+v", tc.user, i, p)
			}
			if code != tc.codes[i] {
				t.Errorf("%q: partition %d: %q, want %q", tc.user, i, code, tc.codes[i])
			}
		}

		list, _ := a.ListGroups(ctx)
		var groups []string
		for _, g := range list.Groups {
			groups = append(groups, g.Group)
		}
		topo, _ := a.Topology(ctx)
		var topics []string
		for _, t := range topo.Topics {
			topics = append(topics, t.Name)
		}
		var offsets []string
		if commits, err := a.Offsets(ctx, api.OffsetsRequest{Group: "mine-1"}); err == nil {
			for _, c := range commits {
				offsets = append(offsets, c.Topic)
			}
		} else if tc.user != "" {
			t.Errorf("%q: offsets of mine-1: %v", tc.user, err)
		}
		for _, got := range []struct {
			what      string
			got, want []string
		}{{"groups", groups, tc.groups}, {"topics", topics, tc.topics}, {"offsets", offsets, tc.offsets}} {
			if !slices.Equal(got.got, got.want) && (len(got.got) != 0 || len(got.want) != 0) {
				t.Errorf("%q: %s %v, want %v", tc.user, got.what, got.got, got.want)
			}
		}
		for i, topic := range []string{"wanted", "unwanted"} {
			code := ""
			if err := a.AutoCreateTopic(ctx, topic); err != nil {
				code = asAPIError(err).Code
			}
			if code != tc.createCodes[i] {
				t.Errorf("%q: auto-creating %s: %q, want %q", tc.user, topic, code, tc.createCodes[i])
			}
		}
	}
}

// deletingCore answers DeleteOffsets, GROUP_SUBSCRIBED_TO_TOPIC for
// partition 1, and records the partitions that reached it.
type deletingCore struct {
	Core
	reached []api.TopicPartition
}

func (c *deletingCore) DeleteOffsets(_ context.Context, req api.DeleteOffsetsRequest) ([]api.DeletedOffset, error) {
	c.reached = append(c.reached, req.Partitions...)
	out := make([]api.DeletedOffset, len(req.Partitions))
	for i, tp := range req.Partitions {
		out[i] = api.DeletedOffset{Topic: tp.Topic, Partition: tp.Partition}
		if tp.Partition == 1 {
			out[i].Err = api.Errorf(api.CodeGroupSubscribedToTopic, "consumed")
		}
	}
	return out, nil
}

// TestAuthorizingDeleteOffsets: OffsetDelete needs Delete on the group,
// and Read on each topic: a partition of another topic is
// TOPIC_AUTHORIZATION_FAILED in its place and never reaches the core.
func TestAuthorizingDeleteOffsets(t *testing.T) {
	bob := &auth.User{Name: "bob", ACLs: []auth.ACL{
		{Resource: auth.ResourceTopic, Name: "mine", Operations: []auth.Operation{auth.OpRead}},
		{Resource: auth.ResourceGroup, Name: "billing", Operations: []auth.Operation{auth.OpDelete}},
		{Resource: auth.ResourceGroup, Name: "reading", Operations: []auth.Operation{auth.OpRead}},
	}}
	sec := auth.Listener{Authentication: auth.AuthSCRAM, Authorization: true}
	core := &deletingCore{}
	a := authorizing{Core: core, sec: sec, users: func(name string) *auth.User {
		if name == "bob" {
			return bob
		}
		return nil
	}}
	ctx := withIdentity(context.Background(), identity{principal: auth.Principal{Name: "bob"}, host: "10.0.0.1"})
	req := api.DeleteOffsetsRequest{Group: "billing", Partitions: []api.TopicPartition{
		{Topic: "mine", Partition: 0}, {Topic: "theirs", Partition: 0}, {Topic: "mine", Partition: 1}}}
	got, err := a.DeleteOffsets(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", api.CodeTopicAuthorizationFailed, api.CodeGroupSubscribedToTopic}
	for i, d := range got {
		code := ""
		if d.Err != nil {
			code = d.Err.Code
		}
		if d.Topic != req.Partitions[i].Topic || d.Partition != req.Partitions[i].Partition || code != want[i] {
			t.Errorf("partition %d: %+v, want %s-%d %q", i, d, req.Partitions[i].Topic, req.Partitions[i].Partition, want[i])
		}
	}
	if !slices.Equal(core.reached, []api.TopicPartition{{Topic: "mine", Partition: 0}, {Topic: "mine", Partition: 1}}) {
		t.Errorf("the core was asked for %+v, want mine-0 and mine-1", core.reached)
	}

	core.reached = nil
	req.Group = "reading"
	if _, err := a.DeleteOffsets(ctx, req); asAPIError(err).Code != api.CodeGroupAuthorizationFailed {
		t.Fatalf("a group bob may only read: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	if len(core.reached) != 0 {
		t.Fatalf("a refused request reached the core: %+v", core.reached)
	}
}

// recordsDeletingCore answers DeleteRecords and records the topics that
// reached it.
type recordsDeletingCore struct {
	Core
	reached []string
}

func (c *recordsDeletingCore) DeleteRecords(_ context.Context, req api.DeleteRecordsRequest) (api.DeleteRecordsResult, error) {
	c.reached = append(c.reached, req.Topic)
	return api.DeleteRecordsResult{LowWatermark: req.Offset}, nil
}

// TestAuthorizingDeleteRecords: DeleteRecords needs Delete on the topic;
// Read, Write or Alter do not do, and a refused deletion never reaches
// the core.
func TestAuthorizingDeleteRecords(t *testing.T) {
	bob := &auth.User{Name: "bob", ACLs: []auth.ACL{
		{Resource: auth.ResourceTopic, Name: "logs", Operations: []auth.Operation{auth.OpDelete}},
		{Resource: auth.ResourceTopic, Name: "orders", Operations: []auth.Operation{auth.OpRead, auth.OpWrite, auth.OpAlter}},
	}}
	sec := auth.Listener{Authentication: auth.AuthSCRAM, Authorization: true}
	core := &recordsDeletingCore{}
	a := authorizing{Core: core, sec: sec, users: func(string) *auth.User { return bob }}
	ctx := withIdentity(context.Background(), identity{principal: auth.Principal{Name: "bob"}, host: "10.0.0.1"})
	if res, err := a.DeleteRecords(ctx, api.DeleteRecordsRequest{Topic: "logs", Offset: 3}); err != nil || res.LowWatermark != 3 {
		t.Fatalf("deleting from logs with Delete on it: %+v, %v", res, err)
	}
	_, err := a.DeleteRecords(ctx, api.DeleteRecordsRequest{Topic: "orders", Offset: 3})
	if code := asAPIError(err).Code; code != api.CodeTopicAuthorizationFailed {
		t.Fatalf("deleting from orders without Delete on it: %v, want %s", err, api.CodeTopicAuthorizationFailed)
	}
	if !slices.Equal(core.reached, []string{"logs"}) {
		t.Fatalf("the core deleted from %v, want only logs", core.reached)
	}
}

type leaderElectingCore struct {
	Core
	calls int
}

func (c *leaderElectingCore) ElectPreferredLeaders(context.Context, []api.TopicPartition) ([]api.LeaderElection, error) {
	c.calls++
	return nil, nil
}

// TestAuthorizingElectLeaders: ElectLeaders needs Alter on the cluster, as
// in Kafka; Alter on every topic does not do, and a refused election never
// reaches the core.
func TestAuthorizingElectLeaders(t *testing.T) {
	users := map[string]*auth.User{
		"ops":    {Name: "ops", ACLs: []auth.ACL{{Resource: auth.ResourceCluster, Operations: []auth.Operation{auth.OpAlter}}}},
		"topics": {Name: "topics", ACLs: []auth.ACL{{Resource: auth.ResourceTopic, Name: "*", Operations: []auth.Operation{auth.OpAlter}}}},
	}
	sec := auth.Listener{Authentication: auth.AuthSCRAM, Authorization: true}
	core := &leaderElectingCore{}
	a := authorizing{Core: core, sec: sec, users: func(name string) *auth.User { return users[name] }}
	as := func(name string) context.Context {
		return withIdentity(context.Background(), identity{principal: auth.Principal{Name: name}, host: "10.0.0.1"})
	}
	if _, err := a.ElectPreferredLeaders(as("ops"), nil); err != nil || core.calls != 1 {
		t.Fatalf("ops, with Alter on the cluster: %v (%d calls)", err, core.calls)
	}
	_, err := a.ElectPreferredLeaders(as("topics"), nil)
	if code := asAPIError(err).Code; code != api.CodeClusterAuthorizationFailed || core.calls != 1 {
		t.Fatalf("topics, with Alter on every topic only: %v (%d calls), want %s", err, core.calls, api.CodeClusterAuthorizationFailed)
	}
}

type reassigningCore struct {
	Core
	moves, lists int
}

func (c *reassigningCore) ReassignPartitions(context.Context, []api.PartitionReassignment) ([]api.ReassignmentAnswer, error) {
	c.moves++
	return nil, nil
}

func (c *reassigningCore) Reassignments(context.Context, []string) ([]api.Reassignment, error) {
	c.lists++
	return nil, nil
}

// TestAuthorizingReassignments: moving partitions needs Alter on the
// cluster and listing the moves Describe on it, as in Kafka; Alter on
// every topic does neither, and a refused request never reaches the core.
func TestAuthorizingReassignments(t *testing.T) {
	users := map[string]*auth.User{
		"ops":    {Name: "ops", ACLs: []auth.ACL{{Resource: auth.ResourceCluster, Operations: []auth.Operation{auth.OpAlter}}}},
		"viewer": {Name: "viewer", ACLs: []auth.ACL{{Resource: auth.ResourceCluster, Operations: []auth.Operation{auth.OpDescribe}}}},
		"topics": {Name: "topics", ACLs: []auth.ACL{{Resource: auth.ResourceTopic, Name: "*", Operations: []auth.Operation{auth.OpAlter}}}},
	}
	sec := auth.Listener{Authentication: auth.AuthSCRAM, Authorization: true}
	core := &reassigningCore{}
	a := authorizing{Core: core, sec: sec, users: func(name string) *auth.User { return users[name] }}
	as := func(name string) context.Context {
		return withIdentity(context.Background(), identity{principal: auth.Principal{Name: name}, host: "10.0.0.1"})
	}
	for _, tc := range []struct {
		user       string
		move, list bool
	}{{"ops", true, true}, {"viewer", false, true}, {"topics", false, false}} {
		_, merr := a.ReassignPartitions(as(tc.user), nil)
		_, lerr := a.Reassignments(as(tc.user), nil)
		if (merr == nil) != tc.move || (lerr == nil) != tc.list {
			t.Errorf("%s: move %v, list %v; want allowed %v and %v", tc.user, merr, lerr, tc.move, tc.list)
		}
		for _, err := range []error{merr, lerr} {
			if err != nil && asAPIError(err).Code != api.CodeClusterAuthorizationFailed {
				t.Errorf("%s: %v, want %s", tc.user, err, api.CodeClusterAuthorizationFailed)
			}
		}
	}
	if core.moves != 1 || core.lists != 2 {
		t.Fatalf("the core moved %d times and listed %d, want 1 and 2", core.moves, core.lists)
	}
}
