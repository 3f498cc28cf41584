package httpapi

import (
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// Encodings of keys, values and header values in produce bodies and fetch
// replies.
const (
	encodingUTF8   = "utf8"
	encodingBase64 = "base64"
)

// Fetch limits: defaults and the largest values a request may ask for.
const (
	defaultFetchRecords = 500
	maxFetchRecords     = 100_000
	defaultFetchBytes   = 1 << 20
	maxFetchBytes       = 64 << 20
	maxFetchWaitMs      = 30_000
)

func (s *Server) fetch(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	args := api.FetchRequest{
		Topic:      q.str("topic"),
		Partition:  int32(q.int("partition", 0, math.MaxInt32, nil)),
		Offset:     q.int("offset", 0, math.MaxInt64, ptr[int64](-1)),
		MaxRecords: int(q.int("max_records", 1, maxFetchRecords, ptr[int64](defaultFetchRecords))),
		MaxBytes:   int(q.int("max_bytes", 1, maxFetchBytes, ptr[int64](defaultFetchBytes))),
		Wait:       time.Duration(q.int("wait_ms", 0, maxFetchWaitMs, ptr[int64](0))) * time.Millisecond,
	}
	b64 := false
	if enc, ok := q.opt("encoding"); ok {
		switch strings.ToLower(enc) {
		case encodingUTF8, "utf-8", "":
		case encodingBase64:
			b64 = true
		default:
			q.setErr(invalid("query parameter \"encoding\" must be %q or %q, got %q", encodingUTF8, encodingBase64, enc))
		}
	}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	if err := s.authorize(r, args); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.b.Fetch(r.Context(), args)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := getBuf()
	var n int
	*buf, n = appendFetchResponse((*buf)[:0], res, b64)
	s.metrics.fetchedRecs.Add(float64(len(res.Records)))
	s.metrics.fetchedBytes.Add(float64(n))
	writeRaw(w, http.StatusOK, *buf)
	putBuf(buf)
}
