// Package binwire holds what the binary encodings of peer messages
// (peer.Binary) share: Kafka's primitives from kbin, a reader that bounds
// what a count in the input can make it allocate, and error bodies.
//
// Every encoding starts with a version byte, so that a message of another
// version is refused as such rather than misread.
package binwire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/kairolog/kairolog/broker/api"
)

// Version is the version byte of the encodings in this release.
const Version byte = 0

// Reader decodes a binary message: kbin's reader, which turns short input
// into an error at the end rather than a panic.
type Reader struct {
	kbin.Reader
	err error
}

// NewReader reads src, checking its version byte.
func NewReader(src []byte) *Reader {
	r := &Reader{Reader: kbin.Reader{Src: src}}
	if v := r.Int8(); r.Ok() && byte(v) != Version {
		r.fail(fmt.Errorf("version %d, this broker reads %d", v, Version))
	}
	return r
}

func (r *Reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.Src = nil
}

// Fail marks the input malformed; Done reports it.
func (r *Reader) Fail(format string, args ...any) {
	r.fail(fmt.Errorf(format, args...))
}

// Count reads an array length, refused when the rest of the input cannot
// hold that many entries of at least minSize bytes each: a count cannot
// make the decoder allocate more than the input accounts for.
func (r *Reader) Count(minSize int) int {
	n := r.Int32()
	if n < 0 || int64(n)*int64(minSize) > int64(len(r.Src)) {
		r.fail(fmt.Errorf("%d entries in %d bytes", n, len(r.Src)))
		return 0
	}
	return int(n)
}

// Int reads an int sent as an int64; one that does not fit is refused.
func (r *Reader) Int() int {
	v := r.Int64()
	if int64(int(v)) != v {
		r.fail(fmt.Errorf("%d does not fit an int", v))
		return 0
	}
	return int(v)
}

// ErrorBody reads what AppendErrorBody wrote.
func (r *Reader) ErrorBody() *api.ErrorBody {
	raw := r.CompactBytes()
	if !r.Ok() || r.err != nil {
		return nil
	}
	var b api.ErrorBody
	if err := json.Unmarshal(raw, &b); err != nil {
		r.fail(fmt.Errorf("error body: %w", err))
		return nil
	}
	return &b
}

// Payload is the input not read yet, all of it: a message's payload (nil
// when the input is already malformed).
func (r *Reader) Payload() []byte {
	if r.err != nil || !r.Ok() || len(r.Src) == 0 {
		return nil
	}
	rest := r.Src
	r.Src = nil
	return rest
}

// Done reports the first thing wrong with the input: too short, a bad
// count or version, or bytes left over.
func (r *Reader) Done() error {
	switch {
	case r.err != nil:
		return r.err
	case !r.Ok():
		return errors.New("input ends early")
	case len(r.Src) > 0:
		return fmt.Errorf("%d bytes left over", len(r.Src))
	}
	return nil
}

// AppendErrorBody appends an error body, as JSON: errors are rare, and
// their body has many optional fields.
func AppendErrorBody(dst []byte, b *api.ErrorBody) []byte {
	js, _ := json.Marshal(b) // plain fields only: cannot fail
	return kbin.AppendCompactBytes(dst, js)
}

// The appenders of the encodings' fields: big-endian integers, strings
// with their length first (Kafka's compact string).

func AppendInt32(dst []byte, v int32) []byte   { return kbin.AppendInt32(dst, v) }
func AppendUint32(dst []byte, v uint32) []byte { return kbin.AppendUint32(dst, v) }
func AppendInt64(dst []byte, v int64) []byte   { return kbin.AppendInt64(dst, v) }
func AppendBool(dst []byte, v bool) []byte     { return kbin.AppendBool(dst, v) }
func AppendString(dst []byte, s string) []byte { return kbin.AppendCompactString(dst, s) }
