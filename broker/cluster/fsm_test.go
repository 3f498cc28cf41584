package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func applyCmd(t *testing.T, f *fsm, index uint64, c metadata.Command) error {
	t.Helper()
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if res := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: b}); res != nil {
		return res.(error)
	}
	return nil
}

func TestSnapshotRestoreReproducesTheImage(t *testing.T) {
	f := newFSM()
	sub, cancel := f.subscribe()
	defer cancel()
	idx := uint64(0)
	next := func() uint64 { idx++; return idx }
	for id := range 4 {
		applyCmd(t, f, next(), metadata.Command{Type: metadata.CmdRegisterBroker,
			RegisterBroker: &metadata.RegisterBroker{ID: id, Rack: string(rune('a' + id%2)), HTTPAddress: "h", RaftAddress: "r"}})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		a, err := metadata.NewPlanner(f.img.Load()).Place(1+r.IntN(5), 1+r.IntN(3))
		if err != nil {
			t.Fatal(err)
		}
		if err := applyCmd(t, f, next(), metadata.Command{Type: metadata.CmdCreateTopic, CreateTopic: &metadata.CreateTopic{
			Name: "t" + string(rune('a'+i)), ID: "id", Assignments: a, Config: map[string]string{"retention.ms": "5"}}}); err != nil {
			t.Fatal(err)
		}
	}
	applyCmd(t, f, next(), metadata.Command{Type: metadata.CmdFenceBroker, Broker: &metadata.BrokerRef{ID: 1}})
	applyCmd(t, f, next(), metadata.Command{Type: metadata.CmdDrain, Broker: &metadata.BrokerRef{ID: 2}})
	if err := applyCmd(t, f, next(), metadata.Command{Type: metadata.CmdDeleteTopic,
		DeleteTopic: &metadata.DeleteTopic{Name: "nope"}}); err == nil {
		t.Fatal("deleting an unknown topic succeeded")
	}
	if got := <-sub; got != f.img.Load() {
		t.Fatal("subscriber did not get the newest image")
	}

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil || sink.cancelled {
		t.Fatal(err)
	}
	restored := newFSM()
	if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(f.img.Load())
	got, _ := json.Marshal(restored.img.Load())
	if !bytes.Equal(want, got) {
		t.Fatalf("restored image differs:\n%s\n%s", want, got)
	}
	if err := restored.Restore(io.NopCloser(bytes.NewReader([]byte("{not json")))); err == nil {
		t.Fatal("a corrupt snapshot was accepted")
	}
}
