package kafka

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// allToOne is a consumer balancer of the test's own: it gives every
// partition to the member whose id sorts first. The coordinator's own
// strategies (range, round robin) never give six partitions to one of
// three members, so a group whose member holds all six got it from its
// leader.
type allToOne struct{}

func (allToOne) ProtocolName() string { return "all-to-one" }
func (allToOne) IsCooperative() bool  { return false }

func (allToOne) JoinGroupMetadata(interests []string, _ map[string][]int32, _ int32) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = interests
	return m.AppendTo(nil)
}

func (allToOne) ParseSyncAssignment(b []byte) (map[string][]int32, error) {
	return kgo.ParseConsumerSyncAssignment(b)
}

func (a allToOne) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b, err := kgo.NewConsumerBalancer(a, members)
	if err != nil {
		return nil, nil, err
	}
	return b, b.MemberTopics(), nil
}

func (allToOne) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	plan := b.NewPlan()
	first, _ := b.MemberAt(0) // the members come sorted by id
	for topic, n := range topics {
		for p := int32(0); p < n; p++ {
			plan.AddPartition(first, topic, p)
		}
	}
	return plan
}

// TestLeaderAssignorAssigns: three kgo consumers whose balancer gives
// every partition to one member. The coordinator hands out the leader's
// assignment: that member reads every record and the others none, and
// the HTTP API, kairoctl groups describe and kadm show the group's
// protocol and the one member holding all six partitions.
func TestLeaderAssignorAssigns(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 90*time.Second)
	const topic, group = "ledger", "ledger-readers"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	seeds := c.KafkaAddresses()
	got := make([]*seen, 3)
	consumers := make([]*groupConsumer, 3)
	for i := range consumers {
		got[i] = &seen{values: map[string]int{}}
		consumers[i] = startGroupConsumer(t, seeds, group, topic, got[i], i, nil, kgo.Balancers(allToOne{}))
		defer consumers[i].close()
	}
	// Produce once all three hold their assignment: a member that joined
	// alone first would have read and committed everything itself.
	describe := func(what string, done func(d *api.GroupDescription) bool) *api.GroupDescription {
		var d *api.GroupDescription
		for {
			if ctx.Err() != nil {
				t.Fatalf("the group never %s: %+v", what, d)
			}
			time.Sleep(100 * time.Millisecond)
			var err error
			if d, err = c.Client(1).DescribeGroup(ctx, group, topic); err == nil && done(d) {
				return d
			}
		}
	}
	describe("settled with three members", func(d *api.GroupDescription) bool {
		return len(d.Members) == 3 && d.State == "Stable" && len(assignedOnce(t, d)) == 6
	})
	prod := newClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var rs []*kgo.Record
	for i := range 300 {
		rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i))})
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	d := describe("committed all 300 records with three members", func(d *api.GroupDescription) bool {
		return len(d.Members) == 3 && d.State == "Stable" && len(assignedOnce(t, d)) == 6 && d.TotalLag == 0 && committed(d) == 300
	})
	if d.ProtocolType != "consumer" || d.Protocol != "all-to-one" {
		t.Fatalf("the HTTP API shows protocol type %q and protocol %q", d.ProtocolType, d.Protocol)
	}
	holder := d.Members[0].ID // members are sorted by id, as the balancer sees them
	for _, m := range d.Members {
		want := 0
		if m.ID == holder {
			want = 6
		}
		if n := len(assignedPartitions(m.Assignment)); n != want {
			t.Fatalf("member %s holds %d partitions, want %d: %+v", m.ID, n, want, d.Members)
		}
	}
	for i, gc := range consumers {
		id, _ := gc.cl.GroupMetadata()
		got[i].mu.Lock()
		n := len(got[i].values)
		got[i].mu.Unlock()
		if want := map[bool]int{true: 300, false: 0}[id == holder]; n != want {
			t.Fatalf("consumer %d (member %s) read %d records, want %d (the leader gave every partition to %s)", i, id, n, want, holder)
		}
	}

	// kairoctl shows the group as the HTTP API does.
	out := kairoctl(t, ctx, "--broker", c.Endpoint(2), "groups", "describe", group)
	if !strings.Contains(out, "Strategy: all-to-one (consumer protocol, assigned by the leader)") ||
		!regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(holder)+` .* ledger:0,1,2,3,4,5\s*$`).MatchString(out) {
		t.Fatalf("kairoctl groups describe %s:\n%s", group, out)
	}

	adm := kadm.NewClient(newClient(t, seeds))
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	g := described[group]
	if g.Err != nil || g.Protocol != "all-to-one" || len(g.Members) != 3 {
		t.Fatalf("kadm describes %+v", g)
	}
	for _, m := range g.Members {
		ca, _ := m.Assigned.AsConsumer()
		n := 0
		if ca != nil {
			for _, tp := range ca.Topics {
				n += len(tp.Partitions)
			}
		}
		if (m.MemberID == holder) != (n == 6) || (m.MemberID != holder && n != 0) {
			t.Fatalf("kadm shows member %s with %d partitions; %s holds all six", m.MemberID, n, holder)
		}
	}
}

// kairoctl builds cmd/kairoctl and runs it with args.
func kairoctl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kairoctl")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kairolog/kairolog/cmd/kairoctl").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kairoctl: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kairoctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// assignedPartitions lists the partitions of an assignment.
func assignedPartitions(tps []api.TopicPartitions) []int32 {
	var out []int32
	for _, tp := range tps {
		out = append(out, tp.Partitions...)
	}
	return out
}

// TestLeaderAssignmentSurvivesFailover drives the classic protocol with
// raw requests, as a client with its own assignor does: two members join
// (a third that shares no protocol with them, or one over HTTP, is
// refused with INCONSISTENT_GROUP_PROTOCOL), the follower's SyncGroup waits until the leader's arrives and then gets
// the bytes the leader gave it, a member missing from the leader's
// assignment would get none, and after the coordinator's broker is killed
// (kill -9) the new coordinator, which replayed the group's journal, has
// the same generation and assignment: the HTTP API shows them and the
// follower's SyncGroup gets the same bytes again.
func TestLeaderAssignmentSurvivesFailover(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 90*time.Second)
	const topic, group = "payments", "payments-readers"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 4, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	// The group's journal must be on every broker before one is killed:
	// wait until every partition of __consumer_offsets has all three in
	// its ISR (the brokers raise its replication as they join).
	for replicated := false; !replicated; time.Sleep(100 * time.Millisecond) {
		d, err := c.Client(0).DescribeTopic(ctx, "__consumer_offsets")
		replicated = err == nil && len(d.Partitions) > 0
		for i := 0; replicated && i < len(d.Partitions); i++ {
			replicated = len(d.Partitions[i].ISR) == 3
		}
		if !replicated && ctx.Err() != nil {
			t.Fatalf("__consumer_offsets never had three replicas in sync: %+v (%v)", d, err)
		}
	}
	coordinator := func(via int) (int, string) {
		for {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKey = group
			resp := rawRoundTrip(t, c.KafkaAddress(via), req).(*kmsg.FindCoordinatorResponse)
			if resp.ErrorCode == 0 {
				return int(resp.NodeID), c.KafkaAddress(int(resp.NodeID))
			}
			if ctx.Err() != nil {
				t.Fatalf("FindCoordinator: %v", kerr.ErrorForCode(resp.ErrorCode))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	coordID, coordAddr := coordinator(0)

	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{topic}
	join := func(addr, member string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.SetVersion(5)
		req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 60000, 30000
		for _, name := range []string{"all-to-one", "range"} {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = name, meta.AppendTo(nil)
			req.Protocols = append(req.Protocols, p)
		}
		return rawRoundTrip(t, addr, req).(*kmsg.JoinGroupResponse)
	}
	syncGroup := func(addr, member string, generation int32, assignments map[string][]byte) *kmsg.SyncGroupResponse {
		req := kmsg.NewPtrSyncGroupRequest()
		req.SetVersion(5)
		req.Group, req.MemberID, req.Generation = group, member, generation
		req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("all-to-one")
		for id, b := range assignments {
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = id, b
			req.GroupAssignment = append(req.GroupAssignment, a)
		}
		return rawRoundTrip(t, addr, req).(*kmsg.SyncGroupResponse)
	}

	// The first member forms generation 1 alone; a second one joins and
	// the first rejoins: generation 2, led by the first.
	first := join(coordAddr, "")
	if first.ErrorCode != 0 || first.LeaderID != first.MemberID || first.Protocol == nil || *first.Protocol != "all-to-one" {
		t.Fatalf("first join: %+v", first)
	}
	var second *kmsg.JoinGroupResponse
	var wg sync.WaitGroup
	wg.Go(func() { second = join(coordAddr, "") })
	for {
		if d, err := c.Client(1).DescribeGroup(ctx, group); err == nil && d.State == "PreparingRebalance" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the second join never started a rebalance")
		}
		time.Sleep(20 * time.Millisecond)
	}
	leader := join(coordAddr, first.MemberID)
	wg.Wait()
	if leader.ErrorCode != 0 || second.ErrorCode != 0 || leader.Generation != 2 || second.Generation != 2 ||
		leader.LeaderID != first.MemberID || len(leader.Members) != 2 || len(second.Members) != 0 {
		t.Fatalf("generation 2: leader %+v, follower %+v", leader, second)
	}
	for _, m := range leader.Members {
		if !bytes.Equal(m.ProtocolMetadata, meta.AppendTo(nil)) {
			t.Fatalf("the leader got member %s's metadata %v, it sent %v", m.MemberID, m.ProtocolMetadata, meta.AppendTo(nil))
		}
	}

	// A member that shares no protocol with them is refused, over Kafka
	// and over HTTP, and the generation stays as it is.
	stranger := kmsg.NewPtrJoinGroupRequest()
	stranger.Group, stranger.ProtocolType, stranger.SessionTimeoutMillis = group, "consumer", 60000
	sp := kmsg.NewJoinGroupRequestProtocol()
	sp.Name, sp.Metadata = "sticky", meta.AppendTo(nil)
	stranger.Protocols = append(stranger.Protocols, sp)
	if resp := rawRoundTrip(t, coordAddr, stranger).(*kmsg.JoinGroupResponse); resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("a join with protocol sticky alone: %+v, want INCONSISTENT_GROUP_PROTOCOL", resp)
	}
	if _, err := c.Client(1).JoinGroup(ctx, api.JoinGroupRequest{Group: group, Topics: []string{topic}}); !api.IsCode(err, api.CodeInconsistentGroupProtocol) {
		t.Fatalf("an HTTP join into the Kafka group: %v, want 409 INCONSISTENT_GROUP_PROTOCOL", err)
	}

	// The follower syncs first and waits for the leader's assignment.
	everything := kmsg.NewConsumerMemberAssignment()
	all := kmsg.NewConsumerMemberAssignmentTopic()
	all.Topic, all.Partitions = topic, []int32{0, 1, 2, 3}
	everything.Topics = append(everything.Topics, all)
	nothing := kmsg.NewConsumerMemberAssignment()
	leaderBytes, followerBytes := everything.AppendTo(nil), nothing.AppendTo(nil)
	var followerSync *kmsg.SyncGroupResponse
	wg.Go(func() { followerSync = syncGroup(coordAddr, second.MemberID, 2, nil) })
	time.Sleep(300 * time.Millisecond)
	if d, err := c.Client(2).DescribeGroup(ctx, group); err != nil || d.State != "CompletingRebalance" {
		t.Fatalf("before the leader's SyncGroup the group is %+v (%v), want CompletingRebalance", d, err)
	}
	leaderSync := syncGroup(coordAddr, first.MemberID, 2, map[string][]byte{first.MemberID: leaderBytes, second.MemberID: followerBytes})
	wg.Wait()
	if leaderSync.ErrorCode != 0 || !bytes.Equal(leaderSync.MemberAssignment, leaderBytes) ||
		followerSync.ErrorCode != 0 || !bytes.Equal(followerSync.MemberAssignment, followerBytes) {
		t.Fatalf("leader's sync %+v, follower's %+v", leaderSync, followerSync)
	}
	describeAssignment := func(via int) *api.GroupDescription {
		for {
			d, err := c.Client(via).DescribeGroup(ctx, group)
			if err == nil {
				return d
			}
			if ctx.Err() != nil {
				t.Fatalf("describe %s: %v", group, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	checkAssignment := func(d *api.GroupDescription) {
		t.Helper()
		if d.State != "Stable" || d.Generation != 2 || d.Protocol != "all-to-one" || len(d.Members) != 2 {
			t.Fatalf("the group is %+v, want generation 2 Stable with two members", d)
		}
		for _, m := range d.Members {
			want, wantBytes := 0, followerBytes
			if m.ID == first.MemberID {
				want, wantBytes = 4, leaderBytes
			}
			if n := len(assignedPartitions(m.Assignment)); n != want || !bytes.Equal(m.MemberAssignment, wantBytes) {
				t.Fatalf("member %s: %d partitions, bytes %v; want %d and %v", m.ID, n, m.MemberAssignment, want, wantBytes)
			}
		}
	}
	checkAssignment(describeAssignment((coordID + 1) % 3))

	// The coordinator dies; its successor replays the group.
	if err := c.Kill(coordID); err != nil {
		t.Fatal(err)
	}
	survivor := (coordID + 1) % 3
	for {
		id, _ := coordinator(survivor)
		if id != coordID {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, coordAddr = coordinator(survivor)
	checkAssignment(describeAssignment(survivor))
	again := syncGroup(coordAddr, second.MemberID, 2, nil)
	if again.ErrorCode != 0 || !bytes.Equal(again.MemberAssignment, followerBytes) {
		t.Fatalf("the follower's SyncGroup at the new coordinator: %+v", again)
	}
	again = syncGroup(coordAddr, first.MemberID, 2, nil)
	if again.ErrorCode != 0 || !bytes.Equal(again.MemberAssignment, leaderBytes) {
		t.Fatalf("the leader's SyncGroup at the new coordinator: %+v", again)
	}
}
