//go:build ignore

// gen writes the partition directories of this fixture with the storage
// package as it was before batches became Kafka's RecordBatch v2 (46-byte
// headers without magic, producer id, producer epoch or base sequence),
// and expected.json: every record, offset range and leader epoch that code
// reads back from them after reopening. It produced the committed files
// when run from the repository root at the commit that added it (the last
// one writing format 1); run at a later commit it would write v2 batches:
//
//	go run ./broker/storage/testdata/format-v1/gen.go
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

const out = "broker/storage/testdata/format-v1"

type header struct {
	Key   string  `json:"key"`
	Value *[]byte `json:"value"`
}

type record struct {
	Offset    int64    `json:"offset"`
	Timestamp int64    `json:"timestamp"`
	Key       *[]byte  `json:"key"`
	Value     *[]byte  `json:"value"`
	Headers   []header `json:"headers,omitempty"`
}

type partition struct {
	LogStartOffset int64      `json:"log_start_offset"`
	LogEndOffset   int64      `json:"log_end_offset"`
	LatestEpoch    int32      `json:"latest_epoch"`
	Epochs         [][2]int64 `json:"epochs"` // epoch, its end offset as EndOffsetForEpoch answers
	Records        []record   `json:"records"`
}

func ptr(b []byte) *[]byte {
	if b == nil {
		return nil
	}
	return &b
}

// recordAt is the record written at offset off: keys, nil keys and empty
// keys, null values (tombstones), empty and large values, headers with nil
// and empty values, timestamps that go backwards within a batch.
func recordAt(off int64) storage.Record {
	r := storage.Record{
		Timestamp: 1_700_000_000_000 + off*1000 - (off%4)*1500,
		Key:       []byte(fmt.Sprintf("key-%d", off)),
		Value:     bytes.Repeat([]byte{byte('a' + off%26)}, int(10+off%90)),
	}
	switch {
	case off%11 == 0:
		r.Key = nil
	case off%13 == 0:
		r.Key = []byte{}
	}
	switch {
	case off%17 == 0:
		r.Value = nil
	case off%19 == 0:
		r.Value = []byte{}
	case off%23 == 0:
		r.Value = bytes.Repeat([]byte{0xff, 0x00}, 700)
	}
	if off%3 == 0 {
		r.Headers = []storage.Header{{Key: "trace", Value: []byte(fmt.Sprint(off))}, {Key: "nil"}, {Key: "empty", Value: []byte{}}}
	}
	return r
}

func write(dir string, cfg storage.Config, epochs []int32, perEpoch int, batch int) *storage.Log {
	l, err := storage.Open(dir, cfg)
	if err != nil {
		log.Fatal(err)
	}
	off := int64(0)
	for _, e := range epochs {
		for i := 0; i < perEpoch; {
			n := min(batch-(i%batch), perEpoch-i)
			n = max(1, n-(i%3))
			recs := make([]storage.Record, n)
			for j := range recs {
				recs[j] = recordAt(off + int64(j))
			}
			base, last, err := l.Append(recs, e)
			if err != nil {
				log.Fatal(err)
			}
			if base != off || last != off+int64(n)-1 {
				log.Fatalf("append at %d: %d-%d", off, base, last)
			}
			off += int64(n)
			i += n
		}
	}
	return l
}

// expect reopens a copy of dir with this code and reads everything back.
func expect(dir string, cfg storage.Config) partition {
	tmp, err := os.MkdirTemp("", "format-v1-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, filepath.Base(dir))
	if err := exec.Command("cp", "-a", dir, cp).Run(); err != nil {
		log.Fatal(err)
	}
	l, err := storage.Open(cp, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	p := partition{LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(), LatestEpoch: l.LatestEpoch()}
	for e := int32(0); e <= l.LatestEpoch(); e++ {
		found, end := l.EndOffsetForEpoch(e)
		if found == e {
			p.Epochs = append(p.Epochs, [2]int64{int64(e), end})
		}
	}
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		recs, err := l.Read(off, -1, 1<<20, 0)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range recs {
			rec := record{Offset: r.Offset, Timestamp: r.Timestamp, Key: ptr(r.Key), Value: ptr(r.Value)}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, header{Key: h.Key, Value: ptr(h.Value)})
			}
			p.Records = append(p.Records, rec)
		}
		off = recs[len(recs)-1].Offset + 1
	}
	return p
}

func main() {
	if err := os.RemoveAll(filepath.Join(out, "data")); err != nil {
		log.Fatal(err)
	}
	cfg := storage.DefaultConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.IndexIntervalBytes = 1024
	cfg.RetentionMs = -1
	cfg.SegmentMs = 0
	_ = time.Now

	// clean-0: three leader epochs over several segments, records below
	// 40 deleted (log start offset 40), closed cleanly.
	clean := filepath.Join(out, "data", "clean-0")
	l := write(clean, cfg, []int32{0, 2, 5}, 70, 7)
	if err := l.DeleteRecordsBefore(40); err != nil {
		log.Fatal(err)
	}
	if err := l.Close(); err != nil {
		log.Fatal(err)
	}

	// crashed-0: abandoned without Close (no clean-shutdown marker, the
	// active segment's indexes never written) and a torn batch at the end.
	crashed := filepath.Join(out, "data", "crashed-0")
	l = write(crashed, cfg, []int32{1, 3}, 60, 5)
	if err := l.Flush(); err != nil {
		log.Fatal(err)
	}
	tail, err := storage.EncodeBatch(nil, l.LogEndOffset(), 3, []storage.Record{recordAt(999), recordAt(1000)})
	if err != nil {
		log.Fatal(err)
	}
	// Exit without Close: the process "crashes" here. The torn batch is
	// half of a batch appended behind the log's back.
	segs, _ := filepath.Glob(filepath.Join(crashed, "*.log"))
	active := segs[len(segs)-1]
	f, err := os.OpenFile(active, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Write(tail[:len(tail)/2]); err != nil {
		log.Fatal(err)
	}
	f.Close()
	for _, suffix := range []string{".index", ".timeindex"} {
		os.Remove(active[:len(active)-len(".log")] + suffix)
	}

	// empty-0: opened and closed, never written.
	empty := filepath.Join(out, "data", "empty-0")
	l, err = storage.Open(empty, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Close(); err != nil {
		log.Fatal(err)
	}

	want := map[string]partition{}
	for _, d := range []string{clean, crashed, empty} {
		want[filepath.Base(d)] = expect(d, cfg)
	}
	b, err := json.MarshalIndent(want, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "expected.json"), append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}
