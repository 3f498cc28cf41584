package group

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxIDLen bounds group, member, client and topic names taken from clients.
const maxIDLen = 255

// Member is a member as the original API lists it (GET /groups/members:
// id, last_seen).
type Member struct {
	ID       string
	LastSeen time.Time
}

// member is the coordinator's record of one member.
type member struct {
	id string
	// protocol: joined through JoinGroup and part of the generation
	// (persisted by the generation record). A simple member has only id
	// and lastSeen.
	protocol bool
	// transient: created by a JoinGroup that has not completed yet; it is
	// in no journal record and disappears if that join is abandoned.
	transient        bool
	clientID         string
	topics           []string // sorted subscription
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	lastSeen         time.Time
	journaledSeen    time.Time // last seen time the journal holds
	assignment       []TopicPartitions
	// protocolType and protocols, for a member that assigns (a Kafka
	// consumer): its protocol type and the protocols it supports,
	// preferred first. Empty for a member the coordinator assigns.
	protocolType string
	protocols    []Protocol
	// memberAssignment is the bytes the leader assigned the member in the
	// current generation (assignment is what they give).
	memberAssignment []byte
}

func (m *member) public() Member { return Member{ID: m.id, LastSeen: m.lastSeen} }

// cleanName trims a client-supplied name and checks it is usable.
func cleanName(what, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("%w: %s must not be empty", ErrInvalidArgument, what)
	case len(s) > maxIDLen:
		return "", fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidArgument, what, maxIDLen)
	}
	return s, nil
}

// cleanGroupMember trims and validates a group id and a member id.
func cleanGroupMember(groupID, memberID string) (string, string, error) {
	g, err := cleanName("group", groupID)
	if err != nil {
		return "", "", err
	}
	m, err := cleanName("member_id", memberID)
	if err != nil {
		return "", "", err
	}
	return g, m, nil
}

// cleanTopics trims, validates, sorts and de-duplicates a subscription.
func cleanTopics(topics []string) ([]string, error) {
	if len(topics) == 0 {
		return nil, fmt.Errorf("%w: topics must not be empty", ErrInvalidArgument)
	}
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		t, err := cleanName("topic", t)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// newMemberID makes a member id as Kafka does: the client id (or "member")
// and a random suffix.
func newMemberID(clientID string) string {
	prefix := strings.TrimSpace(clientID)
	if prefix == "" || len(prefix) > 64 {
		prefix = "member"
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + "-" + hex.EncodeToString(b[:])
}

// cleanTimeout checks a client-supplied timeout; zero means "use the default".
func cleanTimeout(what string, d time.Duration) error {
	if d < 0 || d > maxTimeout {
		return fmt.Errorf("%w: %s must be between 0 and %s", ErrInvalidArgument, what, maxTimeout)
	}
	return nil
}

// maxTimeout bounds session and rebalance timeouts.
const maxTimeout = 24 * time.Hour
