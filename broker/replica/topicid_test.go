package replica

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// ordersWithID publishes orders-0 on brokers 0,1,2 led by 0 in epoch 1, as
// topic id id: a topic created again starts again at the same epochs.
func ordersWithID(c *memCluster, id string) {
	c.set(PartitionState{
		Topic: "orders", TopicID: id, Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1, 2}, PartitionEpoch: 1,
	})
}

// frozenView is a broker's own copy of the metadata, caught up, that the
// test moves on by hand: the broker sees exactly the images it is given.
func frozenView(c *memCluster) *memCluster {
	v := staleImage(c)
	v.caughtUp = true
	return v
}

// show replaces v's image with c's current one and notifies, as an image
// that skipped everything in between would.
func show(v, c *memCluster) {
	catchUp(v, c)
	c.mu.Lock()
	addrs := maps.Clone(c.addrs)
	c.mu.Unlock()
	v.mu.Lock()
	v.addrs = addrs
	v.notifyLocked()
	v.mu.Unlock()
}

// waitLeaderOf waits until broker b leads topic-0 as topic id id.
func waitLeaderOf(t *testing.T, b *testBroker, topic, id string) {
	t.Helper()
	eventually(t, 5*time.Second, "broker to lead "+topic+" as "+id, func() bool {
		p, err := b.manager().partition(topic, 0)
		if err != nil || p.TopicID() != id {
			return false
		}
		leader, _ := p.leadership()
		return leader
	})
}

func topicIDOnDisk(t *testing.T, b *testBroker, topic string) string {
	t.Helper()
	id, err := storage.ReadTopicID(filepath.Join(b.dir, partitionDir(topic, 0)))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A broker that never sees the image in which a topic was deleted — it
// gets the re-created topic's image directly, as after coalesced images or
// a raft snapshot install — deletes its replica of the old topic and
// replicates the new one from offset 0. Meanwhile its fetcher for the old
// topic is refused by the new topic's leader, even though leader and epoch
// are the same, instead of truncating the old log to the new one's end.
func TestRecreatedTopicIsNeverReusedWhenTheDeletionIsSkipped(t *testing.T) {
	c := newMemCluster()
	view := frozenView(c)
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		if cfg.BrokerID == 2 {
			cfg.Metadata = view
		}
	})
	ordersWithID(c, "id-1")
	show(view, c)
	waitLeaderOf(t, bs[0], "orders", "id-1")
	produce(t, bs[0], "orders", recordsOf("old", 10), AcksAll)

	// Deleted and created again; broker 2 is shown neither image.
	c.remove("orders", 0)
	eventually(t, 5*time.Second, "broker 0 to delete its replica", func() bool {
		_, err := os.Stat(filepath.Join(bs[0].dir, partitionDir("orders", 0)))
		return os.IsNotExist(err)
	})
	c.set(PartitionState{Topic: "orders", TopicID: "id-2", Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1}, PartitionEpoch: 1})
	waitLeaderOf(t, bs[0], "orders", "id-2")
	produce(t, bs[0], "orders", recordsOf("new", 3), AcksAll)

	// Broker 2 still follows broker 0 in epoch 1 for id-1 and is refused.
	time.Sleep(300 * time.Millisecond)
	if got := values(readAll(t, bs[2], "orders")); len(got) != 10 || got[9] != "old-9" {
		t.Fatalf("broker 2's replica of the old topic changed while it followed the new topic's leader: %v", got)
	}

	show(view, c)
	eventually(t, 5*time.Second, "broker 2 to replicate the new topic", func() bool {
		p, err := bs[2].manager().partition("orders", 0)
		return err == nil && p.TopicID() == "id-2" && p.log.LogEndOffset() == 3
	})
	if got, want := values(readAll(t, bs[2], "orders")), []string{"new-0", "new-1", "new-2"}; !slices.Equal(got, want) {
		t.Errorf("broker 2's replica: %v, want %v", got, want)
	}
	if id := topicIDOnDisk(t, bs[2], "orders"); id != "id-2" {
		t.Errorf("broker 2's partition.metadata names %q, want id-2", id)
	}
}

// A broker restarted after its topic was deleted and created again keeps
// its old replica while its image is not caught up — it gets no role and is
// not deleted, for an old image cannot tell which of the two is newer —
// and deletes it once caught up.
func TestRestartedBrokerDeletesTheReplicaOfADeletedTopicOnceCaughtUp(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	ordersWithID(c, "id-1")
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("old", 10), AcksAll)

	bs[2].stop(t)
	oldImage := staleImage(c) // what broker 2 replays first
	c.remove("orders", 0)
	c.set(PartitionState{Topic: "orders", TopicID: "id-2", Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1}, PartitionEpoch: 1})
	waitLeaderOf(t, bs[0], "orders", "id-2")
	produce(t, bs[0], "orders", recordsOf("new", 3), AcksAll)

	// On the old image broker 2 follows broker 0 for id-1: refused, so its
	// log stays as it was.
	bs[2].cfg = func(cfg *Config) { cfg.Metadata = oldImage }
	bs[2].start(t)
	time.Sleep(300 * time.Millisecond)
	if got := values(readAll(t, bs[2], "orders")); len(got) != 10 {
		t.Fatalf("broker 2's old replica on the old image: %v, want the 10 old records", got)
	}

	// On a newer image, not caught up, the replica is another topic's:
	// no role, nothing deleted.
	newImage := staleImage(c)
	bs[2].stop(t)
	bs[2].cfg = func(cfg *Config) { cfg.Metadata = newImage }
	bs[2].start(t)
	time.Sleep(100 * time.Millisecond)
	if i := info(t, bs[2], "orders"); i.Leader != NoLeader || i.LogEndOffset != 10 {
		t.Fatalf("broker 2 on a newer image, not caught up: %+v, want no role and the old log kept", i)
	}
	if id := topicIDOnDisk(t, bs[2], "orders"); id != "id-1" {
		t.Fatalf("broker 2's partition.metadata names %q before catching up, want id-1", id)
	}

	catchUp(newImage, c)
	eventually(t, 5*time.Second, "broker 2 to replicate the new topic", func() bool {
		p, err := bs[2].manager().partition("orders", 0)
		return err == nil && p.TopicID() == "id-2" && p.log.LogEndOffset() == 3
	})
	if got, want := values(readAll(t, bs[2], "orders")), []string{"new-0", "new-1", "new-2"}; !slices.Equal(got, want) {
		t.Errorf("broker 2's replica: %v, want %v", got, want)
	}
	eventually(t, 5*time.Second, "broker 2 back in the ISR", func() bool {
		return slices.Contains(c.state("orders", 0).ISR, 2)
	})
}

// The replica protocol carries the topic id: a request from a replica of
// another topic id gets INCONSISTENT_TOPIC_ID, whatever the epochs say.
func TestInternalAPIRejectsAnotherTopicID(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	ordersWithID(c, "id-1")
	waitLeader(t, bs[0], "orders")
	for _, lastFetched := range []int{-1, 1} {
		q := replicaRequest("orders", 1)
		partitionOf(q)["last_fetched_epoch"] = lastFetched
		partitionOf(q)["topic_id"] = "id-0"
		status, body, reply := internalCall(t, bs[0], q)
		if code, _, _ := answerCode(reply, "orders"); status != http.StatusOK || code != "INCONSISTENT_TOPIC_ID" {
			t.Errorf("fetch (last fetched epoch %d) with another topic id: %d %+v, answer %q, want INCONSISTENT_TOPIC_ID",
				lastFetched, status, body, code)
		}
		partitionOf(q)["topic_id"] = "id-1"
		status, body, reply = internalCall(t, bs[0], q)
		if code, _, named := answerCode(reply, "orders"); status != http.StatusOK || code != "" || !named {
			t.Errorf("fetch (last fetched epoch %d) with the topic id: %d %+v, answer %q (named %v), want one without error",
				lastFetched, status, body, code, named)
		}
	}
}

// A replica directory written before topic ids takes the id the metadata
// names and keeps its data; one whose partition.metadata cannot be read is
// neither served nor deleted.
func TestReplicaWithoutTopicIDAdoptsItAndACorruptOneIsKept(t *testing.T) {
	c := newMemCluster()
	dir := t.TempDir()
	legacy := filepath.Join(dir, partitionDir("legacy", 0))
	l, err := storage.Open(legacy, storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Append(recordsOf("kept", 4), 1); err != nil {
		t.Fatal(err)
	}
	l.Close()
	corrupt := filepath.Join(dir, partitionDir("corrupt", 0))
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, "partition.metadata"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The metadata assigns both before the broker starts, as for a broker
	// restarted on its data: started first, it could see a caught-up
	// metadata without them and rightly delete the legacy replica.
	for _, topic := range []string{"legacy", "corrupt"} {
		c.set(PartitionState{Topic: topic, TopicID: topic + "-id", Partition: 0, Replicas: []int32{0}, Leader: 0,
			LeaderEpoch: 2, ISR: []int32{0}, PartitionEpoch: 1})
	}
	b := &testBroker{id: 0, dir: dir, cluster: c}
	b.start(t)
	defer b.stop(t)
	waitLeader(t, b, "legacy")
	if id := topicIDOnDisk(t, b, "legacy"); id != "legacy-id" {
		t.Errorf("legacy replica's partition.metadata names %q, want legacy-id", id)
	}
	if got := values(readAll(t, b, "legacy")); len(got) != 4 || got[0] != "kept-0" {
		t.Errorf("legacy replica's records: %v, want kept-0..kept-3", got)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := b.manager().PartitionInfo("corrupt", 0); err == nil {
		t.Error("a replica with a corrupt partition.metadata is served")
	}
	if data, err := os.ReadFile(filepath.Join(corrupt, "partition.metadata")); err != nil || string(data) != "garbage" {
		t.Errorf("a corrupt partition.metadata was changed or deleted: %q, %v", data, err)
	}
}

// A produce or fetch that names the topic id its broker's image gives the
// topic is served only by a replica of that id: in the moment between a
// broker's image learning that the topic was created again and its
// replica manager acting on it, the old replica must neither take the
// record nor serve the old ones. The request waits for the manager, and
// fails with ErrInconsistentTopicID if it does not come.
func TestProduceAndFetchNameTheTopicID(t *testing.T) {
	c := newMemCluster()
	view := frozenView(c)
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		if cfg.BrokerID == 0 {
			cfg.Metadata = view
		}
	})
	ordersWithID(c, "id-1")
	show(view, c)
	waitLeaderOf(t, bs[0], "orders", "id-1")
	produce(t, bs[0], "orders", recordsOf("old", 3), AcksAll)
	m := bs[0].manager()

	newer := WithTopicID(context.Background(), "id-2")
	if _, _, err := m.Produce(newer, "orders", 0, recordsOf("new", 1), AcksLeader, time.Second); !errors.Is(err, ErrInconsistentTopicID) {
		t.Errorf("produce for id-2 on a replica of id-1: %v, want ErrInconsistentTopicID", err)
	}
	if _, err := m.Fetch(newer, "orders", 0, 0, 1<<20, 0, 0); !errors.Is(err, ErrInconsistentTopicID) {
		t.Errorf("fetch for id-2 from a replica of id-1: %v, want ErrInconsistentTopicID", err)
	}
	if leo := info(t, bs[0], "orders").LogEndOffset; leo != 3 {
		t.Fatalf("the replica of id-1 took a record for id-2: log end %d", leo)
	}

	// The topic is created again with broker 0 leading; the fetch that
	// arrives first waits for the manager and reads the new topic.
	c.remove("orders", 0)
	c.set(PartitionState{Topic: "orders", TopicID: "id-2", Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1, 2}, PartitionEpoch: 1})
	done := make(chan error, 1)
	go func() {
		_, _, err := m.Produce(newer, "orders", 0, recordsOf("new", 1), AcksAll, 5*time.Second)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	show(view, c)
	if err := <-done; err != nil {
		t.Fatalf("produce for id-2 once the manager caught up: %v", err)
	}
	res, err := m.Fetch(newer, "orders", 0, 0, 1<<20, 0, 0)
	if err != nil || len(res.Records) != 1 || string(res.Records[0].Value) != "new-0" {
		t.Fatalf("fetch for id-2: %v, %v; want new-0 alone", values(res.Records), err)
	}
}
