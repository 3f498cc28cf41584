package kafka

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handler answers one decoded request with its reply, or nil for a request
// that gets none (Produce with acks=0). A handler never fails: what goes
// wrong is an error code in the reply, as the protocol has it.
type handler func(s *Server, ctx context.Context, req *request) kmsg.Response

// served is one API this listener serves: its key, the versions it serves and
// its handler.
type served struct {
	key, min, max int16
	handle        handler
}

// apis are the served APIs by key; each API's file registers itself.
var apis = map[int16]served{}

// register adds an API with the versions it serves. It runs in init
// functions, so a bad range is a programming error.
func register(key, minVersion, maxVersion int16, h handler) {
	if _, dup := apis[key]; dup || minVersion < 0 || maxVersion < minVersion {
		panic(fmt.Sprintf("kafka: bad registration of API %d (%d..%d)", key, minVersion, maxVersion))
	}
	if kmax := kmsg.RequestForKey(key).MaxVersion(); maxVersion > kmax {
		panic(fmt.Sprintf("kafka: API %d registered up to v%d, kmsg decodes up to v%d", key, maxVersion, kmax))
	}
	apis[key] = served{key: key, min: minVersion, max: maxVersion, handle: h}
}

// serves reports whether this listener answers key at version.
func serves(key, version int16) (served, bool) {
	a, ok := apis[key]
	return a, ok && version >= a.min && version <= a.max
}

// versionRanges is every served API's range, by key, as ApiVersions lists
// them.
func versionRanges() []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b kmsg.ApiVersionsResponseApiKey) int { return int(a.ApiKey) - int(b.ApiKey) })
	return out
}
