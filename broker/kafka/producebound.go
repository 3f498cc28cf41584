package kafka

import (
	"errors"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceCharge is what decoding a Produce body allocates besides the
// frame: its topic and partition structs, and the tags it carries. The
// records, nearly all of a Produce frame, stay slices of the frame, so
// Produce is charged exactly rather than by decodeBound's worst case per
// byte, which would make a large produce wait for most of the pool. The
// walk reads only lengths: it counts the arrays' elements and skips over
// everything else. A body it cannot walk is charged as decodeCharge would,
// and fails to decode right after.
func produceCharge(version int16, body []byte) int64 {
	n, err := produceElements(version, body)
	if err != nil {
		return decodeCharge(0, len(body))
	}
	structs := n.topics*int64(unsafe.Sizeof(kmsg.ProduceRequestTopic{})) +
		n.partitions*int64(unsafe.Sizeof(kmsg.ProduceRequestTopicPartition{})) + n.tags*tagCost
	// The allocator rounds every allocation up to its size class, by at
	// most an eighth.
	return decodeBase + structs + structs/8
}

// tagCost is what one unknown tagged field costs decoded: its map entry.
const tagCost = 64

type produceCounts struct{ topics, partitions, tags int64 }

var errProduceShape = errors.New("produce body does not walk")

// produceElements counts the arrays' elements of a Produce body of the
// given version (ProduceRequest in Kafka's message specs).
func produceElements(version int16, body []byte) (produceCounts, error) {
	var n produceCounts
	flexible := version >= 9
	rd := kbin.Reader{Src: body}
	arrayLen := func() int32 {
		if flexible {
			return rd.CompactArrayLen()
		}
		return rd.ArrayLen()
	}
	skipBytes := func() {
		if flexible {
			rd.CompactNullableBytes()
		} else {
			rd.NullableBytes()
		}
	}
	tags := func() {
		if flexible {
			count := int64(rd.Uvarint())
			n.tags += count
			for k := int64(0); k < count && rd.Ok(); k++ {
				rd.Uvarint()
				rd.Span(int(rd.Uvarint()))
			}
		}
	}
	if version >= 3 { // transactional id
		if flexible {
			rd.UnsafeCompactNullableString()
		} else {
			rd.UnsafeNullableString()
		}
	}
	rd.Int16() // acks
	rd.Int32() // timeout
	topics := arrayLen()
	for t := int32(0); t < topics && rd.Ok(); t++ {
		n.topics++
		if version >= 13 {
			rd.Span(16)
		} else if flexible {
			rd.UnsafeCompactString()
		} else {
			rd.UnsafeString()
		}
		parts := arrayLen()
		for p := int32(0); p < parts && rd.Ok(); p++ {
			n.partitions++
			rd.Int32()
			skipBytes()
			tags()
		}
		tags()
	}
	tags()
	if !rd.Ok() {
		return n, errProduceShape
	}
	return n, nil
}
