package kafka

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDecodeStaysWithinItsBound decodes, for every served API and version,
// the densest frame there is: arrays of empty elements, each first element
// holding another such array, as deep as the type goes. What decoding
// allocates, per byte of the frame, must stay within decodeBound.
func TestDecodeStaysWithinItsBound(t *testing.T) {
	const n = 2000
	for key, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			fillArrays(reflect.ValueOf(req).Elem(), n, 3)
			frame := req.AppendTo(nil)
			// The least of three runs: the collector and other goroutines
			// allocate meanwhile too.
			allocated := int64(-1)
			for range 3 {
				got := allocatedBy(func() {
					dec := kmsg.RequestForKey(key)
					dec.SetVersion(v)
					if err := dec.ReadFrom(frame); err != nil {
						t.Fatalf("%s v%d: %v", kmsg.NameForKey(key), v, err)
					}
				})
				if allocated < 0 || got < allocated {
					allocated = got
				}
			}
			bound := decodeCharge(key, len(frame))
			if key == 0 {
				bound = produceCharge(v, frame)
			}
			if allocated > bound {
				t.Errorf("%s v%d: a %d-byte frame allocated %d bytes, bound %d",
					kmsg.NameForKey(key), v, len(frame), allocated, bound)
			}
		}
	}
}

// TestProduceChargeIsExact: a large produce of one partition is charged
// for its few structs, not per byte, and a produce of many empty topics for
// every one of them.
func TestProduceChargeIsExact(t *testing.T) {
	for v := int16(3); v <= 13; v++ {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = v, -1, 1000
		topic := kmsg.NewProduceRequestTopic()
		topic.Topic = "orders"
		part := kmsg.NewProduceRequestTopicPartition()
		part.Records = make([]byte, 1<<20)
		topic.Partitions = append(topic.Partitions, part)
		req.Topics = append(req.Topics, topic)
		if got := produceCharge(v, req.AppendTo(nil)); got > decodeBase+1024 {
			t.Errorf("v%d: a 1 MiB produce of one partition charged %d bytes", v, got)
		}
		req.Topics = make([]kmsg.ProduceRequestTopic, 10000)
		n, err := produceElements(v, req.AppendTo(nil))
		if err != nil || n.topics != 10000 {
			t.Errorf("v%d: %d topics counted (%v), want 10000", v, n.topics, err)
		}
	}
}

// fillArrays gives every slice of structs in v n zero elements, and fills
// the first element's arrays the same way, depth levels down.
func fillArrays(v reflect.Value, n, depth int) {
	if depth == 0 || v.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || !f.CanSet() || f.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		f.Set(reflect.MakeSlice(f.Type(), n, n))
		fillArrays(f.Index(0), n, depth-1)
	}
}

func allocatedBy(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}
