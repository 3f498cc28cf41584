package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
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
		fast, ok := fastProduce([]byte(s), scanShape([]byte(s)).records)
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
