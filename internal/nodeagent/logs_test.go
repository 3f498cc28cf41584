package nodeagent

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeLogLines(t *testing.T, path string, start time.Time, lines map[string][]string) {
	t.Helper()
	sink, err := newLogSink(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	i := 0
	sink.now = func() time.Time { i++; return start.Add(time.Duration(i) * time.Second) }
	for _, l := range lines["stdout"] {
		sink.copyFrom(strings.NewReader(l+"\n"), "stdout")
	}
}

func readAll(t *testing.T, path string, opts logOptions) string {
	t.Helper()
	rc, err := openLogs(context.Background(), path, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	writeLogLines(t, path, start, map[string][]string{"stdout": {"one", "two", "three"}})

	if got := readAll(t, path, logOptions{Tail: -1}); got != "one\ntwo\nthree\n" {
		t.Errorf("all = %q", got)
	}
	if got := readAll(t, path, logOptions{Tail: 2}); got != "two\nthree\n" {
		t.Errorf("tail 2 = %q", got)
	}
	if got := readAll(t, path, logOptions{Tail: -1, Since: start.Add(2 * time.Second)}); got != "two\nthree\n" {
		t.Errorf("since = %q", got)
	}
	if got := readAll(t, path, logOptions{Tail: -1, LimitBytes: 5}); got != "one\nt" {
		t.Errorf("limit = %q", got)
	}
	got := readAll(t, path, logOptions{Tail: 1, Timestamps: true})
	if want := "2025-01-02T03:04:08Z three\n"; got != want {
		t.Errorf("timestamps = %q, want %q", got, want)
	}
}

func TestLogsLongLineIsSplitAndJoined(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	long := strings.Repeat("x", maxLogLine+10)
	writeLogLines(t, path, time.Now(), map[string][]string{"stdout": {long}})
	if got := readAll(t, path, logOptions{Tail: -1}); got != long+"\n" {
		t.Errorf("long line came back with %d bytes, want %d", len(got), len(long)+1)
	}
}

func TestLogsFollowEndsWithTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	sink, err := newLogSink(path)
	if err != nil {
		t.Fatal(err)
	}
	running := make(chan struct{})
	rc, err := openLogs(context.Background(), path, logOptions{Tail: -1, Follow: true}, running)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go sink.copyFrom(pr, "stdout")
	_, _ = io.WriteString(pw, "first\n")
	buf := make([]byte, 6)
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("followed read = %q, %v", buf, err)
	}
	_, _ = io.WriteString(pw, "last\n")
	_ = pw.Close()
	time.Sleep(50 * time.Millisecond)
	close(running)
	rest, err := io.ReadAll(rc)
	if err != nil || string(rest) != "last\n" {
		t.Fatalf("rest = %q, %v", rest, err)
	}
	_ = sink.Close()
}
