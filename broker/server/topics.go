package server

import (
	"net/http"
	"strings"

	"github.com/kairolog/kairolog/broker"
	"github.com/kairolog/kairolog/broker/client"
)

type createTopicBody struct {
	Name              *string   `json:"name"`
	Partitions        *int32    `json:"partitions"`
	ReplicationFactor *int16    `json:"replication_factor"`
	Config            configMap `json:"config"`
}

func (s *Server) createTopic(w http.ResponseWriter, r *http.Request) {
	var body createTopicBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Name == nil || strings.TrimSpace(*body.Name) == "" {
		s.writeError(w, r, required("name"))
		return
	}
	spec := broker.TopicSpec{Name: strings.TrimSpace(*body.Name)}
	if body.Partitions != nil {
		if *body.Partitions < 1 {
			s.fail(w, r, client.CodeInvalidPartitions, "partitions must be at least 1, got %d", *body.Partitions)
			return
		}
		spec.Partitions = *body.Partitions
	}
	if body.ReplicationFactor != nil {
		if *body.ReplicationFactor < 1 {
			s.fail(w, r, client.CodeInvalidReplicationFactor, "replication_factor must be at least 1, got %d", *body.ReplicationFactor)
			return
		}
		spec.ReplicationFactor = *body.ReplicationFactor
	}
	set, removed := body.Config.values()
	if len(removed) > 0 {
		s.fail(w, r, client.CodeInvalidConfig, "config %q has no value", removed[0])
		return
	}
	if len(set) > 0 {
		spec.Config = set
	}
	resp, err := s.b.CreateTopic(r.Context(), spec)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) listTopics(w http.ResponseWriter, r *http.Request) {
	internal := false
	if v, ok := newQuery(r).opt("internal"); ok {
		switch strings.ToLower(v) {
		case "true", "1", "yes":
			internal = true
		case "false", "0", "no", "":
		default:
			s.fail(w, r, client.CodeInvalidArgument, "query parameter \"internal\" must be true or false, got %q", v)
			return
		}
	}
	topics, err := s.b.ListTopics(r.Context(), internal)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if topics == nil {
		topics = []string{}
	}
	writeJSON(w, http.StatusOK, client.TopicList{Topics: topics})
}

func (s *Server) describeTopic(w http.ResponseWriter, r *http.Request) {
	d, err := s.b.DescribeTopic(r.Context(), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := s.b.DeleteTopic(r.Context(), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.TopicStatus{Status: "deleted", Name: name})
}

func (s *Server) addPartitions(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Partitions *int32 `json:"partitions"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Partitions == nil {
		s.writeError(w, r, required("partitions"))
		return
	}
	if *body.Partitions < 1 {
		s.fail(w, r, client.CodeInvalidPartitions, "partitions must be at least 1, got %d", *body.Partitions)
		return
	}
	name := r.PathValue("name")
	if err := s.b.AddPartitions(r.Context(), name, *body.Partitions); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.PartitionsResponse{Status: "updated", Name: name, Partitions: *body.Partitions})
}

func (s *Server) putTopicConfig(w http.ResponseWriter, r *http.Request)   { s.topicConfig(w, r, true) }
func (s *Server) patchTopicConfig(w http.ResponseWriter, r *http.Request) { s.topicConfig(w, r, false) }

func (s *Server) topicConfig(w http.ResponseWriter, r *http.Request, replace bool) {
	var body struct {
		Config *configMap `json:"config"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Config == nil {
		s.writeError(w, r, required("config"))
		return
	}
	set, remove := body.Config.values()
	if replace && len(remove) > 0 {
		s.fail(w, r, client.CodeInvalidConfig, "config %q is null; PUT replaces every override, leave the key out instead", remove[0])
		return
	}
	name := r.PathValue("name")
	cfg, err := s.b.AlterTopicConfig(r.Context(), name, broker.ConfigChange{Set: set, Remove: remove, Replace: replace})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	writeJSON(w, http.StatusOK, client.TopicConfigResponse{Status: "updated", Name: name, Config: cfg})
}

func (s *Server) setReplicationFactor(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ReplicationFactor *int16 `json:"replication_factor"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.ReplicationFactor == nil {
		s.writeError(w, r, required("replication_factor"))
		return
	}
	if *body.ReplicationFactor < 1 {
		s.fail(w, r, client.CodeInvalidReplicationFactor, "replication_factor must be at least 1, got %d", *body.ReplicationFactor)
		return
	}
	name := r.PathValue("name")
	if err := s.b.SetReplicationFactor(r.Context(), name, *body.ReplicationFactor); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.ReplicationFactorResponse{Status: "reassigning", Name: name, ReplicationFactor: *body.ReplicationFactor})
}
