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

package resources

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigMapBuilder builds the broker configuration: spec.config merged over
// the operator's defaults, as a Java-properties file.
type ConfigMapBuilder struct{ *Builder }

// Build returns an empty ConfigMap named <cluster>-config.
func (b *ConfigMapBuilder) Build() (client.Object, error) {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: ConfigMapName(b.Cluster), Namespace: b.Cluster.Namespace}}, nil
}

// Update writes broker.properties and the labels.
func (b *ConfigMapBuilder) Update(obj client.Object) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("resources: ConfigMapBuilder got %T", obj)
	}
	b.mergeLabels(cm)
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[PropertiesKey] = b.Properties()
	return b.own(cm)
}

// DefaultConfig is the operator's broker configuration before spec.config.
// It depends only on the default replication factor fixed at creation, so
// scaling a cluster does not restart its brokers: topics and
// __consumer_offsets get that many replicas, and acks=all needs two
// in-sync replicas once there are three.
func DefaultConfig(replication int32) map[string]string {
	minISR := int32(1)
	if replication >= 3 {
		minISR = 2
	}
	return map[string]string{
		"default.replication.factor":       strconv.Itoa(int(replication)),
		"min.insync.replicas":              strconv.Itoa(int(minISR)),
		"offsets.topic.replication.factor": strconv.Itoa(int(replication)),
	}
}

// Config is the broker configuration: the defaults with spec.config over them.
func (b *Builder) Config() map[string]string {
	cfg := DefaultConfig(b.DefaultReplication)
	for k, v := range b.Cluster.Spec.Config {
		cfg[k] = v
	}
	return cfg
}

// Properties renders Config as a Java-properties file, keys sorted so that
// the same configuration always renders the same bytes.
func (b *Builder) Properties() string {
	cfg := b.Config()
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s strings.Builder
	s.WriteString("# Written by the KairoLog operator from the KairoCluster's spec.config\n")
	s.WriteString("# over the operator's defaults. Edits here are overwritten.\n")
	for _, k := range keys {
		s.WriteString(escapeProperty(k, true))
		s.WriteByte('=')
		s.WriteString(escapeProperty(cfg[k], false))
		s.WriteByte('\n')
	}
	return s.String()
}

// escapeProperty escapes s as Java's Properties.store does: backslashes and
// control characters always, separators and comment marks in keys, and a
// value's leading spaces.
func escapeProperty(s string, key bool) string {
	var out strings.Builder
	for i, r := range s {
		switch r {
		case '\\':
			out.WriteString("\\\\")
		case '\n':
			out.WriteString("\\n")
		case '\r':
			out.WriteString("\\r")
		case '\t':
			out.WriteString("\\t")
		case '\f':
			out.WriteString("\\f")
		case '=', ':', '#', '!':
			if key {
				out.WriteByte('\\')
			}
			out.WriteRune(r)
		case ' ':
			if key || i == 0 {
				out.WriteByte('\\')
			}
			out.WriteRune(r)
		default:
			out.WriteRune(r)
		}
	}
	return out.String()
}
