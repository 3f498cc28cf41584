package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseProperties(t *testing.T) {
	in := `# Kafka-style comment
! another comment
num.partitions=3
default.replication.factor : 2
log.segment.bytes 1048576
  indented.key = spaced value  
multi.line=one,\
    two
escaped\=key=a\tb
unicode=\u0041
empty=
`
	props, err := ParseProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"num.partitions":             "3",
		"default.replication.factor": "2",
		"log.segment.bytes":          "1048576",
		"indented.key":               "spaced value",
		"multi.line":                 "one,two",
		"escaped=key":                "a\tb",
		"unicode":                    "A",
		"empty":                      "",
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("%s = %q, want %q", k, props[k], v)
		}
	}
	if len(props) != len(want) {
		t.Errorf("got %d keys %v, want %d", len(props), props, len(want))
	}
}

func TestSettingsApply(t *testing.T) {
	s := DefaultSettings()
	unknown, err := s.Apply(map[string]string{
		"num.partitions":            "6",
		"log.retention.hours":       "1",
		"log.retention.ms":          "5000",
		"group.stale.timeout.ms":    "30000",
		"group.cleanup.interval.ms": "100",
		"some.future.key":           "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.NumPartitions != 6 || s.LogRetentionMs != 5*time.Second || s.GroupStaleTimeout != 30*time.Second ||
		s.GroupCleanupInterval != 100*time.Millisecond {
		t.Errorf("settings not applied: %+v", s)
	}
	if len(unknown) != 1 || unknown[0] != "some.future.key" {
		t.Errorf("unknown = %v", unknown)
	}
	for _, bad := range []map[string]string{
		{"num.partitions": "zero"},
		{"num.partitions": "0"},
		{"unclean.leader.election.enable": "maybe"},
		{"broker.session.timeout.ms": "100", "broker.heartbeat.interval.ms": "200"},
		// The log.* defaults take the topic config table's bounds.
		{"log.segment.bytes": "1024"},
		{"log.roll.ms": "1"},
		{"log.retention.ms": "0"},
		{"log.flush.interval.ms": "0"},
		{"offsets.topic.segment.bytes": "1024"},
	} {
		s := DefaultSettings()
		if _, err := s.Apply(bad); err == nil {
			t.Errorf("Apply(%v) accepted a bad value", bad)
		}
	}
}
