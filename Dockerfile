# syntax=docker/dockerfile:1
#
# KairoLog ships two images, built from this file as two targets:
#
#   docker build --target broker   -t kairolog/broker:dev   .
#   docker build --target operator -t kairolog/operator:dev .
#
# Two images rather than one holding both binaries: brokers are stateful pods
# that a user upgrades on their own schedule (KairoCluster spec.image), the
# operator is a stateless Deployment upgraded with the chart; separate images
# keep each pod's image small, give each its own version and vulnerability
# report, and mean an operator fix never changes the image a broker runs.
# Each image's ENTRYPOINT is its program, so pods set `args` only.
#
# Binaries are static (CGO_ENABLED=0) on distroless/static, running as the
# non-root user 65532. The Go build lines are the Makefile's `build` target's
# (GO_BUILD_ENV, GO_BUILD_FLAGS); test/packaging fails when they differ.

ARG GO_VERSION=1.26

# --- Sources and modules, shared by both builds -----------------------------
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS source
ARG TARGETOS
ARG TARGETARCH
# Cross-compile on the build machine's platform for the image's platform.
ENV GOOS=${TARGETOS} GOARCH=${TARGETARCH}
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY api/ api/
COPY broker/ broker/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/

# --- Broker and kairoctl ----------------------------------------------------
FROM source AS build-broker
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/broker ./cmd/broker && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/kairoctl ./cmd/kairoctl
# The data volume's mount point, created here because the runtime image has no shell.
RUN mkdir -p /out/data

# --- Operator ---------------------------------------------------------------
FROM source AS build-operator
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/manager ./cmd/manager

# --- Runtime base -----------------------------------------------------------
FROM gcr.io/distroless/static-debian12:nonroot AS runtime
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED
LABEL org.opencontainers.image.source="https://github.com/kairolog/kairolog" \
      org.opencontainers.image.url="https://github.com/kairolog/kairolog" \
      org.opencontainers.image.documentation="https://github.com/kairolog/kairolog/tree/main/docs" \
      org.opencontainers.image.vendor="The KairoLog Authors" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
USER 65532:65532

# --- kairolog/broker --------------------------------------------------------
FROM runtime AS broker
LABEL org.opencontainers.image.title="KairoLog broker" \
      org.opencontainers.image.description="A Kafka-shaped replicated commit log with an HTTP API; includes kairoctl."
COPY --from=build-broker /out/broker /out/kairoctl /usr/local/bin/
# The operator mounts each broker's volume claim here and passes
# --data-dir=/var/lib/kairolog/data; the VOLUME is the mount point itself, so a
# runtime never hides the claim's data directory behind an anonymous volume.
COPY --from=build-broker --chown=65532:65532 /out/data /var/lib/kairolog/data
ENV KAIRO_DATA_DIR=/var/lib/kairolog/data
WORKDIR /var/lib/kairolog
VOLUME /var/lib/kairolog
# HTTP API and metrics; raft transport of the metadata quorum.
EXPOSE 8080 9093
ENTRYPOINT ["/usr/local/bin/broker"]

# --- kairolog/operator ------------------------------------------------------
FROM runtime AS operator
LABEL org.opencontainers.image.title="KairoLog operator" \
      org.opencontainers.image.description="Runs KairoLog clusters, topics and consumer groups on Kubernetes."
COPY --from=build-operator /out/manager /manager
# Metrics; health and readiness probes.
EXPOSE 8080 8081
ENTRYPOINT ["/manager"]
