package replica

import (
	"context"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
)

// peerClient calls the replica operations of leaders over the peer
// transport.
type peerClient struct {
	peer *peer.Client
}

func (c *peerClient) fetchSession(ctx context.Context, addr string, r sessionRequest) (sessionReply, error) {
	// The leader answers after at most the wait; anything much later is a
	// dead connection.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(r.WaitMs)*time.Millisecond+10*time.Second)
	defer cancel()
	out, err := peer.Call(ctx, c.peer, addr, opFetchSession, r)
	if err != nil {
		return sessionReply{}, decodeError("", -1, -1, err)
	}
	return out, nil
}

func (c *peerClient) wakeSession(ctx context.Context, addr string, r sessionWakeRequest) error {
	_, err := peer.Call(ctx, c.peer, addr, opSessionWake, r)
	return err
}
