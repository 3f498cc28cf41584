package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// sameRecords reports the first way got differs from records
// [from, from+len(got)).
func sameRecords(got []Record, from int64) error {
	for i, r := range got {
		w := rec(from + int64(i))
		if r.Offset != from+int64(i) || r.Timestamp != w.Timestamp || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
			return fmt.Errorf("record %d of a read from %d is %+v", i, from, r)
		}
	}
	return nil
}

// TestConcurrentReadersAndWriter runs tail, random and raw readers against
// one writer that rolls segments and, in the second run, deletes old ones.
// Readers must only ever see whole, correct records. Run with -race.
func TestConcurrentReadersAndWriter(t *testing.T) {
	for _, deleting := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleting=%v", deleting), func(t *testing.T) {
			l := mustOpen(t, t.TempDir(), smallConfig())
			defer l.Close()
			const total = 2000
			done := make(chan struct{})
			errs := make(chan error, 8)
			var wg sync.WaitGroup
			for r := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- reader(l, int64(r), done)
				}()
			}
			for off := int64(0); off < total; {
				n := 1 + off%7
				var batch []Record
				for i := off; i < min(off+n, total); i++ {
					batch = append(batch, rec(i))
				}
				if _, _, err := l.Append(batch, 0); err != nil {
					t.Fatal(err)
				}
				off += int64(len(batch))
				if deleting && off%100 < 7 {
					if err := l.DeleteRecordsBefore(off - 150); err != nil && off > 150 {
						t.Fatal(err)
					}
				}
			}
			close(done)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func reader(l *Log, seed int64, done <-chan struct{}) error {
	rng := rand.New(rand.NewSource(seed))
	var next int64
	for {
		select {
		case <-done:
			return nil
		default:
		}
		// Tail reader: follows the log end.
		got, err := l.Read(next, -1, 2048, 0)
		var oor *OffsetOutOfRangeError
		switch {
		case errors.As(err, &oor) && oor.LogStartOffset > next:
			next = oor.LogStartOffset
			continue
		case err != nil:
			return fmt.Errorf("tail Read(%d): %w", next, err)
		}
		if err := sameRecords(got, next); err != nil {
			return err
		}
		next += int64(len(got))
		// Random reader.
		if end := l.LogEndOffset(); end > 0 {
			off := rng.Int63n(end)
			got, err := l.Read(off, -1, 0, 20)
			if errors.As(err, &oor) && off < oor.LogStartOffset {
				continue
			}
			if err != nil {
				return fmt.Errorf("Read(%d): %w", off, err)
			}
			if err := sameRecords(got, off); err != nil {
				return err
			}
			raw, err := l.ReadRaw(off, -1, 1024)
			if errors.As(err, &oor) && off < oor.LogStartOffset {
				continue
			}
			if err != nil {
				return fmt.Errorf("ReadRaw(%d): %w", off, err)
			}
			for p := 0; p < len(raw); {
				h, recs, err := DecodeBatch(raw[p:])
				if err != nil {
					return fmt.Errorf("ReadRaw(%d) batch at %d: %w", off, p, err)
				}
				if err := sameRecords(recs, h.BaseOffset); err != nil {
					return err
				}
				p += h.Size()
			}
			if _, err := l.OffsetForTimestamp(rec(off).Timestamp); err != nil {
				return err
			}
		}
	}
}
