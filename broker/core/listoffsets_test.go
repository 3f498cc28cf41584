package core

import (
	"errors"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/replica"
)

// A leader whose high watermark has not reached the start of its epoch
// answers the latest offset OFFSET_NOT_AVAILABLE, a retriable 503; once
// it has, the high watermark.
func TestLatestOffsetWaitsForTheNewLeadersHighWatermark(t *testing.T) {
	_, err := latestOffset(replica.Offsets{HighWatermark: 3, EpochStartOffset: 5, LeaderEpoch: 2})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeOffsetNotAvailable || !ae.Retriable() {
		t.Fatalf("high watermark 3 below the epoch's start 5: %v, want a retriable %s", err, api.CodeOffsetNotAvailable)
	}
	for _, o := range []replica.Offsets{{HighWatermark: 5, EpochStartOffset: 5}, {HighWatermark: 9, EpochStartOffset: 5}} {
		if got, err := latestOffset(o); err != nil || got != o.HighWatermark {
			t.Errorf("%+v: %d, %v; want the high watermark", o, got, err)
		}
	}
}
