package nodeagent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func waitingIn(reason string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		w := containerStatus(p).State.Waiting
		return w != nil && w.Reason == reason
	}
}

// TestImagePullBackOff: a tag the registry does not have leaves the pod
// Pending in ErrImagePull, then ImagePullBackOff, with the kubelet's
// events; once the tag is pushed the next attempt pulls it and the
// container runs, reporting the image's digest as its imageID.
func TestImagePullBackOff(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	reg, err := startTestRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.close()
	pod := fixturePod("kairo-0", corev1.RestartPolicyAlways)
	pod.Spec.Containers[0].Image = "kairolog/broker:not-yet"
	tp := startPodWith(t, pod, nil, storeFor(t, reg))

	p := tp.wait("ErrImagePull", waitingIn("ErrImagePull"))
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	p = tp.wait("ImagePullBackOff", waitingIn("ImagePullBackOff"))
	if msg := containerStatus(p).State.Waiting.Message; !strings.Contains(msg, `Back-off pulling image "kairolog/broker:not-yet"`) {
		t.Errorf("ImagePullBackOff message %q", msg)
	}
	for _, want := range []string{
		`Normal Pulling Pulling image "kairolog/broker:not-yet"`,
		`Warning Failed Failed to pull image "kairolog/broker:not-yet": failed to resolve reference "docker.io/kairolog/broker:not-yet": docker.io/kairolog/broker:not-yet: not found`,
		"Warning Failed Error: ErrImagePull",
		`Normal BackOff Back-off pulling image "kairolog/broker:not-yet"`,
		"Warning Failed Error: ImagePullBackOff",
	} {
		if !tp.events.has(want) {
			t.Errorf("no event %q in %v", want, tp.events.events)
		}
	}

	img, err := fixtureImage()
	if err != nil {
		t.Fatal(err)
	}
	digest := reg.push(t, "kairolog/broker:not-yet", img)
	p = tp.wait("running after the push", func(p *corev1.Pod) bool { return containerStatus(p).State.Running != nil })
	cs := containerStatus(p)
	if cs.ImageID != "docker.io/kairolog/broker@"+digest.String() || cs.Image != "docker.io/kairolog/broker:not-yet" {
		t.Errorf("image %q, imageID %q; want the digest %s", cs.Image, cs.ImageID, digest)
	}
	if !tp.events.has(`Normal Pulled Successfully pulled image "kairolog/broker:not-yet" in `) {
		t.Errorf("no Pulled event: %v", tp.events.events)
	}
	tp.waitListening()
}

// TestImagePullPolicy: with the registry down, IfNotPresent runs the image
// the node already has, Always fails to pull, and Never refuses an image
// the node does not have.
func TestImagePullPolicy(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	reg, err := startTestRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.close()
	img, err := fixtureImage()
	if err != nil {
		t.Fatal(err)
	}
	reg.push(t, "kairolog/broker:test", img)
	store := storeFor(t, reg)

	first := fixturePod("first", corev1.RestartPolicyAlways)
	first.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	tp := startPodWith(t, first, nil, store)
	tp.wait("running", func(p *corev1.Pod) bool { return containerStatus(p).State.Running != nil })
	reg.down.Store(true)

	for _, tc := range []struct {
		policy corev1.PullPolicy
		image  string
		check  func(*testPod)
	}{
		{corev1.PullIfNotPresent, "kairolog/broker:test", func(tp *testPod) {
			tp.wait("running from the node's copy", func(p *corev1.Pod) bool { return containerStatus(p).State.Running != nil })
			if !tp.events.has(`Normal Pulled Container image "kairolog/broker:test" already present on machine`) {
				t.Errorf("IfNotPresent events: %v", tp.events.events)
			}
		}},
		{corev1.PullAlways, "kairolog/broker:test", func(tp *testPod) {
			p := tp.wait("ErrImagePull", waitingIn("ErrImagePull"))
			if msg := containerStatus(p).State.Waiting.Message; !strings.Contains(msg, "503") {
				t.Errorf("Always with the registry down: %q, want the registry's 503", msg)
			}
		}},
		{corev1.PullNever, "kairolog/broker:absent", func(tp *testPod) {
			p := tp.wait("ErrImageNeverPull", waitingIn("ErrImageNeverPull"))
			if msg := containerStatus(p).State.Waiting.Message; msg != `Container image "kairolog/broker:absent" is not present with pull policy of Never` {
				t.Errorf("Never: %q", msg)
			}
		}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			pod := fixturePod("kairo-"+strings.ToLower(string(tc.policy)), corev1.RestartPolicyAlways)
			pod.Spec.Containers[0].Image = tc.image
			pod.Spec.Containers[0].ImagePullPolicy = tc.policy
			tc.check(startPodWith(t, pod, nil, store))
		})
	}
}
