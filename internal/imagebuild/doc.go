// Package imagebuild builds KairoLog's container images, kairolog/broker and
// kairolog/operator, as OCI images without a container engine, with
// go-containerregistry.
//
// Each image is two layers: a base layer built here (the only things a
// static Go program running as a non-root user needs: /etc/passwd and
// /etc/group with root and nonroot (65532), the CA bundle of Debian's
// ca-certificates package, committed under base/, /tmp and the nonroot home
// directory), shared by both images, and a layer with the program built by
// `make build`. The image configuration (entrypoint, user, environment,
// working directory, volume, ports, labels) is the Dockerfile's; a test in
// test/packaging keeps the two in step.
//
// The same inputs give the same digests: tar headers carry fixed times and
// no user names, entries are sorted, compression is deterministic, and the
// creation time is the one the caller gives (the Unix epoch by default, as
// with SOURCE_DATE_EPOCH=0).
package imagebuild
