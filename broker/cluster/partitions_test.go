package cluster

import (
	"errors"
	"testing"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// TestCreatePartitionsProposedTwiceAddsOnce: a controller proposes raising
// a topic from 4 to 8 partitions and loses its leadership before it can
// answer; the broker that forwarded the request sends it again to the next
// controller, whose image does not show the first proposal yet, so it
// plans the same change again. Both proposals commit. The topic must end
// with the 8 partitions asked for, not 12.
func TestCreatePartitionsProposedTwiceAddsOnce(t *testing.T) {
	img := metadata.NewImage()
	index := uint64(0)
	apply := func(c metadata.Command) error {
		t.Helper()
		index++
		next, err := img.Apply(c, index)
		img = next
		return err
	}
	for id := range 3 {
		if err := apply(metadata.Command{Type: metadata.CmdRegisterBroker, RegisterBroker: &metadata.RegisterBroker{ID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := apply(metadata.Command{Type: metadata.CmdCreateTopic, CreateTopic: &metadata.CreateTopic{Name: "orders", ID: "t1",
		Assignments: [][]int{{0, 1}, {1, 2}, {2, 0}, {0, 2}}}}); err != nil {
		t.Fatal(err)
	}

	req := CreatePartitionsRequest{Topic: "orders", Partitions: 8}
	var proposals []*metadata.CreatePartitions
	for range 2 { // the old controller, then the new one, on the same image
		cmd, err := createPartitionsCommand(img, img.Topic("orders"), req)
		if err != nil || cmd == nil {
			t.Fatalf("plan: %v, %v", cmd, err)
		}
		proposals = append(proposals, cmd)
	}
	if err := apply(metadata.Command{Type: metadata.CmdCreatePartitions, CreatePartitions: proposals[0]}); err != nil {
		t.Fatal(err)
	}
	err := apply(metadata.Command{Type: metadata.CmdCreatePartitions, CreatePartitions: proposals[1]})
	if n := len(img.Topic("orders").Partitions); n != 8 {
		t.Fatalf("after the same change was committed twice the topic has %d partitions, want 8", n)
	}
	if !errors.Is(err, metadata.ErrStalePartitionCount) {
		t.Fatalf("second proposal: %v, want ErrStalePartitionCount", err)
	}
	if code, status := ErrorCode(err); code != "INVALID_PARTITIONS" || status != 400 {
		t.Fatalf("second proposal maps to %s %d", code, status)
	}

	// Once the image shows the change, planning it again changes nothing.
	if cmd, err := createPartitionsCommand(img, img.Topic("orders"), req); cmd != nil || err != nil {
		t.Fatalf("plan on the new image: %+v, %v", cmd, err)
	}
}
