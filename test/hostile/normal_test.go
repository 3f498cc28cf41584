package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// normalInterval is how often the normal producer sends a record.
const normalInterval = 100 * time.Millisecond

// normalRetryFor bounds how long one normal record may take to be stored,
// retrying 503s as their Retry-After says.
const normalRetryFor = 20 * time.Second

// normalProducer produces one small record at a time to orders-0, as a
// well-behaved client does: a 503 is retried after its Retry-After, any
// other failure stops it.
type normalProducer struct {
	base    string
	stored  []string
	retried int
	slowest time.Duration
	// longestGap is the longest time without a record stored, from the
	// start of the attack to its end.
	longestGap time.Duration
	err        error
}

func (p *normalProducer) run(ctx context.Context) {
	hc := &http.Client{Timeout: 30 * time.Second}
	last := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		msg := fmt.Sprintf("normal-%d", i)
		start := time.Now()
		if err := p.produce(hc, msg); err != nil {
			p.err = err
			return
		}
		p.stored = append(p.stored, msg)
		p.slowest = max(p.slowest, time.Since(start))
		p.longestGap = max(p.longestGap, time.Since(last))
		last = time.Now()
		sleep(ctx, normalInterval)
	}
	p.longestGap = max(p.longestGap, time.Since(last))
}

// produce stores one record, retrying 503s for up to normalRetryFor.
func (p *normalProducer) produce(hc *http.Client, msg string) error {
	body := `{"topic":"orders","partition":0,"message":"` + msg + `"}`
	deadline := time.Now().Add(normalRetryFor)
	for {
		resp, err := hc.Post(p.base+"/produce", "application/json", strings.NewReader(body))
		if err != nil {
			return fmt.Errorf("%s: %w", msg, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == 200:
			return nil
		case resp.StatusCode == 503 && time.Now().Before(deadline):
			p.retried++
			wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || wait <= 0 {
				return fmt.Errorf("%s: 503 without a Retry-After: %s", msg, raw)
			}
			time.Sleep(min(time.Duration(wait)*time.Second, time.Until(deadline)))
		default:
			return fmt.Errorf("%s: %d %s", msg, resp.StatusCode, raw)
		}
	}
}

// checkStoredOnce reads partition 0 of topic and checks that it holds
// exactly the messages want, once each, in order.
func checkStoredOnce(t *testing.T, base, topic string, want []string) {
	t.Helper()
	var got []string
	for offset := 0; ; {
		resp, err := http.Get(fmt.Sprintf("%s/fetch?topic=%s&partition=0&offset=%d&max_records=1000", base, topic, offset))
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Records []struct {
				Message string `json:"message"`
			} `json:"records"`
			NextOffset    int `json:"next_offset"`
			HighWatermark int `json:"high_watermark"`
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || json.Unmarshal(raw, &page) != nil {
			t.Fatalf("fetch %s-0 at %d: %d %s", topic, offset, resp.StatusCode, raw)
		}
		for _, r := range page.Records {
			got = append(got, r.Message)
		}
		offset = page.NextOffset
		if offset >= page.HighWatermark || len(page.Records) == 0 {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s-0 holds %d records, want the %d acknowledged ones once each in order:\n got %v\nwant %v", topic, len(got), len(want), got, want)
	}
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }
