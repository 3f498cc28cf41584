package metadata

import (
	"errors"
	"fmt"
	"testing"
)

// builder applies commands one after another, failing the test on errors.
type builder struct {
	t     testing.TB
	img   *Image
	index uint64
}

func newBuilder(t testing.TB) *builder { return &builder{t: t, img: NewImage()} }

func (b *builder) try(c Command) error {
	b.index++
	next, err := b.img.Apply(c, b.index)
	if err == nil {
		if ierr := next.CheckInvariants(); ierr != nil {
			b.t.Fatalf("%s broke an invariant: %v", c.Type, ierr)
		}
	}
	b.img = next
	return err
}

func (b *builder) do(c Command) *builder {
	b.t.Helper()
	if err := b.try(c); err != nil {
		b.t.Fatalf("%s: %v", c.Type, err)
	}
	return b
}

func (b *builder) expect(c Command, want error) {
	b.t.Helper()
	before := b.img
	if err := b.try(c); !errors.Is(err, want) {
		b.t.Fatalf("%s: got %v, want %v", c.Type, err, want)
	}
	if b.img != before {
		b.t.Fatalf("%s: failed command changed the image", c.Type)
	}
}

func (b *builder) brokers(racks ...string) *builder {
	for i, rack := range racks {
		b.do(register(i, rack))
	}
	return b
}

func (b *builder) part(topic string, p int) *Partition {
	b.t.Helper()
	part := b.img.Partition(topic, p)
	if part == nil {
		b.t.Fatalf("no partition %s-%d", topic, p)
	}
	return part
}

func register(id int, rack string) Command {
	return Command{Type: CmdRegisterBroker, RegisterBroker: &RegisterBroker{ID: id, Rack: rack,
		HTTPAddress: fmt.Sprintf("b%d:8080", id), RaftAddress: fmt.Sprintf("b%d:9093", id)}}
}

// registerIncarnation registers broker id from process incarnation, with
// the brokers the controller heard from.
func registerIncarnation(id int, incarnation string, heard []int) Command {
	c := register(id, "")
	c.RegisterBroker.Incarnation, c.RegisterBroker.Heard = incarnation, heard
	return c
}

func brokerCmd(t CommandType, id int) Command { return Command{Type: t, Broker: &BrokerRef{ID: id}} }

func createTopic(name string, assignments ...[]int) Command {
	return Command{Type: CmdCreateTopic, CreateTopic: &CreateTopic{Name: name, ID: "id-" + name, Assignments: assignments}}
}

func alterISR(p *Partition, topic string, isr ...int) Command {
	return Command{Type: CmdAlterISR, AlterISR: &AlterISR{Topic: topic, Partition: p.ID, Leader: p.Leader,
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}}
}

func reassign(topic string, p int, target ...int) Command {
	return Command{Type: CmdReassign, Reassign: &Reassign{Moves: []Move{{Topic: topic, Partition: p, Target: target}}}}
}
