package httpapi_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCompressedTopic: a topic's compression.type decides the codec of
// the batches an HTTP produce stores, changing it affects the next
// produce, and fetches across batches of every codec return the records
// as produced.
func TestCompressedTopic(t *testing.T) {
	dir := t.TempDir()
	n := startSingle(t, nodeOptions{dataDir: dir})
	n.expect(t, "POST", "/topics", `{"name":"zipped","partitions":1,"config":{"compression.type":"gzip"}}`, 201)
	codecs := []struct {
		name string
		bits int16
	}{{"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}, {"uncompressed", 0}, {"producer", 0}}
	var want []string
	for i, c := range codecs {
		if i > 0 {
			n.expect(t, "PATCH", "/topics/zipped/config", fmt.Sprintf(`{"config":{"compression.type":%q}}`, c.name), 200)
		}
		var recs []string
		for j := range 40 {
			v := fmt.Sprintf("%s record %d %s", c.name, j, strings.Repeat("z", 200))
			recs = append(recs, fmt.Sprintf(`{"key":"k%d","value":%q,"headers":{"codec":%q}}`, j, v, c.name))
			want = append(want, v)
		}
		n.expect(t, "POST", "/produce", `{"topic":"zipped","partition":0,"records":[`+strings.Join(recs, ",")+`]}`, 200)
	}
	var got []string
	for off := 0; off < len(want); {
		reply := n.expect(t, "GET", fmt.Sprintf("/fetch?topic=zipped&partition=0&offset=%d&max_records=70", off), "", 200)
		for _, r := range reply["records"].([]any) {
			got = append(got, r.(map[string]any)["message"].(string))
			off++
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fetched %d records, produced %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}

	// On disk: one batch per produce, compressed with the codec in force.
	segs, _ := filepath.Glob(filepath.Join(dir, "zipped-0", "*.log"))
	sort.Strings(segs)
	var data []byte
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	for i, c := range codecs {
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(data); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if kb.Attributes&7 != c.bits || kb.NumRecords != 40 {
			t.Errorf("batch %d (compression.type %s): attributes %#x, %d records", i, c.name, kb.Attributes, kb.NumRecords)
		}
		if c.bits != 0 && len(kb.Records) > 40*200/4 {
			t.Errorf("batch %d (%s): %d bytes of records: not compressed", i, c.name, len(kb.Records))
		}
		data = data[binary.BigEndian.Uint32(data[8:])+12:]
	}
	n.expect(t, "PATCH", "/topics/zipped/config", `{"config":{"compression.type":"brotli"}}`, 400)
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
