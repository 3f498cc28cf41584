package metadata

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// chooser supplies the random choices of a command sequence: from a
// seeded generator, or from fuzzer bytes.
type chooser interface{ intn(n int) int }

type seeded struct{ r *rand.Rand }

func (s seeded) intn(n int) int { return s.r.IntN(n) }

type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) intn(n int) int {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1]) % n
}

const maxBrokers = 6

// randomCommand returns a command that is often valid for img (planned
// placements, AlterISR quoting current epochs) and sometimes not (stale
// epochs, unknown names), as a controller racing other updates would send.
func randomCommand(c chooser, img *Image, seq int) Command {
	topics := img.TopicNames()
	pickTopic := func() string {
		if len(topics) == 0 || c.intn(10) == 0 {
			return fmt.Sprintf("t%d", c.intn(4))
		}
		return topics[c.intn(len(topics))]
	}
	pickPartition := func(topic string) (*Partition, int) {
		if t := img.Topics[topic]; t != nil {
			i := c.intn(len(t.Partitions) + 1)
			if i < len(t.Partitions) {
				return t.Partitions[i], i
			}
			return nil, i
		}
		return nil, 0
	}
	randomSet := func(p *Partition) []int {
		var out []int
		for _, r := range p.Replicas {
			if r == p.Leader || c.intn(2) == 0 {
				out = append(out, r)
			}
		}
		return out
	}
	broker := c.intn(maxBrokers)
	switch c.intn(14) {
	case 0:
		return register(broker, fmt.Sprintf("rack%d", broker%3))
	case 1:
		return brokerCmd(CmdFenceBroker, broker)
	case 2:
		return brokerCmd(CmdUnfenceBroker, broker)
	case 3:
		return brokerCmd(CmdControlledStop, broker)
	case 4:
		pl := NewPlanner(img)
		a, err := pl.Place(1+c.intn(4), 1+c.intn(3))
		if err != nil {
			a = [][]int{{broker}}
		}
		cmd := createTopic(fmt.Sprintf("t%d", c.intn(4)), a...)
		cmd.CreateTopic.ID = fmt.Sprintf("id%d", seq)
		if c.intn(3) == 0 {
			cmd.CreateTopic.Config = map[string]string{ConfigUncleanElection: "true"}
		}
		return cmd
	case 5:
		return Command{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: pickTopic()}}
	case 6:
		name := pickTopic()
		rf := 1
		if t := img.Topics[name]; t != nil {
			rf = t.ReplicationFactor()
		}
		a, err := NewPlanner(img).Place(1, rf)
		if err != nil {
			a = [][]int{{broker}}
		}
		return Command{Type: CmdCreatePartitions, CreatePartitions: &CreatePartitions{Topic: name, Assignments: a}}
	case 7, 8, 9:
		name := pickTopic()
		p, i := pickPartition(name)
		if p == nil {
			return Command{Type: CmdAlterISR, AlterISR: &AlterISR{Topic: name, Partition: i, ISR: []int{0}}}
		}
		cmd := alterISR(p, name, randomSet(p)...)
		if c.intn(8) == 0 {
			cmd.AlterISR.PartitionEpoch--
		}
		return cmd
	case 10:
		return Command{Type: CmdElectLeaders, ElectLeaders: &ElectLeaders{Preferred: c.intn(2) == 0}}
	case 11:
		name := pickTopic()
		p, i := pickPartition(name)
		target := []int{broker}
		if p != nil {
			target = randomSet(p)
			if len(target) == 0 || c.intn(2) == 0 {
				target = append(target, (broker+1)%maxBrokers)
			}
			target = uniq(target)
		}
		return reassign(name, i, target...)
	case 12:
		if c.intn(2) == 0 {
			return brokerCmd(CmdDrain, broker)
		}
		return brokerCmd(CmdCancelDrain, broker)
	default:
		return brokerCmd(CmdRemoveBroker, broker)
	}
}

func uniq(a []int) []int {
	var out []int
	for _, x := range a {
		dup := false
		for _, y := range out {
			dup = dup || x == y
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}

type epochs struct{ leader, partition int }

// runSequence applies n commands chosen by c and checks the invariants
// after each: structural ones (CheckInvariants), monotonic epochs per
// partition, and that a failed command leaves the image untouched.
func runSequence(t *testing.T, c chooser, n int) *Image {
	img := NewImage()
	for i := range 3 {
		img, _ = img.Apply(register(i, fmt.Sprintf("rack%d", i)), uint64(i+1))
	}
	seen := map[string]epochs{}
	for i := 0; i < n; i++ {
		cmd := randomCommand(c, img, i)
		next, err := img.Apply(cmd, uint64(i+10))
		if err != nil {
			if next != img {
				t.Fatalf("step %d: failed %s returned a new image", i, cmd.Type)
			}
			continue
		}
		if err := next.CheckInvariants(); err != nil {
			b, _ := json.Marshal(cmd)
			t.Fatalf("step %d: %s broke an invariant: %v", i, b, err)
		}
		for _, name := range next.TopicNames() {
			tp := next.Topics[name]
			for _, p := range tp.Partitions {
				key := fmt.Sprintf("%s/%d", tp.ID, p.ID)
				if old, ok := seen[key]; ok && (p.LeaderEpoch < old.leader || p.PartitionEpoch < old.partition) {
					t.Fatalf("step %d: %s epochs went back from %+v to %d/%d", i, key, old, p.LeaderEpoch, p.PartitionEpoch)
				}
				seen[key] = epochs{p.LeaderEpoch, p.PartitionEpoch}
			}
		}
		img = next
	}
	return img
}

func TestRandomCommandSequencesKeepInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		img := runSequence(t, seeded{rand.New(rand.NewPCG(seed, 7))}, 300)
		assertRoundTrip(t, img)
	}
}

// assertRoundTrip checks that an image survives the snapshot encoding.
func assertRoundTrip(t *testing.T, img *Image) {
	t.Helper()
	b, err := json.Marshal(img)
	if err != nil {
		t.Fatal(err)
	}
	var back Image
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) || !reflect.DeepEqual(img.BrokerSummaries(), back.BrokerSummaries()) {
		t.Fatalf("snapshot round trip changed the image:\n%s\n%s", b, b2)
	}
}

func FuzzFSM(f *testing.F) {
	f.Add([]byte{4, 1, 2, 7, 0, 1, 1, 9, 3, 3, 1, 2, 12, 0, 11, 1, 1})
	f.Add([]byte("controller fences broker one and moves leadership"))
	f.Fuzz(func(t *testing.T, b []byte) {
		runSequence(t, &fuzzBytes{b: b}, len(b))
	})
}
