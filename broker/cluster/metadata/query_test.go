package metadata

import (
	"errors"
	"testing"
)

func TestBrokerSummary(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1, 2}, []int{1, 2, 0}))
	b.do(alterISR(b.part("t", 0), "t", 0, 1))
	s, err := b.img.BrokerSummary(0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Partitions != 2 || s.Leaders != 1 || s.UnderReplicated != 1 || !s.InSync || s.State != "alive" {
		t.Fatalf("broker 0: %+v", s)
	}
	if s2, _ := b.img.BrokerSummary(2); s2.InSync || s2.Leaders != 0 {
		t.Fatalf("broker 2: %+v", s2)
	}
	if _, err := b.img.BrokerSummary(9); !errors.Is(err, ErrUnknownBroker) {
		t.Fatal(err)
	}
	b.do(brokerCmd(CmdFenceBroker, 1))
	if s1, _ := b.img.BrokerSummary(1); s1.State != "fenced" || s1.Leaders != 0 {
		t.Fatalf("fenced broker 1: %+v", s1)
	}
}

func TestSafeToRestart(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1, 2}))
	b.do(createTopic("single", []int{0}))
	b.do(Command{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: "t",
		Set: map[string]string{ConfigMinInsyncReplicas: "2"}}})
	r, err := b.img.SafeToRestart(0, 1)
	if err != nil || !r.Safe || len(r.Blocking) != 0 || len(r.Reasons) != 1 {
		t.Fatalf("healthy cluster: %+v %v", r, err)
	}
	b.do(alterISR(b.part("t", 0), "t", 0, 1)) // broker 2 fell behind
	if r, _ = b.img.SafeToRestart(0, 1); r.Safe {
		t.Fatalf("restart would leave ISR [1] below 2: %+v", r)
	}
	if r, _ = b.img.SafeToRestart(2, 1); r.Safe || r.Blocking[0].MinInsyncReplicas != 2 {
		t.Fatalf("broker 2 is out of sync: %+v", r)
	}
	if _, err := b.img.SafeToRestart(7, 1); !errors.Is(err, ErrUnknownBroker) {
		t.Fatal(err)
	}
}
