package localcluster

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kairolog/kairolog/internal/imagebuild"
)

// imageRegistry is the cluster's OCI registry: go-containerregistry's
// registry with its blobs on disk, listening on a free port of 127.0.0.1.
// The node pulls through it as through a mirror of docker.io, so the
// chart's and samples' kairolog/broker:dev resolve to the images `make
// images` built, as `kind load` would make them available on a kind node.
type imageRegistry struct {
	host string // 127.0.0.1:<port>
	srv  *http.Server
}

// startRegistry serves a registry whose blobs live under dir.
func startRegistry(dir string, logger *slog.Logger) (*imageRegistry, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("image registry: %w", err)
	}
	h := registry.New(
		registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)),
		registry.Logger(log.New(slogWriter{logger}, "", 0)),
	)
	r := &imageRegistry{host: l.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := r.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Image registry stopped", "err", err)
		}
	}()
	return r, nil
}

// push copies images into the registry under their repository and tag
// ("docker.io/kairolog/broker:dev" → <host>/kairolog/broker:dev).
func (r *imageRegistry) push(ctx context.Context, images []imagebuild.Tagged) error {
	for _, t := range images {
		dest, err := name.NewTag(r.host+"/"+t.Ref.RepositoryStr()+":"+t.Ref.TagStr(), name.Insecure)
		if err != nil {
			return err
		}
		if err := remote.Write(dest, t.Image, remote.WithContext(ctx)); err != nil {
			return fmt.Errorf("push %s to the cluster's registry: %w", t.Ref, err)
		}
	}
	return nil
}

func (r *imageRegistry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// slogWriter turns the registry's request log lines into debug records.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug(strings.TrimSpace(string(p)))
	return len(p), nil
}
