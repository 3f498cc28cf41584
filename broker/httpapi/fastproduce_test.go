package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzFastProduce(f *testing.F) {
	for _, s := range []string{
		`{"topic":"orders","partition":0,"message":"created order 123"}`,
		`{"topic":"orders","key":"user-1","value":"hello","acks":"all","timeout_ms":500}`,
		` { "topic" : "o" , "acks" : -1 , "extra" : true , "n": null, "encoding":"base64"} `,
		`{"topic":"o","partition":-0,"timestamp":1767000000000,"message":"é"}`,
		`{"topic":"o","message":"a\"b"}`, `{"topic":"o","records":[]}`, `{}`, `{"a":1.5}`,
		`{"topic":"o","acks":"all","records":[{"key":"k","value":"v","headers":{"h":"x","h":"y"}},{"partition":3,"message":"m","timestamp":5}]}`,
		`{"records":[],"Records":[{}]}`, `{"records":null}`, `{"records":[{"headers":{},"HEADERS":{}}]}`, `{"records":[{"topic":"x","key":null}]}`,
		`{"partition":2147483648}`, `{"topic":null,"topic":"x"}`, `{"acks":"ALL"}`, `{"acks":2}`,
		`{"topic":"o","partition":1,"producer_id":4000,"producer_epoch":0,"sequence":17,"message":"m"}`,
		`{"producer_id":9223372036854775808,"producer_epoch":-1,"sequence":null,"records":[{"value":"v"}]}`,
		`{"producer_id":1e3,"sequence":"0","producer_epoch":32768}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := fastProduce([]byte(s), scanShape([]byte(s)))
		if !ok {
			return
		}
		var slow produceBody
		if err := json.Unmarshal([]byte(s), &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", s, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\n fast %+v\n slow %+v", s, fast, slow)
		}
	})
}

// BenchmarkDecodeProduce measures what the broker a batched produce
// reaches does with its body before the core sees it: count its shape,
// parse it, turn it into records (1000 keyless records of 200 bytes, as
// kairoctl bench sends them).
func BenchmarkDecodeProduce(b *testing.B) {
	var body []byte
	body = append(body, `{"topic":"bench","acks":"all","records":[`...)
	for i := range 1000 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"value":"`...)
		body = append(body, strings.Repeat("x", 200)...)
		body = append(body, `"}`...)
	}
	body = append(body, "]}"...)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		shape := scanShape(body)
		fast, ok := fastProduce(body, shape)
		if !ok {
			b.Fatal("the fast parser refused the body")
		}
		if _, _, err := fast.toArgs(); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPlainText checks plainText against its definition.
func FuzzPlainText(f *testing.F) {
	for _, s := range []string{"", "plain", strings.Repeat("x", 200), "a\\b", "tab\there", "é", "\xff", strings.Repeat("y", 40) + "\x1f" + strings.Repeat("z", 40), strings.Repeat("é", 30) + "\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want := utf8.Valid(s) && !bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 })
		if got := plainText(s); got != want {
			t.Fatalf("plainText(%q) = %v, want %v", s, got, want)
		}
	})
}
