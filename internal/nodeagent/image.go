package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrImageNotMapped means a container asks for an image this node cannot run.
var ErrImageNotMapped = errors.New("image is not mapped to a local binary")

// ImageMap maps an image repository ("kairolog/broker") to the binary that is
// that image's entrypoint on this machine. The node has no container engine:
// "pulling" an image means finding its binary.
type ImageMap map[string]string

// DefaultImageMap maps the project's two images to the binaries the Makefile
// builds under repoDir/bin.
func DefaultImageMap(repoDir string) ImageMap {
	return ImageMap{
		"kairolog/broker":   filepath.Join(repoDir, "bin", "broker"),
		"kairolog/operator": filepath.Join(repoDir, "bin", "manager"),
	}
}

// Set adds or replaces mappings given as "repository=binary", the form of the
// --image-map flag.
func (m ImageMap) Set(spec string) error {
	repo, bin, ok := strings.Cut(spec, "=")
	if !ok || repo == "" || bin == "" {
		return fmt.Errorf("image mapping %q: want repository=binary", spec)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	m[ImageRepository(repo)] = abs
	return nil
}

// Resolve returns the binary for image, failing with ErrImageNotMapped (and
// the mapped repositories, to help whoever wrote the manifest) or with the
// error of a missing binary.
func (m ImageMap) Resolve(image string) (string, error) {
	repo := ImageRepository(image)
	bin, ok := m[repo]
	if !ok {
		known := make([]string, 0, len(m))
		for k := range m {
			known = append(known, k)
		}
		sort.Strings(known)
		return "", fmt.Errorf("%w: %q (repository %q; this node runs %s)", ErrImageNotMapped, image, repo, strings.Join(known, ", "))
	}
	info, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("image %q maps to %s: %w", image, bin, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("image %q maps to %s, which is not an executable file", image, bin)
	}
	return bin, nil
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
