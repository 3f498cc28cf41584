package metadata

// BrokerState is what the admin API reports for a broker.
type BrokerState int

// Broker states, in the order they are checked: a draining broker that
// holds nothing is Drained even when it is fenced (it has stopped), which
// is what scale-down waits for.
const (
	BrokerAlive BrokerState = iota
	BrokerFenced
	BrokerDraining
	BrokerDrained
)

func (s BrokerState) String() string {
	switch s {
	case BrokerAlive:
		return "alive"
	case BrokerFenced:
		return "fenced"
	case BrokerDraining:
		return "draining"
	case BrokerDrained:
		return "drained"
	}
	return "unknown"
}

// BrokerState returns the state of broker id; ok is false when it is not
// registered.
func (img *Image) BrokerState(id int) (state BrokerState, ok bool) {
	b := img.Brokers[id]
	if b == nil {
		return 0, false
	}
	switch {
	case b.Draining && img.ReplicaCount(id) == 0:
		return BrokerDrained, true
	case b.Fenced:
		return BrokerFenced, true
	case b.Draining:
		return BrokerDraining, true
	}
	return BrokerAlive, true
}

// ReplicaCount returns how many replicas broker id holds, counting
// replicas being added or removed by a reassignment.
func (img *Image) ReplicaCount(id int) int {
	n := 0
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.HasReplica(id) {
				n++
			}
		}
	}
	return n
}
