package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kairolog/kairolog/internal/imagestore"
)

// containerImage is what one run of a container starts from: an image
// pulled from a registry and unpacked on the node, or, with the developer
// fallback of Config.Images, a binary of this machine.
type containerImage struct {
	pulled *imagestore.Image
	binary *Image
}

// id is the image ID the container status reports: the repository at the
// manifest digest, as containerd reports it.
func (i containerImage) id() string {
	if i.pulled != nil {
		return i.pulled.ID
	}
	return "kairo-local://" + i.binary.Binary
}

// errNeverPull means the image is not on the node and the pull policy is
// Never; the kubelet reports it as ErrImageNeverPull.
var errNeverPull = errors.New("image is not present with pull policy of Never")

// pullPolicy is the container's imagePullPolicy, defaulted as the API
// server does: Always for :latest or no tag, IfNotPresent otherwise.
func pullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	ref := c.Image
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return corev1.PullIfNotPresent
	}
	if i := strings.LastIndex(ref, ":"); i < 0 || strings.Contains(ref[i:], "/") || ref[i+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// acquireImage gets the container's image, retrying a failed pull with
// the kubelet's image back-off (ErrImagePull, then ImagePullBackOff) until
// it succeeds or ctx ends.
func (c *containerRuntime) acquireImage(ctx context.Context) (containerImage, bool) {
	for {
		img, err := c.pullImage(ctx)
		if err == nil {
			c.pullBackoff.reset()
			return img, true
		}
		if ctx.Err() != nil || !c.waitForImage(ctx, err) {
			return containerImage{}, false
		}
	}
}

// pullImage applies the pull policy: Never uses the image if it is on
// the node, IfNotPresent pulls it only if it is not, Always resolves the
// reference again (fetching only layers the node lacks).
func (c *containerRuntime) pullImage(ctx context.Context) (containerImage, error) {
	deps := c.pod.deps
	ref := c.spec.Image
	if _, mapped := deps.images[ImageRepository(ref)]; mapped || deps.store == nil {
		bin, err := deps.images.Resolve(ref)
		if err != nil {
			return containerImage{}, err
		}
		c.pod.event(corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine (%s)", ref, bin.Binary))
		return containerImage{binary: &bin}, nil
	}
	policy := pullPolicy(&c.spec)
	if policy != corev1.PullAlways {
		if img, ok := deps.store.Present(ref); ok {
			c.pod.event(corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", ref))
			return containerImage{pulled: img}, nil
		}
		if policy == corev1.PullNever {
			return containerImage{}, errNeverPull
		}
	}
	c.pod.event(corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", ref))
	res, err := deps.store.Pull(ctx, ref)
	if err != nil {
		return containerImage{}, err
	}
	took := res.Took.Round(time.Millisecond)
	c.pod.event(corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.",
		ref, took, took, res.Size))
	return containerImage{pulled: res.Image}, nil
}

// waitForImage reports a failed pull as the kubelet does and waits out the
// image back-off (10 s doubling to 5 min, or Config.RestartBackoff's base):
// the container is Waiting in ErrImagePull, then in ImagePullBackOff until
// the next attempt, with a Failed and a BackOff event. It returns false if
// ctx ended first.
func (c *containerRuntime) waitForImage(ctx context.Context, err error) bool {
	ref := c.spec.Image
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	delay := c.pullBackoff.next()
	if delay == 0 {
		delay = c.pullBackoff.base
		if delay <= 0 {
			delay = defaultBackoffBase
		}
	}
	if errors.Is(err, errNeverPull) {
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", ref)
		c.pod.setWaiting(c, "ErrImageNeverPull", msg)
		c.pod.event(corev1.EventTypeWarning, "ErrImageNeverPull", msg)
		return sleep(delay)
	}
	c.pod.setWaiting(c, "ErrImagePull", err.Error())
	c.pod.event(corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", ref, err))
	c.pod.event(corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
	first := min(delay/4, time.Second)
	if !sleep(first) {
		return false
	}
	c.pod.setWaiting(c, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %v", ref, err))
	c.pod.event(corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", ref))
	c.pod.event(corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
	return sleep(delay - first)
}
