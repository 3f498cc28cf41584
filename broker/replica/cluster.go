package replica

import (
	"context"
	"sync"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// ImageSource is what this package reads from broker/cluster's Node: the
// current immutable image, a subscription that always holds the newest one,
// whether the broker has replayed the metadata log, and its metadata lease.
type ImageSource interface {
	Image() *metadata.Image
	Subscribe() (<-chan *metadata.Image, func())
	CaughtUp() bool
	MetadataLease() (index uint64, ok bool)
}

// ClusterMetadata adapts broker/cluster's metadata images to Metadata.
type ClusterMetadata struct {
	Source ImageSource
}

var _ Metadata = ClusterMetadata{}

// Partitions implements Metadata.
func (c ClusterMetadata) Partitions() ([]PartitionState, uint64, bool) {
	// CaughtUp first: an image read after it is at least that new.
	caughtUp := c.Source.CaughtUp()
	img := c.Source.Image()
	if img == nil {
		return nil, 0, false
	}
	return PartitionStates(img), img.Index, caughtUp
}

// Lease implements Metadata.
func (c ClusterMetadata) Lease() (uint64, bool) { return c.Source.MetadataLease() }

// BrokerAddress implements Metadata.
func (c ClusterMetadata) BrokerAddress(id int32) (string, bool) {
	img := c.Source.Image()
	if img == nil {
		return "", false
	}
	b := img.Broker(int(id))
	if b == nil || b.PeerAddress == "" {
		return "", false
	}
	return b.PeerAddress, true
}

// Subscribe implements Metadata, turning each new image into a wake-up.
func (c ClusterMetadata) Subscribe() (<-chan struct{}, func()) {
	images, cancel := c.Source.Subscribe()
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case _, ok := <-images:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default: // a wake-up is pending already; it reads the newest image
				}
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() {
			cancel()
			close(done)
		})
	}
}

// PartitionStates lists every partition of img.
func PartitionStates(img *metadata.Image) []PartitionState {
	var out []PartitionState
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		for _, p := range t.Partitions {
			out = append(out, partitionState(t, p))
		}
	}
	return out
}

func partitionState(t *metadata.Topic, p *metadata.Partition) PartitionState {
	return PartitionState{
		Topic:          t.Name,
		TopicID:        t.ID,
		Partition:      int32(p.ID),
		Replicas:       toInt32s(p.Replicas),
		Leader:         int32(p.Leader),
		LeaderEpoch:    int32(p.LeaderEpoch),
		ISR:            toInt32s(p.ISR),
		PartitionEpoch: int32(p.PartitionEpoch),
		Config:         t.Config, // images are immutable: sharing is safe
	}
}

func toInt32s(xs []int) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

func toInts(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// AlterISRProposer is broker/cluster's Node.AlterISR: it forwards the
// change to the controller and returns the partition as committed.
type AlterISRProposer interface {
	AlterISR(ctx context.Context, req metadata.AlterISR) (*metadata.Partition, error)
}

// ClusterISR adapts broker/cluster's Node to ISRChanger.
type ClusterISR struct {
	Node AlterISRProposer
}

var _ ISRChanger = ClusterISR{}

// AlterISR implements ISRChanger.
func (c ClusterISR) AlterISR(ctx context.Context, req AlterISRRequest) (PartitionState, error) {
	p, err := c.Node.AlterISR(ctx, req.command())
	if err != nil {
		return PartitionState{}, err
	}
	if p == nil {
		// Committed without the state: the image will bring it.
		return PartitionState{}, nil
	}
	return PartitionState{
		Topic: req.Topic, Partition: req.Partition,
		Replicas: toInt32s(p.Replicas), Leader: int32(p.Leader), LeaderEpoch: int32(p.LeaderEpoch),
		ISR: toInt32s(p.ISR), PartitionEpoch: int32(p.PartitionEpoch),
	}, nil
}

func (r AlterISRRequest) command() metadata.AlterISR {
	return metadata.AlterISR{
		Topic: r.Topic, Partition: int(r.Partition), Leader: int(r.LeaderID),
		LeaderEpoch: int(r.LeaderEpoch), PartitionEpoch: int(r.PartitionEpoch),
		ISR: toInts(r.ISR),
	}
}

// ISRFunc adapts a function to ISRChanger. A function that only knows
// whether the change committed may return a zero PartitionState with a nil
// error: the leader then trusts the new ISR when the metadata delivers it.
type ISRFunc func(ctx context.Context, req AlterISRRequest) (PartitionState, error)

// AlterISR implements ISRChanger.
func (f ISRFunc) AlterISR(ctx context.Context, req AlterISRRequest) (PartitionState, error) {
	return f(ctx, req)
}
