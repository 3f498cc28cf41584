package replica

import (
	"context"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
)

// peerClient asks leaders for batches and epoch ends over the peer
// transport.
type peerClient struct {
	peer *peer.Client
}

func (c *peerClient) fetch(ctx context.Context, addr string, r fetchRequest) (followerFetchResult, error) {
	// The leader answers after at most the wait; anything much later is a
	// dead connection.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(r.WaitMs)*time.Millisecond+10*time.Second)
	defer cancel()
	out, err := peer.Call(ctx, c.peer, addr, opFetch, r)
	if err != nil {
		return followerFetchResult{}, decodeError(r.Topic, r.Partition, r.FetchOffset, err)
	}
	if out.LeaderEpoch != r.LeaderEpoch {
		return followerFetchResult{}, fmt.Errorf("leader reply: epoch %d, asked for %d", out.LeaderEpoch, r.LeaderEpoch)
	}
	return followerFetchResult{Batches: out.Batches, HighWatermark: out.HighWatermark,
		LogStartOffset: out.LogStartOffset, LogEndOffset: out.LogEndOffset, LeaderEpoch: out.LeaderEpoch}, nil
}

func (c *peerClient) epochEnd(ctx context.Context, addr string, r epochEndRequest) (epoch int32, end int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := peer.Call(ctx, c.peer, addr, opEpochEnd, r)
	if err != nil {
		return -1, -1, decodeError(r.Topic, r.Partition, -1, err)
	}
	return out.Epoch, out.EndOffset, nil
}
