package httpapi

import (
	"encoding/json"
	"testing"
)

func TestScanShape(t *testing.T) {
	for _, c := range []struct {
		body            string
		values, records int
	}{
		{`{}`, 1, 0},
		{`{"topic":"t","message":"m"}`, 5, 0},
		{`{"topic":"t","records":[]}`, 5, 0},
		{`{"topic":"t","records":[{"message":""},{"message":"x"}]}`, 11, 2},
		{`{"records":[1,2,"three",null,true,{},[]]}`, 10, 7},
		{`{"RECORDS":[{},{}],"records":[{}]}`, 8, 3},
		{`{"rec\u006frds":[{},{}]}`, 5, 2},
		{`{"records":[{"headers":{"records":[1,2,3]}}]}`, 11, 1},
		{`{"other":[{"records":[1,2]}]}`, 8, 0},
		{`{"records":"[1,2,3]"}`, 3, 0},
		{`{"records" : [ {} , {} ] }`, 5, 2},
		{`{"k":"a\"],[","records":[{}]}`, 6, 1},
		{`{"records":[{},`, 4, 1},
	} {
		got := scanShape([]byte(c.body))
		if got.values != c.values || got.records != c.records {
			t.Errorf("%s: %+v, want values %d records %d", c.body, got, c.values, c.records)
		}
	}
}

// FuzzScanShape checks the record count against encoding/json for every
// body it decodes: the count bounds what decoding builds, so it must never
// be lower.
func FuzzScanShape(f *testing.F) {
	for _, s := range []string{`{"records":[{},{}]}`, `{"Records":[1,"a",{"records":[]}],"x":{"records":[1]}}`,
		`{"re\u0063ords":[null,null]}`, `{"records":[]}`, `{"recordſ":[{}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v struct {
			Records []json.RawMessage `json:"records"`
		}
		s := scanShape([]byte(body))
		if json.Unmarshal([]byte(body), &v) != nil {
			return
		}
		if s.records < len(v.Records) {
			t.Fatalf("%q: counted %d records, encoding/json decodes %d", body, s.records, len(v.Records))
		}
		if s.values < len(v.Records) {
			t.Fatalf("%q: counted %d values for %d records", body, s.values, len(v.Records))
		}
	})
}

// FuzzStringEnd checks stringEnd against a byte-by-byte reading of JSON's
// escapes: a backslash escapes the byte after it.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b"`, `"a\\"b"`, `"\\\"x"`, `"\\\\"`, `"open`, `"\`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(`"` + s)
		want := len(b) - 1
		for i := 1; i < len(b); i++ {
			if b[i] == '\\' {
				i++
				continue
			}
			if b[i] == '"' {
				want = i
				break
			}
		}
		if got := stringEnd(b, 0); got != want {
			t.Fatalf("stringEnd(%q) = %d, want %d", b, got, want)
		}
	})
}
