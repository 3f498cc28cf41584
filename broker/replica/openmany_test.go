package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// TestOneImageOpensManyReplicasThatServeAndSurviveARestart publishes 300
// partitions at three replicas in one metadata change, as a burst of topic
// creations reaches a broker: every replica is created with its topic id,
// every partition takes an acks=all produce, and every replica holds the
// record after all brokers restart.
func TestOneImageOpensManyReplicasThatServeAndSurviveARestart(t *testing.T) {
	const topics, partitions = 100, 3
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	publishTopics(c, topics, partitions, 3)
	awaitLeaders(t, c, bs)

	states, _, _ := c.Partitions()
	var wg sync.WaitGroup
	errs := make(chan error, len(states))
	for _, st := range states {
		wg.Go(func() {
			rec := []storage.Record{{Value: []byte(st.Topic + "/" + fmt.Sprint(st.Partition))}}
			if _, _, err := bs[st.Leader].manager().Produce(context.Background(), st.Topic, st.Partition, rec, AcksAll, 10*time.Second); err != nil {
				errs <- fmt.Errorf("produce to %s-%d: %w", st.Topic, st.Partition, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for _, b := range bs {
		b.stop(t)
	}
	for _, b := range bs {
		b.start(t)
	}
	awaitLeaders(t, c, bs)
	for _, b := range bs {
		for _, st := range states {
			dir := filepath.Join(b.dir, partitionDir(st.Topic, st.Partition))
			if id, err := storage.ReadTopicID(dir); err != nil || id != st.TopicID {
				t.Fatalf("broker %d: %s holds topic id %q (%v), want %q", b.id, dir, id, err, st.TopicID)
			}
			p, err := b.manager().partition(st.Topic, st.Partition)
			if err != nil {
				t.Fatalf("broker %d after the restart: %v", b.id, err)
			}
			recs, err := p.log.Read(0, p.log.LogEndOffset(), 1<<20, 0)
			want := st.Topic + "/" + fmt.Sprint(st.Partition)
			if err != nil || len(recs) != 1 || string(recs[0].Value) != want {
				t.Fatalf("broker %d after the restart: %s-%d holds %v (%v), want the one record %q", b.id, st.Topic, st.Partition, values(recs), err, want)
			}
		}
	}
}

// TestNewReplicasAreHostedOnlyOnceTheDataDirectoryIsSynced: the entries of
// new partition directories are made durable by one fsync of the data
// directory, which must come before any of their replicas is hosted; if
// it fails, none is hosted and the directories are removed, and the next
// metadata change creates them again.
func TestNewReplicasAreHostedOnlyOnceTheDataDirectoryIsSynced(t *testing.T) {
	const topics = 20
	c := newMemCluster()
	// Published before the broker starts, so that its first reconcile is
	// the only one to see them until the test publishes again.
	publishTopics(c, topics, 1, 1)

	var (
		mu       sync.Mutex
		fail     = true
		synced   bool     // the data directory has been synced once
		m        *Manager // once started
		attempts int
		early    []string // replicas hosted or leading before the sync
	)
	hosted := func(where string) {
		for i := range topics {
			if _, err := m.partition(fmt.Sprintf("t%d", i), 0); err == nil {
				early = append(early, fmt.Sprintf("t%d (%s)", i, where))
			}
		}
	}
	defer func(f func(string) error) { syncDir = f }(syncDir)
	syncDir = func(dir string) error { // only ever the data directory
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if m != nil {
			hosted("at the sync")
		}
		if fail {
			return errors.New("injected fsync failure")
		}
		synced = true
		return storage.SyncDir(dir)
	}
	onLeadership := func(topic string, _ int32, leader bool, _ int32) {
		mu.Lock()
		defer mu.Unlock()
		if leader && !synced {
			early = append(early, topic+" (leading)")
		}
	}
	bs := startBrokers(t, c, 1, func(cfg *Config) { cfg.OnLeadershipChange = onLeadership })
	mu.Lock()
	m = bs[0].manager()
	mu.Unlock()

	eventually(t, 10*time.Second, "the first reconcile to end", func() bool { return m.reconciledIndex.Load() >= 1 })
	for i := range topics {
		topic := fmt.Sprintf("t%d", i)
		if _, err := m.PartitionInfo(topic, 0); err == nil {
			t.Fatalf("%s is hosted although the data directory could not be synced", topic)
		}
		if _, err := os.Lstat(filepath.Join(bs[0].dir, partitionDir(topic, 0))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the directory of %s outlived the failed sync: %v", topic, err)
		}
	}

	mu.Lock()
	fail = false
	mu.Unlock()
	c.hold(false) // a new image: the broker tries again
	awaitLeaders(t, c, bs)
	mu.Lock()
	defer mu.Unlock()
	if attempts != 2 {
		t.Errorf("the data directory was synced %d times for two metadata changes, want 2", attempts)
	}
	if len(early) > 0 {
		t.Fatalf("replicas hosted before the data directory was synced: %v", early)
	}
}
