package kafka

import (
	"reflect"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a frame decodes to is charged to the request pool before it is
// decoded. kmsg trusts an array's length as far as the bytes left could
// hold its elements, and allocates the elements at once, so a hostile
// frame of n bytes can make it allocate about n elements of a struct, at
// every level of nesting. decodeBound is that worst case for one request
// type, per byte of its frame, read off kmsg's types: the sum, along the
// deepest chain of nested arrays, of each element's size (a byte slice
// is a slice of the frame, one byte per byte). TestDecodeStaysWithinItsBound
// checks it against what decoding really allocates.
//
// Produce is charged exactly instead (produceFootprint): its frames are
// the large ones, and nearly all of their bytes are records, which stay
// slices of the frame.

// decodeBase is what decoding allocates whatever the frame's size: the
// request's own struct.
const decodeBase = 4 << 10

// decodeCharge is what decoding a body of n bytes of a request of key may
// allocate.
func decodeCharge(key int16, n int) int64 { return decodeBase + decodeBound(key)*int64(n) }

var decodeBounds sync.Map // int16 → int64

// decodeBound is the bytes a request of key may allocate while decoding,
// per byte of its frame.
func decodeBound(key int16) int64 {
	if v, ok := decodeBounds.Load(key); ok {
		return v.(int64)
	}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return 0
	}
	b := int64(arrayAmplification(reflect.TypeOf(req))) + 1
	decodeBounds.Store(key, b)
	return b
}

// arrayAmplification is the largest sum of element sizes along a chain of
// nested slices in t.
func arrayAmplification(t reflect.Type) uintptr {
	switch t.Kind() {
	case reflect.Pointer:
		return arrayAmplification(t.Elem())
	case reflect.Struct:
		var worst uintptr
		for i := 0; i < t.NumField(); i++ {
			worst = max(worst, arrayAmplification(t.Field(i).Type))
		}
		return worst
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return 1
		}
		return t.Elem().Size() + arrayAmplification(t.Elem())
	case reflect.Map:
		// Unknown tagged fields: one entry per tag, each at least two
		// bytes of the frame; a map entry costs far less than 64 bytes.
		return 32
	}
	return 0
}
