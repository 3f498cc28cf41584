package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
)

func (s *Server) topicRoutes() {
	s.handle("POST /topics", "create_topic", kindAdmin, endpoint(s, fromBody[api.CreateTopicRequest, createTopicBody], s.b.CreateTopic,
		func(_ api.CreateTopicRequest, res *api.CreateTopicResult) (int, any) {
			return http.StatusCreated, withStatus{"created", res}
		}))
	s.handle("GET /topics", "list_topics", kindAdmin, endpoint(s, readListTopics, s.b.ListTopics,
		ok(func(_ bool, topics []string) any { return map[string][]string{"topics": nonNil(topics)} })))
	s.handle("GET /topics/{name}", "describe_topic", kindAdmin, endpoint(s, pathValue("name"), s.b.DescribeTopic, result))
	s.handle("DELETE /topics/{name}", "delete_topic", kindAdmin, endpoint(s, pathValue("name"), noResult(s.b.DeleteTopic),
		ok(func(name string, _ struct{}) any { return withStatus{"deleted", topicName{name}} })))
	s.handle("POST /topics/{name}/partitions", "add_partitions", kindAdmin, endpoint(s, fromBody[topicPartitions, partitionsBody],
		noResult(func(ctx context.Context, r topicPartitions) error {
			return s.b.AddPartitions(ctx, r.Name, r.Partitions)
		}),
		ok(func(r topicPartitions, _ struct{}) any { return withStatus{"updated", r} })))
	s.handle("PUT /topics/{name}/config", "set_topic_config", kindAdmin, endpoint(s, fromBody[api.TopicConfigChange, putConfigBody], s.b.AlterTopicConfig, configReply))
	s.handle("PATCH /topics/{name}/config", "patch_topic_config", kindAdmin, endpoint(s, fromBody[api.TopicConfigChange, patchConfigBody], s.b.AlterTopicConfig, configReply))
	s.handle("POST /topics/{name}/replication-factor", "set_replication_factor", kindAdmin, endpoint(s, fromBody[topicReplicas, replicationFactorBody],
		noResult(func(ctx context.Context, r topicReplicas) error {
			return s.b.SetReplicationFactor(ctx, r.Name, r.ReplicationFactor)
		}),
		ok(func(r topicReplicas, _ struct{}) any { return withStatus{"reassigning", r} })))
}

type topicName struct {
	Name string `json:"name"`
}

type createTopicBody struct {
	Name              *string   `json:"name"`
	Partitions        *int32    `json:"partitions"`
	ReplicationFactor *int16    `json:"replication_factor"`
	Config            configMap `json:"config"`
}

func (b *createTopicBody) request(*http.Request) (api.CreateTopicRequest, error) {
	var req api.CreateTopicRequest
	if b.Name == nil || strings.TrimSpace(*b.Name) == "" {
		return req, required("name")
	}
	req.Name = strings.TrimSpace(*b.Name)
	if b.Partitions != nil {
		if *b.Partitions < 1 {
			return req, api.Errorf(api.CodeInvalidPartitions, "partitions must be at least 1, got %d", *b.Partitions)
		}
		req.Partitions = *b.Partitions
	}
	if b.ReplicationFactor != nil {
		if *b.ReplicationFactor < 1 {
			return req, api.Errorf(api.CodeInvalidReplicationFactor, "replication_factor must be at least 1, got %d", *b.ReplicationFactor)
		}
		req.ReplicationFactor = *b.ReplicationFactor
	}
	set, removed := b.Config.values()
	if len(removed) > 0 {
		return req, api.Errorf(api.CodeInvalidConfig, "config %q has no value", removed[0])
	}
	if len(set) > 0 {
		req.Config = set
	}
	return req, nil
}

// readListTopics reads ?internal=, which lists internal topics too.
func readListTopics(_ *Server, r *http.Request) (bool, error) {
	v, ok := newQuery(r).opt("internal")
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no", "":
		return false, nil
	}
	return false, api.Errorf(api.CodeInvalidArgument, "query parameter \"internal\" must be true or false, got %q", v)
}

// topicPartitions is a topic's new partition count.
type topicPartitions struct {
	Name       string `json:"name"`
	Partitions int32  `json:"partitions"`
}

type partitionsBody struct {
	Partitions *int32 `json:"partitions"`
}

func (b *partitionsBody) request(r *http.Request) (topicPartitions, error) {
	if b.Partitions == nil {
		return topicPartitions{}, required("partitions")
	}
	if *b.Partitions < 1 {
		return topicPartitions{}, api.Errorf(api.CodeInvalidPartitions, "partitions must be at least 1, got %d", *b.Partitions)
	}
	return topicPartitions{Name: r.PathValue("name"), Partitions: *b.Partitions}, nil
}

// topicReplicas is a topic's new replication factor.
type topicReplicas struct {
	Name              string `json:"name"`
	ReplicationFactor int16  `json:"replication_factor"`
}

type replicationFactorBody struct {
	ReplicationFactor *int16 `json:"replication_factor"`
}

func (b *replicationFactorBody) request(r *http.Request) (topicReplicas, error) {
	if b.ReplicationFactor == nil {
		return topicReplicas{}, required("replication_factor")
	}
	if *b.ReplicationFactor < 1 {
		return topicReplicas{}, api.Errorf(api.CodeInvalidReplicationFactor, "replication_factor must be at least 1, got %d", *b.ReplicationFactor)
	}
	return topicReplicas{Name: r.PathValue("name"), ReplicationFactor: *b.ReplicationFactor}, nil
}

// putConfigBody replaces a topic's overrides; patchConfigBody changes
// some (a null value removes one).
type (
	putConfigBody   struct{ configBody }
	patchConfigBody struct{ configBody }
)

type configBody struct {
	Config *configMap `json:"config"`
}

func (b *putConfigBody) request(r *http.Request) (api.TopicConfigChange, error) {
	return b.change(r, true)
}

func (b *patchConfigBody) request(r *http.Request) (api.TopicConfigChange, error) {
	return b.change(r, false)
}

func (b *configBody) change(r *http.Request, replace bool) (api.TopicConfigChange, error) {
	if b.Config == nil {
		return api.TopicConfigChange{}, required("config")
	}
	set, remove := b.Config.values()
	if replace && len(remove) > 0 {
		return api.TopicConfigChange{}, api.Errorf(api.CodeInvalidConfig, "config %q is null; PUT replaces every override, leave the key out instead", remove[0])
	}
	return api.TopicConfigChange{Topic: r.PathValue("name"), Set: set, Remove: remove, Replace: replace}, nil
}

func configReply(req api.TopicConfigChange, cfg map[string]string) (int, any) {
	if cfg == nil {
		cfg = map[string]string{}
	}
	return http.StatusOK, withStatus{"updated", struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}{req.Topic, cfg}}
}

// pathValue reads the path value name as the request.
func pathValue(name string) func(*Server, *http.Request) (string, error) {
	return func(_ *Server, r *http.Request) (string, error) { return r.PathValue(name), nil }
}
