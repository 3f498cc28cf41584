package peer

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
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

// TestStreamCallPayloadIsTheFrames: a call served over a stream hands its
// handler the payload where the frame was read (a forwarded produce's
// records), not a copy of the frame's body.
func TestStreamCallPayloadIsTheFrames(t *testing.T) {
	secret := testSecret(t, "stream-call-secret-0123456789abcdef")
	m := NewMux(secret, nil)
	var got []byte
	Handle(m, opPayload, func(_ context.Context, req payloadReq) (batchResp, error) {
		got = req.Records
		return batchResp{}, nil
	})
	s := NewStreamServer(secret, m, nil)
	records := bytes.Repeat([]byte{'r'}, 1<<20)
	msg, err := encodeMessage(&payloadReq{Count: 1, Records: records}, false)
	if err != nil {
		t.Fatal(err)
	}
	body := msg.bytes()
	call := streamCall{kind: frameCall, op: opPayload.name, enc: msg.enc, body: body}
	w := &replyRecorder{header: http.Header{}}
	s.next.ServeHTTP(w, s.request(context.Background(), &serverStream{remote: "127.0.0.1:1"}, call))
	if w.statusCode() != http.StatusOK || !bytes.Equal(got, records) {
		t.Fatalf("reply %d, handler got %d bytes of records", w.statusCode(), len(got))
	}
	if &got[len(got)-1] != &body[len(body)-1] {
		t.Error("the handler's payload is a copy of the call's frame")
	}
}

// releasedReply is a reply whose payload is given back once written.
type releasedReply struct {
	batchResp
	released chan struct{}
}

func (r *releasedReply) ReleasePeerPayload() { close(r.released) }

// TestStreamReplyPayloadReleasedOnceWritten: a reply's payload is given
// back (PayloadReleaser) only once its frame is written to the stream,
// not when the handler returns: until then the frame writer reads it.
func TestStreamReplyPayloadReleasedOnceWritten(t *testing.T) {
	secret := testSecret(t, "stream-release-secret-0123456789abcdef")
	m := NewMux(secret, nil)
	released := make(chan struct{})
	opRelease := NewOp[echoReq, releasedReply]("test/release")
	Handle(m, opRelease, func(context.Context, echoReq) (releasedReply, error) {
		return releasedReply{batchResp: batchResp{Batches: bytes.Repeat([]byte{'b'}, 64<<10)}, released: released}, nil
	})
	s := NewStreamServer(secret, m, nil)
	server, client := net.Pipe()
	defer client.Close()
	st := &serverStream{conn: server, remote: "pipe", out: frameWriter{conn: server}, calls: map[uint64]context.CancelFunc{}}
	msg, err := encodeMessage(&echoReq{Text: "x"}, false)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.dispatch(context.Background(), st, streamCall{kind: frameCall, id: 1, op: opRelease.name, enc: msg.enc, body: msg.bytes()})
	}()
	// The pipe holds the frame until it is read: the payload is still
	// being written.
	select {
	case <-released:
		t.Fatal("the payload was released before its frame was written")
	case <-time.After(100 * time.Millisecond):
	}
	frame, err := readFrame(bufio.NewReader(client), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the payload was not released once its frame was written")
	}
	if !bytes.HasSuffix(frame, bytes.Repeat([]byte{'b'}, 64<<10)) {
		t.Error("the frame does not end in the payload")
	}
}

// takenReply is a reply that takes the buffer its frame was read into.
type takenReply struct {
	batchResp
	release func()
}

func (r *takenReply) TakePeerFrame(release func()) { r.release = release }

// TestStreamReplyFrameGivenBackByItsTaker: a stream reply is read into a
// kept buffer; a reply that takes it (FrameTaker) gives it back when it
// says so, and the next reply frame is read into it.
func TestStreamReplyFrameGivenBackByItsTaker(t *testing.T) {
	// One P: the buffer given back is the one the next Get finds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	secret := testSecret(t, "stream-frame-secret-0123456789abcdef")
	m := NewMux(secret, nil)
	opTaken := NewOp[echoReq, takenReply]("test/taken")
	Handle(m, opTaken, func(_ context.Context, req echoReq) (takenReply, error) {
		return takenReply{batchResp: batchResp{HighWatermark: 1, Batches: bytes.Repeat([]byte(req.Text), 20<<10)}}, nil
	})
	streams := NewStreamServer(secret, m, nil)
	defer streams.Close()
	addr, _ := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	first, err := Call(context.Background(), c, addr, opTaken, echoReq{Text: "a"})
	if err != nil || first.release == nil || len(first.Batches) != 20<<10 {
		t.Fatalf("first reply: %d bytes, release %v, %v", len(first.Batches), first.release != nil, err)
	}
	frame := &first.Batches[0]
	first.release()
	second, err := Call(context.Background(), c, addr, opTaken, echoReq{Text: "b"})
	if err != nil || !bytes.Equal(second.Batches, bytes.Repeat([]byte("b"), 20<<10)) {
		t.Fatalf("second reply: %d bytes, %v", len(second.Batches), err)
	}
	if &second.Batches[0] != frame {
		t.Error("the second reply was not read into the buffer the first gave back")
	}
}
