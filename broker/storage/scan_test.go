package storage

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// scanFile writes data to a file and returns it open.
func scanFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestBatchScanner(t *testing.T) {
	var data []byte
	var want [][]byte
	for i := int64(0); i < 50; i++ {
		// Some batches are larger than the first chunk.
		r := Record{Value: bytes.Repeat([]byte{byte(i)}, int(i%7)*9000)}
		b, _ := EncodeBatch(nil, i, 0, []Record{r})
		want = append(want, b)
		data = append(data, b...)
	}
	f := scanFile(t, data)
	for _, reuse := range []bool{false, true} {
		sc := newBatchScanner(f, 0, int64(len(data)), minReadChunk, reuse)
		var kept [][]byte
		pos := int64(0)
		for i := 0; ; i++ {
			p, h, b, err := sc.next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("EOF after %d batches", i)
				}
				break
			}
			if err != nil || p != pos || h.BaseOffset != int64(i) || !bytes.Equal(b, want[i]) {
				t.Fatalf("batch %d at %d: %v", i, p, err)
			}
			pos += int64(len(b))
			kept = append(kept, b)
		}
		if !reuse {
			for i, b := range kept {
				if !bytes.Equal(b, want[i]) {
					t.Fatalf("batch %d changed after later reads", i)
				}
			}
		}
	}
}

func TestBatchScannerDamage(t *testing.T) {
	b, _ := EncodeBatch(nil, 0, 0, []Record{rec(0)})
	for name, data := range map[string][]byte{
		"torn header": append(append([]byte(nil), b...), b[:20]...),
		"torn batch":  append(append([]byte(nil), b...), b[:len(b)-1]...),
		"zeros":       append(append([]byte(nil), b...), make([]byte, 100)...),
	} {
		sc := newBatchScanner(scanFile(t, data), 0, int64(len(data)), minReadChunk, true)
		if _, _, _, err := sc.next(); err != nil {
			t.Fatalf("%s: first batch: %v", name, err)
		}
		if _, _, _, err := sc.next(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}
