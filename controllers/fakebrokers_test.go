/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kairolog/kairolog/broker/api"
)

// fakeBrokers answers the Topic and ConsumerGroup passes' calls from memory,
// with the broker's error codes, and records every call, so that the
// decision tables run without a broker or an API server. The envtest suite
// runs the same passes against real brokers.
type fakeBrokers struct {
	topics map[string]*api.TopicDescription
	groups map[string]*api.GroupDescription
	// fail makes the call of that name ("CreateTopic") return the error.
	fail map[string]error
	// failTimes, when set for a call, limits fail to its first so many calls.
	failTimes map[string]int
	// reassign makes a replication-factor change leave replicas moving.
	reassign bool
	// calls are the calls made, as "CreateTopic orders".
	calls  []string
	nextID int
}

func newFakeBrokers() *fakeBrokers {
	return &fakeBrokers{topics: map[string]*api.TopicDescription{},
		groups: map[string]*api.GroupDescription{}, fail: map[string]error{}, failTimes: map[string]int{}}
}

// withTopic adds a topic of this id, partitions and replicas (leaders and
// ISRs complete) and config.
func (f *fakeBrokers) withTopic(name, id string, partitions int32, rf int16, config map[string]string) *fakeBrokers {
	d := &api.TopicDescription{Name: name, TopicID: id, ReplicationFactor: rf, Config: maps.Clone(config)}
	f.topics[name] = d
	f.grow(d, partitions)
	return f
}

// withGroup adds a group.
func (f *fakeBrokers) withGroup(g api.GroupDescription) *fakeBrokers {
	f.groups[g.Group] = &g
	return f
}

func (f *fakeBrokers) call(op, name string) error {
	f.calls = append(f.calls, op+" "+name)
	if n, limited := f.failTimes[op]; limited {
		if n == 0 {
			return nil
		}
		f.failTimes[op] = n - 1
	}
	return f.fail[op]
}

func (f *fakeBrokers) grow(d *api.TopicDescription, partitions int32) {
	for p := d.PartitionCount; p < partitions; p++ {
		replicas := make([]int32, d.ReplicationFactor)
		for i := range replicas {
			replicas[i] = int32(i)
		}
		d.Partitions = append(d.Partitions, api.PartitionDescription{Partition: p, Leader: 0,
			Replicas: replicas, ISR: slices.Clone(replicas)})
	}
	d.PartitionCount = partitions
}

func (f *fakeBrokers) topic(name string) (*api.TopicDescription, error) {
	d, ok := f.topics[name]
	if !ok {
		return nil, api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", name)
	}
	return d, nil
}

func (f *fakeBrokers) CreateTopic(_ context.Context, req api.CreateTopicRequest) (*api.CreateTopicResult, error) {
	if err := f.call("CreateTopic", req.Name); err != nil {
		return nil, err
	}
	if _, ok := f.topics[req.Name]; ok {
		return nil, api.Errorf(api.CodeTopicAlreadyExists, "topic %q already exists", req.Name)
	}
	f.nextID++
	rf := max(req.ReplicationFactor, 1)
	f.withTopic(req.Name, fmt.Sprintf("id-%d", f.nextID), req.Partitions, rf, req.Config)
	return &api.CreateTopicResult{Name: req.Name, TopicID: f.topics[req.Name].TopicID,
		Partitions: req.Partitions, ReplicationFactor: rf}, nil
}

func (f *fakeBrokers) DescribeTopic(_ context.Context, name string) (*api.TopicDescription, error) {
	if err := f.call("DescribeTopic", name); err != nil {
		return nil, err
	}
	d, err := f.topic(name)
	if err != nil {
		return nil, err
	}
	out := *d
	out.Config = maps.Clone(d.Config)
	out.Partitions = slices.Clone(d.Partitions)
	return &out, nil
}

func (f *fakeBrokers) AddPartitions(_ context.Context, name string, partitions int32) error {
	if err := f.call("AddPartitions", name); err != nil {
		return err
	}
	d, err := f.topic(name)
	if err != nil {
		return err
	}
	f.grow(d, partitions)
	return nil
}

func (f *fakeBrokers) SetTopicConfig(_ context.Context, name string, config map[string]string) (map[string]string, error) {
	if err := f.call("SetTopicConfig", name); err != nil {
		return nil, err
	}
	d, err := f.topic(name)
	if err != nil {
		return nil, err
	}
	d.Config = maps.Clone(config)
	return maps.Clone(config), nil
}

func (f *fakeBrokers) SetReplicationFactor(_ context.Context, name string, rf int16) error {
	if err := f.call("SetReplicationFactor", name); err != nil {
		return err
	}
	d, err := f.topic(name)
	if err != nil {
		return err
	}
	d.ReplicationFactor = rf
	for i := range d.Partitions {
		if f.reassign {
			d.Partitions[i].Adding = []int32{int32(rf) - 1}
		}
	}
	return nil
}

func (f *fakeBrokers) DeleteTopic(_ context.Context, name string) error {
	if err := f.call("DeleteTopic", name); err != nil {
		return err
	}
	if _, err := f.topic(name); err != nil {
		return err
	}
	delete(f.topics, name)
	return nil
}

func (f *fakeBrokers) group(name string) (*api.GroupDescription, error) {
	g, ok := f.groups[name]
	if !ok {
		return nil, api.Errorf(api.CodeUnknownGroup, "group %q does not exist", name)
	}
	return g, nil
}

func (f *fakeBrokers) DescribeGroup(_ context.Context, group string, topics ...string) (*api.GroupDescription, error) {
	if err := f.call("DescribeGroup", group); err != nil {
		return nil, err
	}
	for _, t := range topics {
		if _, err := f.topic(t); err != nil {
			return nil, err
		}
	}
	g, err := f.group(group)
	if err != nil {
		return nil, err
	}
	out := *g
	return &out, nil
}

// SetGroupConfig creates a group it does not know, as the brokers do.
func (f *fakeBrokers) SetGroupConfig(_ context.Context, cfg api.GroupConfig) (*api.GroupConfig, error) {
	group := cfg.Group
	if err := f.call("SetGroupConfig", group); err != nil {
		return nil, err
	}
	g, ok := f.groups[group]
	if !ok {
		g = &api.GroupDescription{Group: group, State: "Empty"}
		f.groups[group] = g
	}
	g.AssignmentStrategy, g.SessionTimeoutMs = cfg.AssignmentStrategy, cfg.SessionTimeoutMs
	if g.SessionTimeoutMs == 0 {
		g.SessionTimeoutMs = 30000 // the brokers' default
	}
	out := cfg
	out.Group = group
	return &out, nil
}

// ResetOffsets moves every listed topic's committed offsets to 0 (the test
// tables only ask for earliest); the group must be empty.
func (f *fakeBrokers) ResetOffsets(_ context.Context, req api.ResetOffsetsRequest) ([]api.PartitionOffset, error) {
	group := req.Group
	if err := f.call("ResetOffsets", group); err != nil {
		return nil, err
	}
	if g := f.groups[group]; g != nil && len(g.Members) > 0 {
		return nil, api.Errorf(api.CodeNonEmptyGroup, "group %q has active members", group)
	}
	var out []api.PartitionOffset
	for _, t := range req.Topics {
		d, err := f.topic(t)
		if err != nil {
			return nil, err
		}
		for _, p := range d.Partitions {
			out = append(out, api.PartitionOffset{Topic: t, Partition: p.Partition})
		}
	}
	return out, nil
}

func (f *fakeBrokers) DeleteGroup(_ context.Context, group string) error {
	if err := f.call("DeleteGroup", group); err != nil {
		return err
	}
	g, err := f.group(group)
	if err != nil {
		return err
	}
	if len(g.Members) > 0 {
		return api.Errorf(api.CodeNonEmptyGroup, "group %q has %d active members", group, len(g.Members))
	}
	delete(f.groups, group)
	return nil
}
