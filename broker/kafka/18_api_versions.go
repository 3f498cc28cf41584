package kafka

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions v0–5: the versions of every API this listener serves. v3 adds
// the client's software name and version, which Kafka checks against
// softwareName; v5 the cluster and broker the client believes it reached
// (KIP-1242), answered REBOOTSTRAP_REQUIRED when they are not these. A
// client that sends a newer version gets the v0 reply with
// UNSUPPORTED_VERSION (unsupportedReply), retries with a version from it,
// and so learns the ranges either way.
func init() { register(18, 0, 5, (*Server).apiVersions) }

// softwareName is Kafka's pattern for ClientSoftwareName and
// ClientSoftwareVersion (ApiVersionsRequest.isValid).
var softwareName = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

func (s *Server) apiVersions(_ context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ApiVersionsRequest)
	resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
	if r.Version >= 3 && (!softwareName.MatchString(r.ClientSoftwareName) || !softwareName.MatchString(r.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if r.Version >= 5 {
		switch {
		case (r.ClusterID == nil) != (r.NodeID < 0):
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		case r.ClusterID != nil && (*r.ClusterID != s.opts.ClusterID() || r.NodeID != s.opts.NodeID):
			resp.ErrorCode = kerr.RebootstrapRequired.Code
			return resp
		}
	}
	resp.ApiKeys = versionRanges()
	return resp
}

// unsupportedReply is the answer to a request whose key or version this
// listener does not serve: the ApiVersions v0 reply (error code first, then
// the served ranges) with UNSUPPORTED_VERSION. Kafka answers a newer
// ApiVersions so; for any other request it is the one reply whose shape
// does not depend on the version asked, so the connection goes on.
func unsupportedReply() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = versionRanges()
	return resp
}
