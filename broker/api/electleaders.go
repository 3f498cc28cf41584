package api

// Moving leaderships back to preferred replicas on request (Kafka's
// ElectLeaders with the preferred election type): the first replica of a
// partition leads it again when it is alive and in sync. The controller
// also does so on its own unless auto.leader.rebalance.enable is off.

// LeaderElection is one partition's answer to a preferred-leader
// election: its leader afterwards, or the code saying why its preferred
// replica does not lead through this election (ELECTION_NOT_NEEDED: it
// already did; PREFERRED_LEADER_NOT_AVAILABLE; UNKNOWN_TOPIC,
// UNKNOWN_PARTITION), with the leader it has when there is one.
type LeaderElection struct {
	// Topic is the partition's topic; over HTTP the request names it.
	Topic     string `json:"-"`
	Partition int32  `json:"partition"`
	Leader    *int32 `json:"leader,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}
