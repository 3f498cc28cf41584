package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeCluster v0–2: the cluster id, the controller and the brokers a
// client may connect to, as Metadata names them (on the gateway, the
// gateway alone); v2 adds fenced brokers when asked. Controllers are not
// reachable over the Kafka protocol: endpoint type 2 is
// UNSUPPORTED_ENDPOINT_TYPE.
func init() { register(60, 0, 2, (*Server).describeCluster) }

func (s *Server) describeCluster(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType, resp.ClusterAuthorizedOperations = r.EndpointType, -2147483648
	if r.Version >= 1 && r.EndpointType != 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		return resp
	}
	topo, err := s.opts.Core.Topology(ctx)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		return resp
	}
	resp.ClusterID, resp.ControllerID = topo.ClusterID, topo.ControllerID
	if s.opts.Mode == Gateway {
		resp.ControllerID = s.opts.NodeID
	}
	for _, b := range s.metadataBrokers(topo) {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, db)
	}
	if r.IncludeFencedBrokers && s.opts.Mode == Direct {
		for _, be := range topo.Brokers {
			if be.Fenced && be.KafkaAddress != "" {
				db := kmsg.NewDescribeClusterResponseBroker()
				db.NodeID, db.IsFenced = be.ID, true
				db.Host, db.Port = splitHostPort(be.KafkaAddress)
				resp.Brokers = append(resp.Brokers, db)
			}
		}
	}
	return resp
}
