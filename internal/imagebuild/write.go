package imagebuild

import (
	"fmt"
	"os"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefNameAnnotation names an image in an OCI layout's index, as
// containerd, skopeo and go-containerregistry read it.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// Tagged is an image with the reference it is published under
// ("docker.io/kairolog/broker:dev").
type Tagged struct {
	Ref   name.Tag
	Image v1.Image
}

// WriteLayout replaces dir with an OCI image layout holding images, each
// annotated with its full reference, in the order given.
func WriteLayout(dir string, images []Tagged) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, t := range images {
		if err := p.AppendImage(t.Image, layout.WithAnnotations(map[string]string{RefNameAnnotation: FullName(t.Ref)})); err != nil {
			return fmt.Errorf("%s: %w", t.Ref, err)
		}
	}
	return nil
}

// FullName spells a tag as containerd and the kubelet do, Docker Hub as
// docker.io: "docker.io/kairolog/broker:dev".
func FullName(t name.Tag) string {
	reg := t.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + t.RepositoryStr() + ":" + t.TagStr()
}

// WriteArchive writes one image to path as a `docker save` archive, the
// format `docker load`, `kind load image-archive` and `ctr images import`
// read. One image per archive: go-containerregistry writes several in map
// order, which would make the archive's bytes vary between builds.
func WriteArchive(path string, image Tagged) error {
	return tarball.WriteToFile(path, image.Ref, image.Image)
}

// ReadLayout returns the images of an OCI layout by their reference
// annotation, sorted by reference.
func ReadLayout(dir string) ([]Tagged, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Tagged
	for _, d := range m.Manifests {
		ref := d.Annotations[RefNameAnnotation]
		if ref == "" {
			continue
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: image %s: %w", dir, d.Digest, err)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		out = append(out, Tagged{Ref: tag, Image: img})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.Name() < out[j].Ref.Name() })
	return out, nil
}
