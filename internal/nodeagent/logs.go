package nodeagent

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"time"
)

// Container logs are kept in the CRI logging format the kubelet reads
// ("<RFC3339Nano> <stream> <F|P> <text>"), one file per container run, so
// that `kubectl logs` can offer --timestamps, --since, --tail and --previous.
const (
	logTimeFormat = time.RFC3339Nano
	maxLogLine    = 16 * 1024 // longer lines are split into partial records
)

// logSink writes a container run's stdout and stderr to its log file.
type logSink struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
}

func newLogSink(path string) (*logSink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return &logSink{f: f, now: time.Now}, nil
}

// copyFrom records every line read from r as coming from stream ("stdout" or
// "stderr") until r ends.
func (s *logSink) copyFrom(r io.Reader, stream string) {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			tag := "F"
			if isPrefix {
				tag = "P"
			}
			s.write(stream, tag, line)
		}
		if err != nil {
			return
		}
	}
}

func (s *logSink) write(stream, tag string, line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(s.now().UTC().Format(logTimeFormat))
	b.WriteByte(' ')
	b.WriteString(stream)
	b.WriteByte(' ')
	b.WriteString(tag)
	b.WriteByte(' ')
	b.Write(line)
	b.WriteByte('\n')
	_, _ = s.f.Write(b.Bytes())
}

func (s *logSink) Close() error { return s.f.Close() }

// logOptions are the `kubectl logs` options this node honours.
type logOptions struct {
	Tail       int // lines; <0 means all
	LimitBytes int
	Timestamps bool
	Follow     bool
	Since      time.Time
}

// logRecord is one parsed CRI log line.
type logRecord struct {
	ts      time.Time
	tsText  string
	partial bool
	msg     []byte
}

func parseLogRecord(line []byte) (logRecord, bool) {
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return logRecord{}, false
	}
	_, rest, ok = bytes.Cut(rest, []byte{' '}) // stream
	if !ok {
		return logRecord{}, false
	}
	tag, msg, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return logRecord{}, false
	}
	t, err := time.Parse(logTimeFormat, string(ts))
	if err != nil {
		return logRecord{}, false
	}
	return logRecord{ts: t, tsText: string(ts), partial: string(tag) == "P", msg: msg}, true
}

// format renders a record as kubectl shows it.
func (r logRecord) format(timestamps bool) []byte {
	var b bytes.Buffer
	if timestamps {
		b.WriteString(r.tsText)
		b.WriteByte(' ')
	}
	b.Write(r.msg)
	if !r.partial {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// openLogs streams the log file at path as `kubectl logs` shows it. With
// Follow it keeps reading until running is closed (the container run ended)
// or ctx ends.
func openLogs(ctx context.Context, path string, opts logOptions, running <-chan struct{}) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer f.Close()
		w := &limitedWriter{w: pw, left: opts.LimitBytes}
		err := streamLogs(ctx, f, w, opts, running)
		_ = pw.CloseWithError(err)
	}()
	return pr, nil
}

func streamLogs(ctx context.Context, f *os.File, w io.Writer, opts logOptions, running <-chan struct{}) error {
	br := bufio.NewReader(f)
	var backlog [][]byte
	emit := func(line []byte) error {
		rec, ok := parseLogRecord(bytes.TrimRight(line, "\n"))
		if !ok || (!opts.Since.IsZero() && rec.ts.Before(opts.Since)) {
			return nil
		}
		_, err := w.Write(rec.format(opts.Timestamps))
		return err
	}
	// What is already on disk, cut to the last Tail records.
	var pending []byte
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			pending = line
			break
		}
		if err != nil {
			return err
		}
		backlog = append(backlog, line)
	}
	if opts.Tail >= 0 && len(backlog) > opts.Tail {
		backlog = backlog[len(backlog)-opts.Tail:]
	}
	for _, line := range backlog {
		if err := emit(line); err != nil {
			return err
		}
	}
	if !opts.Follow {
		return nil
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	finished := false
	for {
		line, err := br.ReadBytes('\n')
		pending = append(pending, line...)
		if err == nil {
			if err := emit(pending); err != nil {
				return err
			}
			pending = nil
			continue
		}
		if err != io.EOF {
			return err
		}
		if finished {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-running:
			// Read once more: the last lines may have landed just before the exit.
			finished = true
		case <-tick.C:
		}
	}
}

// limitedWriter stops the stream after LimitBytes, as the kubelet does.
type limitedWriter struct {
	w    io.Writer
	left int // <=0 means unlimited
	used int
}

var errLimitReached = io.EOF

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		return l.w.Write(p)
	}
	room := l.left - l.used
	if room <= 0 {
		return 0, errLimitReached
	}
	if len(p) > room {
		n, err := l.w.Write(p[:room])
		l.used += n
		if err == nil {
			err = errLimitReached
		}
		return n, err
	}
	n, err := l.w.Write(p)
	l.used += n
	return n, err
}
