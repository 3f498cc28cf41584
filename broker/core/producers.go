package core

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/storage"
)

// producerIDBlock is how many producer ids a broker takes from the
// controller at a time (Kafka's AllocateProducerIds hands out 1000).
const producerIDBlock = 1000

// producerIDs hands out the ids of the block this broker holds and asks
// the controller for the next block when it runs out. Unused ids of a
// block are lost when the broker stops, as in Kafka: ids are plentiful,
// reusing one is not an option.
type producerIDs struct {
	mu        sync.Mutex
	next, end int64
}

// NewProducer gives an idempotent producer an id no producer had before,
// with epoch 0 (POST /producers; Kafka's InitProducerId without a
// transactional id).
func (b *Broker) NewProducer(ctx context.Context) (api.Producer, error) {
	p := &b.producerIDs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == p.end {
		block, err := b.node.AllocateProducerIDs(ctx, producerIDBlock)
		if err != nil {
			return api.Producer{}, apiError(fmt.Errorf("allocate producer ids: %w", err))
		}
		p.next, p.end = block.First, block.First+block.Count
	}
	id := p.next
	p.next++
	return api.Producer{ID: id, Epoch: 0}, nil
}

// checkProducer validates an idempotent produce's producer before
// anything is written: fields in range, and an id the cluster handed out.
// An id from a block committed a moment ago may not have reached this
// broker's image yet, so an id past the image's waits for it briefly.
func (b *Broker) checkProducer(ctx context.Context, p *api.ProducerSequence) error {
	if p.ID < 0 || p.Epoch < 0 || p.Sequence < 0 {
		return api.Errorf(api.CodeInvalidArgument, "producer_id, producer_epoch and sequence must be at least 0, got %d, %d and %d",
			p.ID, p.Epoch, p.Sequence)
	}
	if p.ID < b.image().NextProducerID || IsForwarded(ctx) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, metadataCatchUpWait)
	defer cancel()
	for p.ID >= b.image().NextProducerID {
		select {
		case <-ctx.Done():
			return api.Errorf(api.CodeInvalidArgument, "producer_id %d was never handed out: POST /producers gives a producer its id", p.ID)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// storageProducer is the producer a batch is stamped with.
func storageProducer(p *api.ProducerSequence) *storage.Producer {
	if p == nil {
		return nil
	}
	return &storage.Producer{ID: p.ID, Epoch: p.Epoch, BaseSequence: p.Sequence}
}
