package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// applyTimeout bounds a proposal when the caller's context has no deadline.
const applyTimeout = 10 * time.Second

// apply proposes cmd to the quorum and waits until it is committed and
// applied here. It returns the entry's raft index, or the command's
// validation error, or ErrNotController when this node does not lead.
func (n *Node) apply(ctx context.Context, cmd metadata.Command) (uint64, error) {
	b, err := cmd.Encode()
	if err != nil {
		return 0, err
	}
	timeout := applyTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	f := n.raft.Apply(b, timeout)
	err = f.Error()
	if err == nil {
		n.announceCommits()
	}
	if err != nil {
		switch {
		case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
			errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrRaftShutdown):
			return 0, fmt.Errorf("%w: %v", ErrNotController, err)
		case errors.Is(err, raft.ErrEnqueueTimeout):
			return 0, fmt.Errorf("%w: %v", ErrRequestTimedOut, err)
		}
		return 0, err
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return f.Index(), err
	}
	return f.Index(), nil
}
