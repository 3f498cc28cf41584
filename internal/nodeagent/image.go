package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrImageNotMapped means a container asks for an image the binary map
// does not have.
var ErrImageNotMapped = errors.New("image is not mapped to a local binary")

// Image is what the node knows of a container image: the binary that is
// its entrypoint on this machine and the parts of the image configuration
// that change how the process runs.
type Image struct {
	// Binary is the entrypoint, a program built from this repository.
	Binary string
	// Env is the image's ENV; the container's env entries override it.
	Env []string
	// WorkingDir is the image's WORKDIR; empty means a private scratch
	// directory (a container's own root rather than the node's).
	WorkingDir string
	// Volumes are the image's VOLUME paths: each container gets its own
	// empty directory there, as a container runtime's anonymous volume.
	Volumes []string
	// Tools are the image's other programs, by name, for `kubectl exec`
	// (the broker image ships kairoctl). Other commands run from the node.
	Tools map[string]string
}

// ImageMap maps an image repository ("kairolog/broker") to a binary of this
// machine that the node runs instead of pulling the image: the developer
// fallback (kairo-local --binary-images). Such a container runs over the
// node's own filesystem as root; its securityContext is not applied.
type ImageMap map[string]Image

// imagePath is the PATH of the project's distroless base image.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// DefaultImageMap maps the project's two images to the binaries the Makefile
// builds under repoDir/bin, with the ENV, WORKDIR and VOLUME the Dockerfile
// gives them (image_test.go keeps the two in step).
func DefaultImageMap(repoDir string) ImageMap {
	return ImageMap{
		"kairolog/broker": {
			Binary:     filepath.Join(repoDir, "bin", "broker"),
			Env:        []string{imagePath, "KAIRO_DATA_DIR=/var/lib/kairolog/data"},
			WorkingDir: "/var/lib/kairolog",
			Volumes:    []string{"/var/lib/kairolog"},
			Tools:      map[string]string{"kairoctl": filepath.Join(repoDir, "bin", "kairoctl")},
		},
		"kairolog/operator": {
			Binary: filepath.Join(repoDir, "bin", "manager"),
			Env:    []string{imagePath},
		},
	}
}

// Set maps a repository to a binary given as "repository=binary", the form
// of the --image-map flag. A repository the map already knows keeps its
// image configuration and only changes binary.
func (m ImageMap) Set(spec string) error {
	repo, bin, ok := strings.Cut(spec, "=")
	if !ok || repo == "" || bin == "" {
		return fmt.Errorf("image mapping %q: want repository=binary", spec)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	img := m[ImageRepository(repo)]
	img.Binary = abs
	m[ImageRepository(repo)] = img
	return nil
}

// Merge applies overrides to m: an override that names only a binary
// keeps the configuration m has for that repository.
func (m ImageMap) Merge(overrides ImageMap) {
	for repo, o := range overrides {
		repo = ImageRepository(repo)
		if base, ok := m[repo]; ok && o.Env == nil && o.WorkingDir == "" && o.Volumes == nil && o.Tools == nil {
			base.Binary = o.Binary
			m[repo] = base
			continue
		}
		m[repo] = o
	}
}

// Repositories lists the mapped repositories, sorted.
func (m ImageMap) Repositories() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Resolve returns the image for a reference, failing with ErrImageNotMapped
// (listing the repositories the node runs, to help whoever wrote the
// manifest) or with the error of a missing binary.
func (m ImageMap) Resolve(image string) (Image, error) {
	repo := ImageRepository(image)
	img, ok := m[repo]
	if !ok {
		known := make([]string, 0, len(m))
		for k := range m {
			known = append(known, k)
		}
		sort.Strings(known)
		return Image{}, fmt.Errorf("%w: %q (repository %q; this node runs %s)", ErrImageNotMapped, image, repo, strings.Join(known, ", "))
	}
	info, err := os.Stat(img.Binary)
	if err != nil {
		return Image{}, fmt.Errorf("image %q maps to %s: %w", image, img.Binary, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return Image{}, fmt.Errorf("image %q maps to %s, which is not an executable file", image, img.Binary)
	}
	return img, nil
}

// ImageRepository strips the registry host, the tag and the digest from an
// image reference: "ghcr.io/kairolog/broker:v1@sha256:…" → "kairolog/broker".
// Docker Hub's implicit "library/" prefix is removed too.
func ImageRepository(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	// A tag follows the last colon, unless that colon belongs to a registry
	// host:port before the first slash.
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		ref = ref[:i]
	}
	if first, rest, ok := strings.Cut(ref, "/"); ok &&
		(strings.ContainsAny(first, ".:") || first == "localhost") {
		ref = rest
	}
	return strings.TrimPrefix(ref, "library/")
}
