package kafka

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// DescribeLogDirs v0–5: this broker's data directory, its file system's
// size and free space (v4; never cordoned, v5), and the replicas it holds
// there, each with its bytes on disk and how far its log end is below the
// high watermark it knows; every replica, or the topics and partitions
// asked. As in Kafka a client asks every broker (on the gateway, the
// gateway's own broker answers). Authorization: Describe on the cluster; a
// refusal is CLUSTER_AUTHORIZATION_FAILED (v3+; before, no directory).
func init() { register(35, 0, 5, (*Server).describeLogDirs) }

func (s *Server) describeLogDirs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	dir, err := s.opts.Core.LogDir(ctx)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir, d.TotalBytes, d.UsableBytes = dir.Path, dir.TotalBytes, dir.UsableBytes
	for _, rs := range dir.Replicas {
		if !logDirAsked(r, rs) {
			continue
		}
		if n := len(d.Topics); n == 0 || d.Topics[n-1].Topic != rs.Topic {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = rs.Topic
			d.Topics = append(d.Topics, t)
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition, p.Size, p.OffsetLag = rs.Partition, rs.SizeBytes, rs.OffsetLag
		t := &d.Topics[len(d.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	resp.Dirs = append(resp.Dirs, d)
	return resp
}

// logDirAsked says whether r asks for replica rs: every replica when it names
// no topics.
func logDirAsked(r *kmsg.DescribeLogDirsRequest, rs api.ReplicaSize) bool {
	if r.Topics == nil {
		return true
	}
	return slices.ContainsFunc(r.Topics, func(t kmsg.DescribeLogDirsRequestTopic) bool {
		return t.Topic == rs.Topic && slices.Contains(t.Partitions, rs.Partition)
	})
}
