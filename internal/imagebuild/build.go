package imagebuild

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Options are what varies between builds of the same sources.
type Options struct {
	// Version and Revision fill the org.opencontainers.image.version and
	// .revision labels ("dev" and "unknown" when empty, the Dockerfile's
	// defaults).
	Version, Revision string
	// Created is the image's creation time and every file's modification
	// time; the Unix epoch when zero, so that a build is reproducible.
	Created time.Time
	// Arch is the image's architecture (GOARCH); this machine's when empty.
	// The binaries must have been built for it.
	Arch string
	// Scratch is a directory for the compressed layers while the images
	// are written; it must outlive every use of the returned images.
	Scratch string
}

// Label keys every image carries, from the Dockerfile's runtime stage.
var staticLabels = map[string]string{
	"org.opencontainers.image.source":        "https://github.com/kairolog/kairolog",
	"org.opencontainers.image.url":           "https://github.com/kairolog/kairolog",
	"org.opencontainers.image.documentation": "https://github.com/kairolog/kairolog/tree/main/docs",
	"org.opencontainers.image.vendor":        "The KairoLog Authors",
	"org.opencontainers.image.licenses":      "Apache-2.0",
}

// Labels are the OCI annotations of an image's configuration.
func Labels(spec Spec, opts Options) map[string]string {
	labels := map[string]string{}
	for k, v := range staticLabels {
		labels[k] = v
	}
	labels["org.opencontainers.image.version"] = orDefault(opts.Version, "dev")
	labels["org.opencontainers.image.revision"] = orDefault(opts.Revision, "unknown")
	labels["org.opencontainers.image.created"] = created(opts).Format(time.RFC3339)
	labels["org.opencontainers.image.title"] = spec.Title
	labels["org.opencontainers.image.description"] = spec.Description
	return labels
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func created(opts Options) time.Time {
	if opts.Created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return opts.Created.UTC()
}

// Builder builds images that share one base layer.
type Builder struct {
	opts Options
	base v1.Layer
}

// NewBuilder builds the base layer.
func NewBuilder(opts Options) (*Builder, error) {
	if opts.Scratch == "" {
		return nil, fmt.Errorf("imagebuild: Options.Scratch is required")
	}
	if opts.Arch == "" {
		opts.Arch = runtime.GOARCH
	}
	base, err := buildLayer(opts.Scratch, "base", baseEntries(), created(opts))
	if err != nil {
		return nil, err
	}
	return &Builder{opts: opts, base: base}, nil
}

// Build builds one image: the base layer, the spec's program layer and its
// configuration.
func (b *Builder) Build(spec Spec) (v1.Image, error) {
	when := created(b.opts)
	var entries []layerEntry
	for _, e := range spec.Entries {
		entries = append(entries, layerEntry{
			path: relative(e.Path), dir: e.Source == "", source: e.Source,
			mode: e.Mode, uid: e.UID, gid: e.GID,
		})
	}
	app, err := buildLayer(b.opts.Scratch, spec.Name, entries, when)
	if err != nil {
		return nil, err
	}

	cfg := v1.Config{
		Entrypoint:   spec.Entrypoint,
		Env:          spec.Env,
		User:         strconv.Itoa(NonRootID) + ":" + strconv.Itoa(NonRootID),
		WorkingDir:   spec.WorkingDir,
		Labels:       Labels(spec, b.opts),
		ExposedPorts: map[string]struct{}{},
	}
	for _, p := range spec.ExposedPorts {
		cfg.ExposedPorts[p] = struct{}{}
	}
	if len(spec.Volumes) > 0 {
		cfg.Volumes = map[string]struct{}{}
		for _, v := range spec.Volumes {
			cfg.Volumes[v] = struct{}{}
		}
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: b.base, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: when}, CreatedBy: "imagebuild: base (passwd, group, CA bundle from Debian ca-certificates " + CAVersion() + ")"}},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: when}, CreatedBy: "imagebuild: " + spec.Name + " program layer"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = b.opts.Arch
	cf.OS = "linux"
	cf.Created = v1.Time{Time: when}
	cf.Config = cfg
	return mutate.ConfigFile(img, cf)
}
