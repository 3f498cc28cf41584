package client

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

func ptr[T any](v T) *T { return &v }

// produceRequests covers every field of a produce request, set and unset,
// and strings json.Marshal escapes.
func produceRequests() []ProduceRequest {
	return []ProduceRequest{
		{Topic: "t"},
		{Topic: "t", Message: "hello", Acks: AcksAll},
		{Topic: "t", Partition: ptr[int32](0), Key: ptr(""), Message: "m", Headers: map[string]string{"b": "2", "a": "1"},
			Timestamp: 1700000000000, Acks: AcksLeader, TimeoutMs: 5000, Encoding: EncodingBase64,
			ProducerID: ptr[int64](7), ProducerEpoch: ptr[int16](3), Sequence: ptr[int32](99)},
		{Topic: `we"ird\ <topic> & more`, Message: "tab\there\nnewline \x01 \u2028 é \xff"},
		{Topic: "t", Records: []ProduceRecord{
			{Value: ""},
			{Value: "v", Key: ptr("k")},
			{Partition: ptr[int32](-1), Value: "<b>", Headers: map[string]string{"z": "", "\"": "\\"}, Timestamp: -5},
			{Key: ptr("ключ"), Value: strings.Repeat("x", 200)},
		}, Acks: AcksAll, TimeoutMs: -1},
		{Topic: "t", Records: []ProduceRecord{}},
		{Topic: "t", Key: ptr("k"), Records: []ProduceRecord{{Value: "v"}}},
	}
}

func TestProduceRequestJSONMatchesMarshal(t *testing.T) {
	for i, req := range produceRequests() {
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.appendJSON(nil); string(got) != string(want) {
			t.Errorf("request %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzProduceRequestJSON(f *testing.F) {
	f.Add("t", "k", "v", "h", "hv", int64(0), int32(0), true)
	f.Add(`"\`, "\x00", "\xff\xfe", "<", "&", int64(-1), int32(-7), false)
	f.Fuzz(func(t *testing.T, topic, key, value, hk, hv string, ts int64, part int32, batch bool) {
		req := ProduceRequest{Topic: topic, Key: &key, Message: value, Headers: map[string]string{hk: hv}, Timestamp: ts,
			Partition: &part, Acks: value, Encoding: key, TimeoutMs: ts}
		if batch {
			req = ProduceRequest{Topic: topic, Records: []ProduceRecord{
				{Key: &key, Value: value, Headers: map[string]string{hk: hv, hv: hk}, Timestamp: ts, Partition: &part},
				{Value: hv},
			}}
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// TestProduceResponseFastPath: the reply a broker writes for a stored
// produce is read without reflection, and reads as json.Unmarshal reads
// it; every other reply goes to json.Unmarshal.
func TestProduceResponseFastPath(t *testing.T) {
	batch := `{"status":"stored","topic":"t","records":[`
	for i := range 1000 {
		if i > 0 {
			batch += ","
		}
		batch += `{"partition":` + strconv.Itoa(i%8) + `,"offset":` + strconv.Itoa(1<<40+i) + `}`
	}
	batch += "]}\n"
	for _, c := range []struct {
		raw  string
		fast bool
	}{
		{batch, true},
		{`{"status":"stored","topic":"t","partition":3,"offset":0}` + "\n", true},
		{`{"status":"stored","topic":"t","duplicate":true,"records":[{"partition":0,"offset":5}]}`, true},
		{`{"status":"stored","topic":"t","records":[]}`, false},
		{`{"status":"stored","topic":"t","records":[{"partition":0,"offset":5,"error":"x","code":"Y"}],"partial":true}`, false},
		{`{"status":"stored","topic":"t\u0041","partition":3,"offset":0}`, false},
		{`{"status":"stored","topic":"t","partition":3,"offset":01}`, false},
		{`{"status":"stored","topic":"t","partition":3,"offset":1.5}`, false},
		{`{"status":"stored","topic":"t","partition":2147483648,"offset":1}`, false},
		{`{"status":"stored","topic":"t","partition":3,"offset":0} {}`, false},
		{` {"status":"stored","topic":"t","partition":3,"offset":0}`, false},
	} {
		var fast ProduceResponse
		if got := fastProduceResponse([]byte(c.raw), &fast); got != c.fast {
			t.Errorf("fast path took %.60q: %v, want %v", c.raw, got, c.fast)
		}
		var got, want ProduceResponse
		wantErr := json.Unmarshal([]byte(c.raw), &want)
		gotErr := got.decodeJSON([]byte(c.raw))
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%.60q: decoded %+v (%v), json.Unmarshal %+v (%v)", c.raw, got, gotErr, want, wantErr)
		}
	}
}

func FuzzProduceResponseJSON(f *testing.F) {
	f.Add([]byte(`{"status":"stored","topic":"t","records":[{"partition":0,"offset":5},{"partition":1,"offset":-1}]}` + "\n"))
	f.Add([]byte(`{"status":"stored","topic":"t","duplicate":true,"partition":3,"offset":0}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast ProduceResponse
		if !fastProduceResponse(raw, &fast) {
			return
		}
		var want ProduceResponse
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("fast path read %q, which json.Unmarshal refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%q: fast path %+v, json.Unmarshal %+v", raw, fast, want)
		}
	})
}

// BenchmarkProduceJSON: a batch of 1000 records of 200 bytes, encoded and
// its reply decoded, without reflection and with it.
func BenchmarkProduceJSON(b *testing.B) {
	req := ProduceRequest{Topic: "kairo-bench", Acks: AcksAll, Records: make([]ProduceRecord, 1000)}
	positions := make([]api.RecordPosition, 1000)
	for i := range req.Records {
		req.Records[i].Value = strings.Repeat("x", 200)
		positions[i] = api.RecordPosition{Partition: int32(i % 8), Offset: int64(100000 + i)}
	}
	reply, err := json.Marshal(ProduceResponse{Status: "stored", Topic: req.Topic, Records: positions})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("request/append", func(b *testing.B) {
		for b.Loop() {
			req.appendJSON(make([]byte, 0, req.jsonSize()))
		}
	})
	b.Run("request/json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(req)
		}
	})
	b.Run("reply/fast", func(b *testing.B) {
		for b.Loop() {
			var out ProduceResponse
			if err := out.decodeJSON(reply); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reply/json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var out ProduceResponse
			_ = json.Unmarshal(reply, &out)
		}
	})
}

// TestReplyParserInt checks the integers a reply's positions are read
// with against strconv at the edges of their sizes.
func TestReplyParserInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
	}{
		{"0", 32}, {"-0", 32}, {"7", 32}, {"-12", 64}, {"2147483647", 32}, {"2147483648", 32},
		{"-2147483648", 32}, {"-2147483649", 32}, {"999999999999999999", 64},
		{"-999999999999999999", 64}, {"9223372036854775807", 64}, {"9223372036854775808", 64},
		{"-9223372036854775808", 64}, {"-9223372036854775809", 64}, {"12345678901234567890123", 64},
		{"01", 64}, {"-", 64}, {"", 64}, {"-01", 32},
	} {
		p := replyParser{b: []byte(c.in)}
		got, ok := p.int(c.bits)
		want, err := strconv.ParseInt(c.in, 10, c.bits)
		wantOK := err == nil && (len(c.in) < 2 || c.in[0] != '0') && !strings.HasPrefix(c.in, "-0") || c.in == "-0"
		if ok != wantOK || (ok && got != want) {
			t.Errorf("int(%q, %d) = %d, %v; want %d, %v", c.in, c.bits, got, ok, want, wantOK)
		}
	}
}
