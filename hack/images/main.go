// Command images builds KairoLog's OCI images without a container engine
// (`make images`) and pushes them to a registry (`make images-push`).
//
//	go run ./hack/images build --bin bin --out bin/images
//	go run ./hack/images push --layout bin/images/oci --to registry.example.com/team
//
// build writes <out>/oci (an OCI image layout) and <out>/broker.tar and
// <out>/operator.tar (`docker save` archives for `docker load` or `kind load
// image-archive`),
// and prints each image's digest and size. push copies every image of the
// layout to <to>/<name>:<tag> ("registry.example.com/team/broker:dev"),
// with the credentials of ~/.docker/config.json.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kairolog/kairolog/internal/imagebuild"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: images build|push [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (build or push)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding broker, kairoctl and manager (make build)")
	out := fs.String("out", "bin/images", "output directory: oci/ (OCI layout), broker.tar and operator.tar")
	broker := fs.String("broker", "kairolog/broker:dev", "reference of the broker image")
	operator := fs.String("operator", "kairolog/operator:dev", "reference of the operator image")
	version := fs.String("version", "dev", "org.opencontainers.image.version label")
	revision := fs.String("revision", "unknown", "org.opencontainers.image.revision label")
	epoch := fs.Int64("created", sourceDateEpoch(), "creation time in Unix seconds (default SOURCE_DATE_EPOCH, else 0)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	began := time.Now()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(*out, ".scratch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	b, err := imagebuild.NewBuilder(imagebuild.Options{
		Version: *version, Revision: *revision, Created: time.Unix(*epoch, 0), Scratch: scratch,
	})
	if err != nil {
		return err
	}
	refs := map[string]string{"broker": *broker, "operator": *operator}
	var images []imagebuild.Tagged
	for _, spec := range imagebuild.Specs(*bin) {
		ref, err := name.NewTag(refs[spec.Name])
		if err != nil {
			return fmt.Errorf("--%s: %w", spec.Name, err)
		}
		img, err := b.Build(spec)
		if err != nil {
			return fmt.Errorf("%s: %w (run make build first)", spec.Name, err)
		}
		images = append(images, imagebuild.Tagged{Ref: ref, Image: img})
	}
	layoutDir := filepath.Join(*out, "oci")
	if err := imagebuild.WriteLayout(layoutDir, images); err != nil {
		return err
	}
	var archives []string
	for _, t := range images {
		archive := filepath.Join(*out, path.Base(t.Ref.RepositoryStr())+".tar")
		if err := imagebuild.WriteArchive(archive, t); err != nil {
			return err
		}
		archives = append(archives, archive)
	}
	for _, t := range images {
		digest, err := t.Image.Digest()
		if err != nil {
			return err
		}
		size, err := compressedSize(t)
		if err != nil {
			return err
		}
		fmt.Printf("%-32s %s  %5.1f MiB compressed\n", imagebuild.FullName(t.Ref), digest, float64(size)/(1<<20))
	}
	fmt.Printf("wrote %s and %s in %.1fs\n", layoutDir, strings.Join(archives, ", "), time.Since(began).Seconds())
	return nil
}

// compressedSize is what a pull transfers: config and layers.
func compressedSize(t imagebuild.Tagged) (int64, error) {
	m, err := t.Image.Manifest()
	if err != nil {
		return 0, err
	}
	total := m.Config.Size
	for _, l := range m.Layers {
		total += l.Size
	}
	return total, nil
}

func sourceDateEpoch() int64 {
	if v, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		return v
	}
	return 0
}

func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	layoutDir := fs.String("layout", "bin/images/oci", "OCI layout written by build")
	to := fs.String("to", "", "registry and path prefix to push to, e.g. ghcr.io/acme (required)")
	insecure := fs.Bool("insecure", false, "allow a registry over plain HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required")
	}
	images, err := imagebuild.ReadLayout(*layoutDir)
	if err != nil {
		return fmt.Errorf("%s: %w (run make images first)", *layoutDir, err)
	}
	var opts []name.Option
	if *insecure {
		opts = append(opts, name.Insecure)
	}
	for _, t := range images {
		dest, err := name.NewTag(*to+"/"+path.Base(t.Ref.RepositoryStr())+":"+t.Ref.TagStr(), opts...)
		if err != nil {
			return err
		}
		if err := remote.Write(dest, t.Image, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", dest, err)
		}
		digest, _ := t.Image.Digest()
		fmt.Printf("%s@%s\n", dest.Name(), digest)
	}
	return nil
}
