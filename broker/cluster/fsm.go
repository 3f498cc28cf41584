package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// fsm is the raft state machine: it applies metadata commands to the
// current image and publishes each new image to subscribers. raft calls
// Apply, Snapshot and Restore from one goroutine; readers load the image
// pointer without locks.
type fsm struct {
	img atomic.Pointer[metadata.Image]

	mu   sync.Mutex
	subs map[int]chan *metadata.Image
	next int
}

func newFSM() *fsm {
	f := &fsm{subs: map[int]chan *metadata.Image{}}
	f.img.Store(metadata.NewImage())
	return f
}

// Apply returns nil or the command's validation error, which reaches the
// proposer through ApplyFuture.Response.
func (f *fsm) Apply(l *raft.Log) interface{} {
	cmd, err := metadata.DecodeCommand(l.Data)
	if err != nil {
		return err
	}
	next, err := f.img.Load().Apply(cmd, l.Index)
	if err != nil {
		return err
	}
	f.publish(next)
	return nil
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &snapshot{img: f.img.Load()}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	img := metadata.NewImage()
	if err := json.NewDecoder(rc).Decode(img); err != nil {
		return fmt.Errorf("decode metadata snapshot: %w", err)
	}
	if err := img.CheckInvariants(); err != nil {
		return fmt.Errorf("metadata snapshot: %w", err)
	}
	f.publish(img)
	return nil
}

func (f *fsm) publish(img *metadata.Image) {
	f.img.Store(img)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.subs {
		// Keep only the newest image in the channel: a slow subscriber
		// skips versions but never blocks the state machine.
		select {
		case <-ch:
		default:
		}
		ch <- img
	}
}

func (f *fsm) subscribe() (<-chan *metadata.Image, func()) {
	ch := make(chan *metadata.Image, 1)
	f.mu.Lock()
	id := f.next
	f.next++
	f.subs[id] = ch
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs, id)
			f.mu.Unlock()
		})
	}
}

// snapshot writes one image; images are immutable, so Persist may run
// while Apply goes on.
type snapshot struct{ img *metadata.Image }

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(s.img); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {}
