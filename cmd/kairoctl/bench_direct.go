package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// leaderRouter sends each record straight to the broker that leads its
// partition, as Kafka clients do, instead of to one broker that proxies
// most records to their leaders. Keyed records go where the broker's
// partitioner would put them (api.KeyPartition); the keyless records of
// one request share a partition, the next in turn, as on the broker.
type leaderRouter struct {
	leaders []*client.Client // by partition
	rr      atomic.Uint32
}

func newLeaderRouter(ctx context.Context, c *client.Client, topic string, conns int) (*leaderRouter, error) {
	d, err := c.DescribeTopic(ctx, topic)
	if err != nil {
		return nil, err
	}
	brokers, err := c.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[int32]*client.Client{}
	for _, b := range brokers {
		bc, err := client.New(b.Address, client.WithUserAgent("kairoctl-bench"),
			client.WithHTTPClient(&http.Client{Transport: benchTransport(conns)}))
		if err != nil {
			return nil, err
		}
		byID[b.ID] = bc
	}
	r := &leaderRouter{leaders: make([]*client.Client, len(d.Partitions))}
	for _, p := range d.Partitions {
		if r.leaders[p.Partition] = byID[p.Leader]; r.leaders[p.Partition] == nil {
			return nil, fmt.Errorf("partition %d of %s has no reachable leader (leader %d)", p.Partition, topic, p.Leader)
		}
	}
	return r, nil
}

// produce sends the records of req to their leaders: one request per
// leading broker, in parallel.
func (r *leaderRouter) produce(ctx context.Context, req client.ProduceRequest) error {
	n := int32(len(r.leaders))
	keyless := int32(r.rr.Add(1) % uint32(n))
	pick := func(key *string) int32 {
		if key == nil {
			return keyless
		}
		return api.KeyPartition([]byte(*key), n)
	}
	if len(req.Records) == 0 {
		p := pick(req.Key)
		req.Partition = &p
		_, err := r.leaders[p].Produce(ctx, req)
		return err
	}
	byLeader := map[*client.Client][]client.ProduceRecord{}
	for _, rec := range req.Records {
		p := pick(rec.Key)
		rec.Partition = &p
		byLeader[r.leaders[p]] = append(byLeader[r.leaders[p]], rec)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for leader, recs := range byLeader {
		wg.Go(func() {
			sub := req
			sub.Records = recs
			if _, err := leader.Produce(ctx, sub); err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}
