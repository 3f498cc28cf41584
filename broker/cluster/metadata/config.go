package metadata

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kairolog/kairolog/broker/topicconfig"
)

// Topic config keys with a meaning in the cluster package.
const (
	ConfigMinInsyncReplicas = topicconfig.MinInsyncReplicas
	ConfigUncleanElection   = topicconfig.UncleanElection
)

// ValidateConfig checks a topic config change against the table of topic
// config keys (package topicconfig): known keys, values within their
// bounds. The controller calls it before it proposes a change.
func ValidateConfig(cfg map[string]string) error {
	if err := topicconfig.Validate(cfg); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return nil
}

// validateStoredConfig is what applying a command requires of a topic's
// config: known keys and values that parse. It does not check bounds: an
// entry an older version accepted under other bounds must apply the same
// on every broker, whatever its version.
func validateStoredConfig(cfg map[string]string) error {
	if err := topicconfig.ValidateStored(cfg); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return nil
}

// UncleanElection reports whether the topic lets an out-of-sync replica
// become leader when no ISR member is live. The broker-wide default is
// false, as in Kafka; only a topic override turns it on, so every broker
// applying the metadata log decides alike.
func UncleanElection(t *Topic) bool { return t.Config[ConfigUncleanElection] == "true" }

// MinInsyncReplicas returns the topic's min.insync.replicas, or def when
// the topic does not override it.
func MinInsyncReplicas(t *Topic, def int) int {
	if v, ok := t.Config[ConfigMinInsyncReplicas]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// ValidateTopicName applies Kafka's rule: 1–249 characters of
// [a-zA-Z0-9._-], not "." or "..". Names starting with "__" are reserved
// for internal topics.
func ValidateTopicName(name string, internal bool) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidTopic, name)
	}
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%w: %q has character %q", ErrInvalidTopic, name, r)
		}
	}
	if strings.HasPrefix(name, "__") && !internal {
		return fmt.Errorf("%w: %q: names starting with __ are reserved for internal topics", ErrInvalidTopic, name)
	}
	return nil
}
