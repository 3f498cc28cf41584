package peer

import (
	"encoding/binary"
	"testing"
)

// FuzzDecodeFrame feeds arbitrary reply bodies to the frame decoder: a
// reply from a peer is never trusted to be well formed, so it must fail
// with an error, never panic or read past the body.
func FuzzDecodeFrame(f *testing.F) {
	good := func(json string, payload string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(json)))
		return append(append(b, json...), payload...)
	}
	f.Add(good(`{"high_watermark":42}`, "\x00\x01batches"))
	f.Add(good(`{}`, ""))
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, '{', '}'})
	f.Add(good(`{"high_watermark":"x"}`, ""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r batchResp
		if err := decodeFrame(raw, &r); err == nil {
			n := binary.BigEndian.Uint32(raw)
			if want := raw[4+n:]; string(r.Batches) != string(want) {
				t.Fatalf("payload %q, want %q", r.Batches, want)
			}
		}
	})
}
