package metadata

import (
	"fmt"
	"strconv"
	"strings"
)

// Topic config keys with a meaning in the cluster package.
const (
	ConfigMinInsyncReplicas = "min.insync.replicas"
	ConfigUncleanElection   = "unclean.leader.election.enable"
)

// topicConfigKeys are the topic overrides docs/api.md allows, each with
// the smallest integer it accepts (or a validator of its own).
var topicConfigKeys = map[string]func(string) error{
	"retention.ms":          minInt(-1),
	"retention.bytes":       minInt(-1),
	"segment.bytes":         minInt(1),
	"segment.ms":            minInt(1),
	"cleanup.policy":        oneOf("delete"),
	ConfigMinInsyncReplicas: minInt(1),
	ConfigUncleanElection:   oneOf("true", "false"),
	"flush.messages":        minInt(1),
	"flush.ms":              minInt(0),
	"max.message.bytes":     minInt(0),
	"index.interval.bytes":  minInt(0),
}

// ValidateConfig checks topic overrides: known keys, well-formed values.
func ValidateConfig(cfg map[string]string) error {
	for k, v := range cfg {
		check, ok := topicConfigKeys[k]
		if !ok {
			return fmt.Errorf("%w: unknown key %q", ErrInvalidConfig, k)
		}
		if err := check(v); err != nil {
			return fmt.Errorf("%w: %s=%q: %v", ErrInvalidConfig, k, v, err)
		}
	}
	return nil
}

func minInt(lo int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		if n < lo {
			return fmt.Errorf("below %d", lo)
		}
		return nil
	}
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(allowed, ", "))
	}
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
