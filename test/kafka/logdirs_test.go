package kafka

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
)

// TestDescribeLogDirs: kadm's DescribeAllLogDirs, as consoles ask it for
// topic sizes, names the broker's data directory with its file system's
// size and free space, and each replica there with the bytes the HTTP API
// shows for it; asked for one partition, it answers that one alone.
func TestDescribeLogDirs(t *testing.T) {
	c := startCluster(t, 1, nil)
	ctx := testContext(t, 30*time.Second)
	const topic = "audit"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 2, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c.KafkaAddresses(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var rs []*kgo.Record
	for range 100 {
		rs = append(rs, &kgo.Record{Value: []byte("an audit event of some length")})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	desc, err := c.Client(0).DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := all[0]
	wantDir, err := filepath.Abs(c.DataDir(0))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := dirs[wantDir]
	if len(all) != 1 || len(dirs) != 1 || !ok || d.Err != nil || d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("log dirs %+v, want broker 0's %s alone with its file system's size", all, wantDir)
	}
	var total int64
	for _, p := range desc.Partitions {
		got, ok := dirs.LookupPartition(topic, p.Partition)
		if !ok || got.Size != p.SizeBytes || got.Size == 0 {
			t.Fatalf("%s-%d: %d bytes (found %v), the HTTP API says %d", topic, p.Partition, got.Size, ok, p.SizeBytes)
		}
		total += got.Size
	}
	if _, ok := dirs.LookupPartition("__consumer_offsets", 0); !ok {
		t.Fatal("the internal __consumer_offsets replicas are missing")
	}

	one, err := adm.DescribeBrokerLogDirs(ctx, 0, kadm.TopicsSet{topic: {1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	parts := one.SortedPartitions()
	if len(parts) != 1 || parts[0].Topic != topic || parts[0].Partition != 1 {
		t.Fatalf("asked for %s-1, got %+v", topic, parts)
	}
	t.Logf("%s: %d bytes in %s", topic, total, wantDir)
}
