package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// OffsetFetch v0–9: a group's committed offsets, of the partitions asked
// or (v2+, topics null) all of them; a partition without a commit is
// offset -1. v8+ asks for several groups at once; v10 names topics by
// id, and a topic unknown by id is UNKNOWN_TOPIC_ID in its partitions.
func init() { register(9, 0, 10, (*Server).offsetFetch) }

func (s *Server) offsetFetch(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.OffsetFetchRequest)
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version < 8 {
		var asked []kmsg.OffsetFetchRequestGroupTopic
		for _, t := range r.Topics {
			asked = append(asked, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		g := s.groupOffsets(ctx, r.Group, asked, r.Topics == nil)
		resp.ErrorCode = g.ErrorCode
		for _, t := range g.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if r.Version < 2 && resp.ErrorCode != 0 {
			// Before v2 only partitions carry errors.
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].ErrorCode = resp.ErrorCode
				}
			}
		}
		return resp
	}
	var names map[[16]byte]string
	ids := map[string][16]byte{}
	if r.Version >= 10 {
		names = s.topicNamesByID(ctx)
		for id, name := range names {
			ids[name] = id
		}
	}
	for _, rg := range r.Groups {
		asked := rg.Topics
		var unknown [][16]byte
		if r.Version >= 10 {
			asked = nil
			for _, t := range rg.Topics {
				if name, ok := names[t.TopicID]; ok {
					t.Topic = name
					asked = append(asked, t)
				} else {
					unknown = append(unknown, t.TopicID)
				}
			}
		}
		g := s.groupOffsets(ctx, rg.Group, asked, rg.Topics == nil)
		if r.Version >= 10 {
			for i := range g.Topics {
				g.Topics[i].TopicID = ids[g.Topics[i].Topic]
			}
			for _, t := range rg.Topics {
				for _, id := range unknown {
					if t.TopicID != id {
						continue
					}
					rt := kmsg.NewOffsetFetchResponseGroupTopic()
					rt.TopicID = id
					for _, p := range t.Partitions {
						rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
						rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, kerr.UnknownTopicID.Code
						rt.Partitions = append(rt.Partitions, rp)
					}
					g.Topics = append(g.Topics, rt)
				}
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

// groupOffsets reads one group's offsets: those of asked, or every one
// when all.
func (s *Server) groupOffsets(ctx context.Context, group string, asked []kmsg.OffsetFetchRequestGroupTopic, all bool) kmsg.OffsetFetchResponseGroup {
	g := kmsg.NewOffsetFetchResponseGroup()
	g.Group = group
	oreq := api.OffsetsRequest{Group: group}
	for _, t := range asked {
		for _, p := range t.Partitions {
			oreq.Partitions = append(oreq.Partitions, api.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	if !all && len(oreq.Partitions) == 0 {
		return g
	}
	commits, err := s.opts.Core.Offsets(ctx, oreq)
	if err != nil {
		g.ErrorCode = errorCode(err)
		return g
	}
	type tp struct {
		topic string
		p     int32
	}
	found := make(map[tp]api.OffsetCommit, len(commits))
	for _, c := range commits {
		found[tp{c.Topic, c.Partition}] = c
	}
	if all {
		byTopic := map[string]int{}
		for _, c := range commits {
			i, ok := byTopic[c.Topic]
			if !ok {
				i = len(asked)
				byTopic[c.Topic] = i
				asked = append(asked, kmsg.OffsetFetchRequestGroupTopic{Topic: c.Topic})
			}
			asked[i].Partitions = append(asked[i].Partitions, c.Partition)
		}
	}
	for _, t := range asked {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, -1, -1
			if c, ok := found[tp{t.Topic, p}]; ok {
				md := c.Metadata
				rp.Offset, rp.Metadata = c.Offset, &md
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		g.Topics = append(g.Topics, rt)
	}
	return g
}
