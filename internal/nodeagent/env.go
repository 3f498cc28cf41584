package nodeagent

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// objectSource is how the node reads the objects a pod refers to. Like the
// kubelet, the node may only read the ConfigMaps, Secrets, claims and
// volumes of pods bound to it, so they are fetched one by one.
type objectSource interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	PersistentVolumeClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	PersistentVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error)
	// ServiceAccountToken requests a token bound to pod.
	ServiceAccountToken(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) (string, error)
	// Services lists the Services of a namespace, for service-link variables.
	Services(namespace string) ([]*corev1.Service, error)
}

// containerEnv computes a container's environment as the kubelet does:
// service-link variables, then envFrom, then env in order, with $(VAR)
// references expanded against what is already defined. The pod's status
// must already carry its IP so that status.podIP resolves.
func containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, src objectSource) (map[string]string, []string, error) {
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}

	svcEnv, err := serviceLinkEnv(pod, src)
	if err != nil {
		return nil, nil, err
	}
	lookup := func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		v, ok := svcEnv[k]
		return v, ok
	}

	for _, from := range c.EnvFrom {
		data, err := envFromData(ctx, pod.Namespace, from, src)
		if err != nil {
			return nil, nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := from.Prefix + k
			if len(validation.IsEnvVarName(name)) != 0 {
				continue // the kubelet skips (and reports) invalid keys
			}
			set(name, data[k])
		}
	}

	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, ok, err := envValueFrom(ctx, pod, c, e.ValueFrom, src)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}

	svcKeys := make([]string, 0, len(svcEnv))
	for k := range svcEnv {
		svcKeys = append(svcKeys, k)
	}
	sort.Strings(svcKeys)
	for _, k := range svcKeys {
		if _, ok := env[k]; !ok {
			set(k, svcEnv[k])
		}
	}
	return env, order, nil
}

// envList renders the environment as KEY=VALUE in definition order.
func envList(env map[string]string, order []string) []string {
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

func envFromData(ctx context.Context, ns string, from corev1.EnvFromSource, src objectSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := src.ConfigMap(ctx, ns, from.ConfigMapRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(from.ConfigMapRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom configmap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := src.Secret(ctx, ns, from.SecretRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(from.SecretRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		out := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

// envValueFrom resolves one valueFrom; ok is false when an optional source
// is missing and the variable is to be left out.
func envValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource, src objectSource) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := containerResource(c, from.ResourceFieldRef)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := src.ConfigMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(ref.Optional) {
				return "", false, nil
			}
			return "", false, err
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			if isOptional(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %s has no key %q", ref.Name, ref.Key)
		}
		return v, true, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := src.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(ref.Optional) {
				return "", false, nil
			}
			return "", false, err
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			if isOptional(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %s has no key %q", ref.Name, ref.Key)
		}
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// podField resolves a downward-API field path.
func podField(pod *corev1.Pod, path string) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		ips := make([]string, 0, len(pod.Status.HostIPs))
		for _, ip := range pod.Status.HostIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		ips := make([]string, 0, len(pod.Status.PodIPs))
		for _, ip := range pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	}
	return "", fmt.Errorf("unsupported downward API field %q", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations like the downward-API volume does.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, strconv.Quote(m[k]))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// nodeAllocatable stands in for the node's capacity where a container sets
// no limit, as the kubelet substitutes node allocatable.
var nodeAllocatable = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse(nodeCPU),
	corev1.ResourceMemory:           resource.MustParse(nodeMemory),
	corev1.ResourceEphemeralStorage: resource.MustParse(nodeEphemeralStorage),
}

func containerResource(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	var list corev1.ResourceList
	switch kind {
	case "limits":
		list = c.Resources.Limits
	case "requests":
		list = c.Resources.Requests
	default:
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		if kind == "requests" {
			// An unset request defaults to the limit, and then to zero.
			if l, ok := c.Resources.Limits[corev1.ResourceName(name)]; ok {
				q = l
			}
		} else {
			q = nodeAllocatable[corev1.ResourceName(name)]
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == string(corev1.ResourceCPU) {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

func isOptional(b *bool) bool { return b != nil && *b }

// serviceLinkEnv returns the Docker-link style variables the kubelet injects:
// always those of the default/kubernetes Service, and those of the pod's
// own namespace unless enableServiceLinks is false.
func serviceLinkEnv(pod *corev1.Pod, src objectSource) (map[string]string, error) {
	out := map[string]string{}
	add := func(svcs []*corev1.Service, onlyMaster bool) {
		for _, s := range svcs {
			if onlyMaster && s.Name != "kubernetes" {
				continue
			}
			if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
				continue
			}
			for k, v := range serviceVars(s) {
				out[k] = v
			}
		}
	}
	if pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
		svcs, err := src.Services(pod.Namespace)
		if err != nil {
			return nil, err
		}
		add(svcs, false)
	}
	if pod.Namespace != "default" || (pod.Spec.EnableServiceLinks != nil && !*pod.Spec.EnableServiceLinks) {
		svcs, err := src.Services("default")
		if err != nil {
			return nil, err
		}
		add(svcs, true)
	}
	return out, nil
}

func serviceVars(s *corev1.Service) map[string]string {
	name := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
	out := map[string]string{name + "_SERVICE_HOST": s.Spec.ClusterIP}
	for i, p := range s.Spec.Ports {
		port := strconv.Itoa(int(p.Port))
		if i == 0 {
			out[name+"_SERVICE_PORT"] = port
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out[name+"_PORT"] = proto + "://" + s.Spec.ClusterIP + ":" + port
		}
		if p.Name != "" {
			out[name+"_SERVICE_PORT_"+strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_"))] = port
		}
		protoUpper := strings.ToUpper(string(p.Protocol))
		if protoUpper == "" {
			protoUpper = "TCP"
		}
		prefix := name + "_PORT_" + port + "_" + protoUpper
		out[prefix] = strings.ToLower(protoUpper) + "://" + s.Spec.ClusterIP + ":" + port
		out[prefix+"_PROTO"] = strings.ToLower(protoUpper)
		out[prefix+"_PORT"] = port
		out[prefix+"_ADDR"] = s.Spec.ClusterIP
	}
	return out
}
