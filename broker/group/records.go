package group

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// recordVersion is written into every record. A reader accepts any version:
// newer writers only add fields, which older readers ignore, and a record
// type an older reader does not know is skipped.
const recordVersion = 1

// Record types. Each record is one JSON object:
//
//	{"v":1,"t":"<type>","g":"<group>","ts":<unix ms>, …type fields}
//
//	join     id                      simple member registered (last seen = ts)
//	seen     id                      member seen at ts (creates a simple member)
//	leave    ids                     members removed (a protocol member's
//	                                 removal starts a rebalance)
//	gen      gen leader members [rb] generation completed: its protocol members
//	         [pt proto as]           (id cid topics st rt seen a [ps ab])
//	                                 replace the previous ones; rb (snapshots
//	                                 only) says a rebalance is pending until
//	                                 that time. In a group whose members
//	                                 assign: pt the protocol type, proto the
//	                                 chosen protocol, each member's protocols
//	                                 ps (n md t); as and ab (snapshots only):
//	                                 the leader's assignment is stored, and
//	                                 each member's bytes of it
//	sync     gen ma                  the leader's assignment of generation gen
//	                                 (id ab a per member), in a group whose
//	                                 members assign
//	assign   topic a                 saved assignment of one topic (simple API)
//	unassign topics                  saved assignments deleted
//	offsets  o                       committed offsets (commit or reset)
//	forget   o                       committed offsets deleted (t p of each;
//	                                 an older reader skips the record and
//	                                 keeps them)
//	config   st strategy             group config replaced
//	delete                           group deleted (offsets, config, state)
const (
	recJoin     = "join"
	recSeen     = "seen"
	recLeave    = "leave"
	recGen      = "gen"
	recSync     = "sync"
	recAssign   = "assign"
	recUnassign = "unassign"
	recOffsets  = "offsets"
	recForget   = "forget"
	recConfig   = "config"
	recDelete   = "delete"
)

// record is the wire form of one change. Durations and times are
// milliseconds, as in Kafka.
type record struct {
	V     int    `json:"v"`
	Type  string `json:"t"`
	Group string `json:"g"`
	TS    int64  `json:"ts"`

	ID  string   `json:"id,omitempty"`
	IDs []string `json:"ids,omitempty"`

	Gen          int32       `json:"gen,omitempty"`
	Leader       string      `json:"leader,omitempty"`
	Members      []genMember `json:"members,omitempty"`
	Rebalance    int64       `json:"rb,omitempty"`
	ProtocolType string      `json:"pt,omitempty"`
	Protocol     string      `json:"proto,omitempty"`
	Assigned     bool        `json:"as,omitempty"`

	MemberAssignments []recMemberAssignment `json:"ma,omitempty"`

	Topic       string        `json:"topic,omitempty"`
	Topics      []string      `json:"topics,omitempty"`
	Assignments []recAssigned `json:"a,omitempty"`

	Offsets []recOffset `json:"o,omitempty"`

	SessionMs int64  `json:"st,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
}

// genMember is a protocol member of a generation.
type genMember struct {
	ID          string      `json:"id"`
	ClientID    string      `json:"cid,omitempty"`
	Topics      []string    `json:"topics,omitempty"`
	SessionMs   int64       `json:"st,omitempty"`
	RebalanceMs int64       `json:"rt,omitempty"`
	Seen        int64       `json:"seen"`
	Assigned    []recTopicP `json:"a,omitempty"`
	// A member that assigns: its protocols and, in a snapshot, the bytes
	// the leader assigned it.
	Protocols []recProtocol `json:"ps,omitempty"`
	Bytes     []byte        `json:"ab,omitempty"`
}

// recProtocol is a protocol a member supports.
type recProtocol struct {
	Name     string   `json:"n"`
	Metadata []byte   `json:"md,omitempty"`
	Topics   []string `json:"t,omitempty"`
}

// recMemberAssignment is the leader's assignment of one member: its bytes
// and the partitions they give.
type recMemberAssignment struct {
	ID     string      `json:"id"`
	Bytes  []byte      `json:"ab,omitempty"`
	Topics []recTopicP `json:"a,omitempty"`
}

// recAssigned is one member's share of a saved assignment.
type recAssigned struct {
	ID     string      `json:"id"`
	Topics []recTopicP `json:"a,omitempty"`
}

// recTopicP is a topic and partitions.
type recTopicP struct {
	Topic      string  `json:"t"`
	Partitions []int32 `json:"p"`
}

// recOffset is one committed offset.
type recOffset struct {
	Topic     string `json:"t"`
	Partition int32  `json:"p"`
	Offset    int64  `json:"o"`
	Metadata  string `json:"md,omitempty"`
}

func encodeRecord(r *record) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		// Only strings, numbers and slices of them: Marshal cannot fail.
		panic(fmt.Sprintf("group: encoding %s record: %v", r.Type, err))
	}
	return b
}

func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	if r.Type == "" || r.Group == "" || len(r.Group) > maxIDLen {
		return nil, fmt.Errorf("%w: missing type or group", ErrInvalidRecord)
	}
	return &r, nil
}

func toMs(t time.Time) int64 { return t.UnixMilli() }

func fromMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func durMs(d time.Duration) int64 { return d.Milliseconds() }

// msDur turns stored milliseconds into a duration, bounded so that a
// damaged record cannot overflow it.
func msDur(ms int64) time.Duration {
	switch {
	case ms <= 0:
		return 0
	case ms > maxTimeout.Milliseconds():
		return maxTimeout
	}
	return time.Duration(ms) * time.Millisecond
}

func toRecTPs(tps []TopicPartitions) []recTopicP {
	out := make([]recTopicP, 0, len(tps))
	for _, tp := range tps {
		out = append(out, recTopicP(tp))
	}
	return out
}

func fromRecTPs(rs []recTopicP) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(rs))
	for _, r := range rs {
		out = append(out, TopicPartitions{Topic: r.Topic, Partitions: append([]int32{}, r.Partitions...)})
	}
	return out
}

func toRecAssigned(as []Assignment) []recAssigned {
	out := make([]recAssigned, 0, len(as))
	for _, a := range as {
		out = append(out, recAssigned{ID: a.MemberID, Topics: toRecTPs(a.Topics)})
	}
	return out
}

func fromRecAssigned(rs []recAssigned) []Assignment {
	out := make([]Assignment, 0, len(rs))
	for _, r := range rs {
		out = append(out, Assignment{MemberID: r.ID, Topics: fromRecTPs(r.Topics)})
	}
	return out
}

func toRecProtocols(ps []Protocol) []recProtocol {
	out := make([]recProtocol, 0, len(ps))
	for _, p := range ps {
		out = append(out, recProtocol{Name: p.Name, Metadata: p.Metadata, Topics: p.Topics})
	}
	return out
}

// fromRecProtocols reads stored protocols, skipping any without a name.
func fromRecProtocols(rs []recProtocol) []Protocol {
	var out []Protocol
	for _, r := range rs {
		if r.Name != "" {
			out = append(out, Protocol{Name: r.Name, Metadata: slices.Clone(r.Metadata), Topics: subscription(r.Topics)})
		}
	}
	return out
}
