package core

import (
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/config"
)

// TestLogConfigReadsStoredValuesWithinTheBounds: a topic config stored
// before the table's minimums (segment.bytes=1 made every batch a segment)
// is applied as the minimum; 0 and -1 keep what they meant when stored.
// Before, the storage took segment.bytes=1 as it was.
func TestLogConfigReadsStoredValuesWithinTheBounds(t *testing.T) {
	s := config.DefaultSettings()
	tests := []struct {
		name      string
		overrides map[string]string
		check     func(t *testing.T, segmentBytes int64, segmentMs, retention time.Duration, retentionBytes int64)
	}{
		{"a 1-byte segment is 1 MiB", map[string]string{"segment.bytes": "1", "segment.ms": "1"},
			func(t *testing.T, sb int64, sm, _ time.Duration, _ int64) {
				if sb != 1<<20 || sm != time.Second {
					t.Errorf("segment.bytes %d, segment.ms %v; want 1 MiB and 1s", sb, sm)
				}
			}},
		{"no override: the broker's settings", nil,
			func(t *testing.T, sb int64, sm, r time.Duration, _ int64) {
				if sb != s.LogSegmentBytes || sm != s.LogSegmentMs || r != s.LogRetentionMs {
					t.Errorf("segment.bytes %d, segment.ms %v, retention %v; want the settings'", sb, sm, r)
				}
			}},
		{"0 and -1 keep their meaning: no limit", map[string]string{"retention.ms": "0", "retention.bytes": "0"},
			func(t *testing.T, _ int64, _, r time.Duration, rb int64) {
				if r > 0 || rb > 0 {
					t.Errorf("retention %v, %d bytes; want no limit (a stored 0 never meant keep nothing)", r, rb)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := logConfig(s, tt.overrides)
			tt.check(t, c.SegmentBytes, c.SegmentMs, c.RetentionMs, c.RetentionBytes)
		})
	}
}

// TestLogConfigTakesProducerIDExpiration: the broker's
// producer.id.expiration.ms reaches every partition's storage config,
// whatever the topic overrides; without it a partition would keep the
// storage default of one day.
func TestLogConfigTakesProducerIDExpiration(t *testing.T) {
	s := config.DefaultSettings()
	if got := logConfig(s, nil).ProducerIDExpiration; got != 24*time.Hour {
		t.Fatalf("default producer id expiration %v, want a day", got)
	}
	if unknown, err := s.Apply(map[string]string{"producer.id.expiration.ms": "60000"}); err != nil || len(unknown) > 0 {
		t.Fatalf("apply: unknown %v, %v", unknown, err)
	}
	for _, overrides := range []map[string]string{nil, {"retention.ms": "1000"}} {
		if got := logConfig(s, overrides).ProducerIDExpiration; got != time.Minute {
			t.Fatalf("overrides %v: producer id expiration %v, want 1m", overrides, got)
		}
	}
}

// TestMaxBatchBytesIsTheLogConfigs: the batch limit every produce checks
// is the one the partition's storage config holds, for topics with and
// without max.message.bytes, stored within or outside its bounds.
func TestMaxBatchBytesIsTheLogConfigs(t *testing.T) {
	s := config.DefaultSettings()
	for _, overrides := range []map[string]string{
		nil,
		{"min.insync.replicas": "2", "retention.ms": "1000"},
		{"max.message.bytes": "2048"},
		{"max.message.bytes": "1"}, // below the minimum, stored by an older version
		{"max.message.bytes": "not a number"},
	} {
		if got, want := maxBatchBytes(s, overrides), logConfig(s, overrides).MaxBatchBytes; got != want {
			t.Errorf("overrides %v: max batch %d, the log config's %d", overrides, got, want)
		}
	}
}
