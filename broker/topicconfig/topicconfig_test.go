package topicconfig

import (
	"errors"
	"maps"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  map[string]string
		want error
	}{
		{map[string]string{}, nil},
		{map[string]string{SegmentBytes: "1048576", SegmentMs: "1000", FlushMessages: "1", FlushMs: "1"}, nil},
		{map[string]string{RetentionMs: "-1", RetentionBytes: "-1"}, nil},
		{map[string]string{RetentionMs: "1", RetentionBytes: "1"}, nil},
		{map[string]string{CleanupPolicy: "delete", UncleanElection: "true", MinInsyncReplicas: "2"}, nil},
		{map[string]string{MaxMessageBytes: "1024", IndexIntervalBytes: "1"}, nil},
		// The values the broker took before the table and must not: each
		// made every batch a segment, or meant the opposite of Kafka.
		{map[string]string{SegmentBytes: "1"}, ErrBadValue},
		{map[string]string{SegmentBytes: "0"}, ErrBadValue},
		{map[string]string{SegmentBytes: "1048575"}, ErrBadValue},
		{map[string]string{SegmentBytes: "2147483648"}, ErrBadValue},
		{map[string]string{SegmentMs: "1"}, ErrBadValue},
		{map[string]string{FlushMessages: "0"}, ErrBadValue},
		{map[string]string{FlushMs: "0"}, ErrBadValue},
		{map[string]string{RetentionMs: "0"}, ErrBadValue},
		{map[string]string{RetentionBytes: "-2"}, ErrBadValue},
		{map[string]string{MaxMessageBytes: "0"}, ErrBadValue},
		{map[string]string{IndexIntervalBytes: "0"}, ErrBadValue},
		{map[string]string{MinInsyncReplicas: "0"}, ErrBadValue},
		{map[string]string{RetentionMs: "7d"}, ErrBadValue},
		{map[string]string{CleanupPolicy: "compact"}, ErrBadValue},
		{map[string]string{UncleanElection: "yes"}, ErrBadValue},
		{map[string]string{"retention.days": "7"}, ErrUnknownKey},
	}
	for _, tt := range tests {
		if err := Validate(tt.cfg); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("Validate(%v) = %v, want %v", tt.cfg, err, tt.want)
		}
	}
}

// TestValidateStored: a stored value is only required to parse, so a
// metadata log written under older bounds replays the same everywhere.
func TestValidateStored(t *testing.T) {
	if err := ValidateStored(map[string]string{SegmentBytes: "1", FlushMs: "0", RetentionMs: "0"}); err != nil {
		t.Errorf("a stored value of older bounds refused: %v", err)
	}
	for _, bad := range []map[string]string{{SegmentBytes: "1GB"}, {CleanupPolicy: "compact"}, {"colour": "blue"}} {
		if err := ValidateStored(bad); err == nil {
			t.Errorf("ValidateStored(%v) accepted it", bad)
		}
	}
}

func TestClamped(t *testing.T) {
	// A positive value below the minimum counts as the minimum; 0 and -1
	// keep what they meant when stored (no limit, never, the default):
	// reading a stored retention.bytes=0 as 1 would delete a partition.
	got := Clamped(map[string]string{SegmentBytes: "1", SegmentMs: "5", RetentionMs: "-1", RetentionBytes: "0",
		FlushMs: "0", IndexIntervalBytes: "0", CleanupPolicy: "delete", MaxMessageBytes: "100", "x": "y", FlushMessages: "bad"})
	want := map[string]string{SegmentBytes: "1048576", SegmentMs: "1000", RetentionMs: "-1", RetentionBytes: "0",
		FlushMs: "0", IndexIntervalBytes: "0", CleanupPolicy: "delete", MaxMessageBytes: "1024", "x": "y"}
	if !maps.Equal(got, want) {
		t.Errorf("Clamped = %v, want %v", got, want)
	}
}

// TestTheTableIsWhole: every key has a default, bounds that hold it, and
// words for the docs; an Int default other than "unset" is within bounds.
func TestTheTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys {
		if seen[k.Name] {
			t.Errorf("%s listed twice", k.Name)
		}
		seen[k.Name] = true
		if k.Doc == "" || k.Default == "" {
			t.Errorf("%s lacks a doc or a default", k.Name)
		}
		switch k.Kind {
		case Int:
			if k.Min > k.Max || k.Min < 0 {
				t.Errorf("%s: bounds %d..%d", k.Name, k.Min, k.Max)
			}
			if k.Default != "unset" {
				if err := k.Check(k.Default); err != nil {
					t.Errorf("%s: default: %v", k.Name, err)
				}
			}
		case Enum:
			if len(k.Values) == 0 || k.Check(k.Default) != nil {
				t.Errorf("%s: default %q not among %v", k.Name, k.Default, k.Values)
			}
		}
	}
}
