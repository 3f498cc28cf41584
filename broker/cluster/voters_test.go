package cluster

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// voters returns the sorted voter ids of the controller's raft
// configuration.
func (c *testCluster) votersNow() []int {
	c.t.Helper()
	f := c.controller().raft.GetConfiguration()
	if err := f.Error(); err != nil {
		c.t.Fatal(err)
	}
	v := voterIDs(f.Configuration().Servers)
	slices.Sort(v)
	return v
}

// TestVoterChangesKeepTheQuorum: DELETE /brokers/{id} and POST
// /brokers/{id}/demote of a voter promote a live non-voter in its place
// when the voters left would tolerate fewer failures, and are refused with
// VOTER_NOT_REPLACEABLE when nobody can be promoted. Before, a removed
// voter simply left: three voters became two, which survive no failure,
// and the removed broker came back as a non-voter, so the quorum stayed
// small for good.
func TestVoterChangesKeepTheQuorum(t *testing.T) {
	remove := func(n *Node, id int) error { return n.RemoveBroker(ctxTimeout(t, 15*time.Second), id) }
	demote := func(n *Node, id int) error { return n.DemoteVoter(ctxTimeout(t, 15*time.Second), id) }
	tests := []struct {
		name       string
		voters     int
		nonVoters  int
		op         func(n *Node, id int) error
		target     func(c *testCluster) int
		wantVoters []int // nil: every broker but the target
		wantErr    error
	}{
		{"remove one of three voters: the non-voter takes the vote", 3, 1, remove,
			func(*testCluster) int { return 2 }, []int{0, 1, 3}, nil},
		{"remove the controller: it hands over, the non-voter takes its vote", 3, 1, remove,
			func(c *testCluster) int { return c.controller().ID() }, nil, nil},
		{"remove one of three voters, nobody to promote: refused", 3, 0, remove,
			func(*testCluster) int { return 2 }, []int{0, 1, 2}, ErrVoterNotReplaceable},
		{"remove one of two voters: one survives as much, nobody is promoted", 2, 1, remove,
			func(*testCluster) int { return 1 }, []int{0}, nil},
		{"remove a non-voter: the voters stay", 3, 1, remove,
			func(*testCluster) int { return 3 }, []int{0, 1, 2}, nil},
		{"demote one of two voters: a quorum of one", 2, 0, demote,
			func(*testCluster) int { return 1 }, []int{0}, nil},
		{"demote the controller of two voters", 2, 0, demote,
			func(c *testCluster) int { return c.controller().ID() }, nil, nil},
		{"demote one of three voters: the non-voter takes the vote", 3, 1, demote,
			func(*testCluster) int { return 0 }, []int{1, 2, 3}, nil},
		{"demote one of three voters, nobody to promote: refused", 3, 0, demote,
			func(*testCluster) int { return 0 }, []int{0, 1, 2}, ErrVoterNotReplaceable},
		{"demote a non-voter: nothing changes", 1, 1, demote,
			func(*testCluster) int { return 1 }, []int{0}, nil},
		{"demote a broker outside the quorum", 1, 0, demote,
			func(*testCluster) int { return 7 }, []int{0}, ErrUnknownBroker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCluster(t, tt.voters)
			c.startAll()
			for i := range tt.nonVoters {
				c.start(c.config(tt.voters+i, ""))
			}
			c.waitReady()
			brokers := tt.voters + tt.nonVoters
			id := tt.target(c)
			want := tt.wantVoters
			if want == nil {
				for b := range brokers {
					if b != id {
						want = append(want, b)
					}
				}
			}
			err := tt.op(c.node((id+1)%brokers), id)
			switch {
			case tt.wantErr != nil && !isErr(err, tt.wantErr):
				t.Fatalf("broker %d: %v, want %v", id, err, tt.wantErr)
			case errors.Is(tt.wantErr, ErrVoterNotReplaceable):
				if code, status := ErrorCode(err); code != "VOTER_NOT_REPLACEABLE" || status != 409 {
					t.Errorf("error code %s %d, want VOTER_NOT_REPLACEABLE 409", code, status)
				}
				if !strings.Contains(err.Error(), "add a broker") {
					t.Errorf("error %q does not say what to do", err)
				}
			case tt.wantErr == nil && err != nil:
				t.Fatalf("broker %d: %v", id, err)
			}
			if got := c.votersNow(); !slices.Equal(got, want) {
				t.Fatalf("voters after the change of broker %d = %v, want %v", id, got, want)
			}
			// GET /brokers tells the voters too, once each broker has
			// registered with its new suffrage.
			c.eventually(10*time.Second, "the metadata to show the voters", func() bool {
				img := c.controller().Image()
				var shown []int
				for _, b := range img.BrokerIDs() {
					if img.Broker(b).Voter {
						shown = append(shown, b)
					}
				}
				return slices.Equal(shown, want)
			})
		})
	}
}

func TestPickReplacement(t *testing.T) {
	img := metadata.NewImage()
	add := func(id int, rack string, fenced, draining bool) {
		img.Brokers[id] = &metadata.Broker{ID: id, Rack: rack, Fenced: fenced, Draining: draining}
	}
	add(0, "a", false, false)
	add(1, "b", false, false)
	add(2, "c", false, false)
	add(3, "a", false, false)
	add(4, "c", false, false)
	add(5, "c", true, false)
	add(6, "b", false, true)
	srv := func(id int, s raft.ServerSuffrage) raft.Server {
		return raft.Server{ID: raft.ServerID(strconv.Itoa(id)), Suffrage: s}
	}
	servers := []raft.Server{srv(0, raft.Voter), srv(1, raft.Voter), srv(2, raft.Voter),
		srv(3, raft.Nonvoter), srv(4, raft.Nonvoter), srv(5, raft.Nonvoter), srv(6, raft.Nonvoter), srv(7, raft.Nonvoter)}
	tests := []struct {
		remove int
		want   int // -1: none
		only   []raft.Server
	}{
		{2, 4, servers},      // same rack c first (5 is fenced)
		{0, 3, servers},      // same rack a
		{1, 3, servers},      // rack b's 6 is draining: lowest id
		{1, -1, servers[:3]}, // no non-voter at all
		{0, -1, append(servers[:3:3], srv(7, raft.Nonvoter))}, // 7 never registered
	}
	for _, tt := range tests {
		got, ok := pickReplacement(img, tt.only, tt.remove)
		if (tt.want < 0) == ok || ok && serverID(got) != tt.want {
			t.Errorf("replacing %d: %v %v, want %d", tt.remove, got.ID, ok, tt.want)
		}
	}
}
