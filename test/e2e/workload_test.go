package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// The broker's HTTP API as curl would use it: JSON bodies, JSON replies.

// apiError is a reply that was not 2xx.
type apiError struct {
	Status int
	Code   string `json:"code"`
	Msg    string `json:"error"`
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Msg) }

func httpGet(u string) ([]byte, error) { return httpDo(http.MethodGet, u, "", clientFor(u)) }

func httpGetTimeout(u string, timeout time.Duration) ([]byte, error) {
	return httpDo(http.MethodGet, u, "", &http.Client{Timeout: timeout, Transport: clientFor(u).Transport})
}

func httpPost(u, body string) ([]byte, error) { return httpDo(http.MethodPost, u, body, clientFor(u)) }

// tlsClients are the clients of the HTTPS port-forwards by local address
// ("localhost:<port>"): each trusts its cluster's CA. A base URL carries
// its user's name and password (https://user:password@localhost:<port>),
// which net/http sends as HTTP Basic.
var (
	tlsClientsMu sync.Mutex
	tlsClients   = map[string]*http.Client{}
)

// clientFor is the client for u: the one registered for its host, else
// httpClient.
func clientFor(u string) *http.Client {
	parsed, err := url.Parse(u)
	if err != nil {
		return httpClient
	}
	tlsClientsMu.Lock()
	defer tlsClientsMu.Unlock()
	if c, ok := tlsClients[parsed.Host]; ok {
		return c
	}
	return httpClient
}

func httpDo(method, u, body string, c *http.Client) ([]byte, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(b, e) != nil || e.Msg == "" {
			e.Msg = strings.TrimSpace(string(b))
		}
		return b, e
	}
	return b, nil
}

func getJSON(u string, into any) error {
	b, err := httpGet(u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

type produceReply struct {
	Status    string `json:"status"`
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition"`
	Offset    *int64 `json:"offset"`
}

type fetchedRecord struct {
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
	Key     string `json:"key"`
}

type fetchReply struct {
	Records        []fetchedRecord `json:"records"`
	HighWatermark  int64           `json:"high_watermark"`
	LogStartOffset int64           `json:"log_start_offset"`
	NextOffset     int64           `json:"next_offset"`
}

func fetch(base, topic string, partition int32, offset int64, maxRecords int) (*fetchReply, error) {
	q := url.Values{"topic": {topic}, "partition": {fmt.Sprint(partition)},
		"max_records": {fmt.Sprint(maxRecords)}, "max_bytes": {fmt.Sprint(8 << 20)}}
	if offset >= 0 { // otherwise from the log start
		q.Set("offset", fmt.Sprint(offset))
	}
	var r fetchReply
	if err := getJSON(base+"/fetch?"+q.Encode(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// topicDescription is GET /topics/{name}.
type topicDescription struct {
	Name       string `json:"name"`
	Partitions []struct {
		Partition     int32   `json:"partition"`
		Leader        int32   `json:"leader"`
		Replicas      []int32 `json:"replicas"`
		ISR           []int32 `json:"isr"`
		HighWatermark int64   `json:"high_watermark"`
	} `json:"partitions"`
}

// ackedRecord is a record the cluster acknowledged with acks=all: a 200
// reply naming its partition and offset.
type ackedRecord struct {
	Value     string
	Partition int32
	Offset    int64
	At        time.Time
}

// producer sends records with acks=all through one address, one request
// at a time, each with a value no other request has. It keeps going
// through errors (a retry is a new record with a new value, so a request
// that failed but was stored anyway can never be mistaken for an
// acknowledged one). Only 200 replies count as acknowledged.
type producer struct {
	base, topic, prefix string

	mu       sync.Mutex
	acked    []ackedRecord
	failures map[string]int
	firstErr map[string]string
	lastErr  time.Time

	cancel context.CancelFunc
	done   chan struct{}
}

func startProducer(base, topic, prefix string) *producer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &producer{base: base, topic: topic, prefix: prefix, failures: map[string]int{},
		firstErr: map[string]string{}, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	onCleanup(p.Stop)
	return p
}

func (p *producer) run(ctx context.Context) {
	defer close(p.done)
	client := &http.Client{Timeout: 15 * time.Second, Transport: clientFor(p.base).Transport}
	for seq := 0; ctx.Err() == nil; seq++ {
		value := fmt.Sprintf("%s-%06d", p.prefix, seq)
		body := fmt.Sprintf(`{"topic":%q,"key":%q,"value":%q,"acks":"all","timeout_ms":10000}`, p.topic, value, value)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/produce", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		var reply produceReply
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case rerr != nil:
				err = rerr
			case resp.StatusCode != http.StatusOK:
				e := &apiError{Status: resp.StatusCode}
				_ = json.Unmarshal(b, e)
				err = e
			default:
				if jerr := json.Unmarshal(b, &reply); jerr != nil || reply.Partition == nil || reply.Offset == nil {
					err = fmt.Errorf("200 reply without partition and offset: %s", b)
				}
			}
		}
		if ctx.Err() != nil {
			return // a reply cut short by Stop is neither acknowledged nor a failure
		}
		p.mu.Lock()
		if err == nil {
			p.acked = append(p.acked, ackedRecord{Value: value, Partition: *reply.Partition, Offset: *reply.Offset, At: time.Now()})
		} else {
			class := errClass(err)
			p.failures[class]++
			if _, ok := p.firstErr[class]; !ok {
				p.firstErr[class] = err.Error()
			}
			p.lastErr = time.Now()
		}
		p.mu.Unlock()
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// errClass groups failures for the report: the API code, or the kind of
// transport error.
func errClass(err error) string {
	var e *apiError
	if errors.As(err, &e) {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	msg := err.Error()
	for _, k := range []string{"connection refused", "connection reset", "EOF", "Timeout", "timeout"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	return msg
}

// Stop stops the producer and waits for its last request.
func (p *producer) Stop() {
	p.cancel()
	<-p.done
}

// Acked returns a copy of the acknowledged records so far.
func (p *producer) Acked() []ackedRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ackedRecord(nil), p.acked...)
}

// AckedSince counts the records acknowledged after t.
func (p *producer) AckedSince(t time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.acked {
		if a.At.After(t) {
			n++
		}
	}
	return n
}

// Summary says what was acknowledged and what failed, for the log.
func (p *producer) Summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d acknowledged", len(p.acked))
	classes := make([]string, 0, len(p.failures))
	for c := range p.failures {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		fmt.Fprintf(&b, "; %d × %s (first: %s)", p.failures[c], c, p.firstErr[c])
	}
	return b.String()
}

// readPartitions fetches every partition of a topic from its log start to
// its high watermark: offset → value per partition.
func readPartitions(base, topic string, partitions int32) (map[int32]map[int64]string, error) {
	out := map[int32]map[int64]string{}
	for p := range partitions {
		records := map[int64]string{}
		first, err := fetch(base, topic, p, -1, 1)
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", p, err)
		}
		offset, hw := first.LogStartOffset, first.HighWatermark
		for offset < hw {
			r, err := fetch(base, topic, p, offset, 10000)
			if err != nil {
				return nil, fmt.Errorf("partition %d at %d: %w", p, offset, err)
			}
			if len(r.Records) == 0 {
				return nil, fmt.Errorf("partition %d: no records at %d below the high watermark %d", p, offset, hw)
			}
			for _, rec := range r.Records {
				records[rec.Offset] = rec.Message
			}
			offset = r.NextOffset
		}
		out[p] = records
	}
	return out, nil
}

// uniqueValue matches the values of the suite's producers ("s6-000123"),
// each sent once; the docs' examples (two records of "hello") are not.
var uniqueValue = regexp.MustCompile(`^s[0-9]+-[0-9]+$`)

// checkAcked reads the whole topic back and checks that every acknowledged
// value is there exactly once, at the partition and offset it was
// acknowledged with (a producer's value, exactly once). It returns how many
// records the topic holds.
func checkAcked(base, topic string, partitions int32, acked []ackedRecord) (int, error) {
	logs, err := readPartitions(base, topic, partitions)
	if err != nil {
		return 0, err
	}
	where := map[string][]string{}
	total := 0
	for p, recs := range logs {
		for o, v := range recs {
			where[v] = append(where[v], fmt.Sprintf("%d@%d", p, o))
			total++
		}
	}
	var problems []string
	ackedValue := map[string]bool{}
	for _, a := range acked {
		ackedValue[a.Value] = true
		got := logs[a.Partition][a.Offset]
		if got != a.Value {
			problems = append(problems, fmt.Sprintf("%s acknowledged at %d@%d, found %q there (value at %v)",
				a.Value, a.Partition, a.Offset, got, where[a.Value]))
			continue
		}
		if n := len(where[a.Value]); n != 1 && uniqueValue.MatchString(a.Value) {
			problems = append(problems, fmt.Sprintf("%s acknowledged at %d@%d is stored %d times: %v",
				a.Value, a.Partition, a.Offset, n, where[a.Value]))
		}
	}
	// The producers never send a value twice, so none of theirs may be
	// stored twice, acknowledged or not.
	for v, at := range where {
		if len(at) > 1 && !ackedValue[v] && uniqueValue.MatchString(v) {
			problems = append(problems, fmt.Sprintf("%s (not acknowledged) is stored %d times: %v", v, len(at), at))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
		}
		return total, fmt.Errorf("%d of %d acknowledged records are not where they were acknowledged:\n  %s",
			len(problems), len(acked), strings.Join(problems, "\n  "))
	}
	return total, nil
}
