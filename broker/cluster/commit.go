package cluster

import (
	"time"

	"github.com/hashicorp/raft"
)

// A follower of the metadata quorum learns that an entry is committed,
// and so applies it, from the next AppendEntries the leader sends it: one
// that carries new entries, or, with none to send, the one hashicorp/raft
// sends every CommitTimeout (randomised up to twice that) after the last.
// The library's 50 ms default costs an idle cluster an empty append to
// every follower about 13 times a second (a log read on the leader, a
// round through the follower's raft loop), doing nothing; its own
// heartbeats carry no commit index, so they cannot stand in.
//
// The leader announces commits instead: once an entry has committed and
// been applied here (Node.apply, a new controller's first barrier), it
// appends a barrier, whose AppendEntries carries the new commit index to
// every follower at once — sooner than the timer did. Announcements
// asked for while one is under way are served by one more barrier
// afterwards, so a burst of commands costs one or two barriers, not one
// each. The last barrier itself changes no image; followers learn of its
// commit with the next entry or the timer, which stays as a backstop for
// anything else committed without an announcement (an entry a leader
// committed just before losing its leadership): raftCommitTimeout.
//
// An idle cluster therefore commits nothing, and its raft traffic is the
// leader's heartbeats.
const raftCommitTimeout = time.Second

// announceCommits asks the leader to announce what has committed.
func (n *Node) announceCommits() {
	select {
	case n.announce <- struct{}{}:
	default: // one is pending; it covers this commit too
	}
}

// announcer appends a barrier for every round of announcements asked for
// while this node leads.
func (n *Node) announcer() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.announce:
		}
		if n.raft.State() != raft.Leader {
			continue // a new leader announces its own
		}
		// A failure (leadership lost, shutdown) leaves the commit to the
		// next leader's entries or the backstop timer.
		_ = n.raft.Barrier(applyTimeout).Error()
	}
}
