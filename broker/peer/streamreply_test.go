package peer

import (
	"bytes"
	"net/http"
	"runtime"
	"testing"
)

// TestStreamReplyKeepsTheEncodedBody: a reply served over a stream is
// encoded once and goes into the reply frame as it is, its payload (a
// replica fetch's batches) not copied at all.
func TestStreamReplyKeepsTheEncodedBody(t *testing.T) {
	const payload = 1 << 20
	resp := &batchResp{HighWatermark: 7, Batches: bytes.Repeat([]byte{'b'}, payload)}
	const calls = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var w *replyRecorder
	for range calls {
		w = &replyRecorder{header: http.Header{}}
		writeResult(w, resp, false)
	}
	runtime.ReadMemStats(&after)
	if perCall := (after.TotalAlloc - before.TotalAlloc) / calls; perCall > payload/2 {
		t.Errorf("a reply with a payload of %d bytes allocated %d bytes: its body was copied", payload, perCall)
	}
	var got batchResp
	if err := decodeMessage(message{head: w.body, tail: w.tail}.bytes(), encodingOf(w.header.Get("Content-Type")), &got); err != nil {
		t.Fatal(err)
	}
	if w.statusCode() != http.StatusOK || got.HighWatermark != 7 || !bytes.Equal(got.Batches, resp.Batches) {
		t.Errorf("reply = %d, high watermark %d, %d bytes of batches", w.statusCode(), got.HighWatermark, len(got.Batches))
	}
}
