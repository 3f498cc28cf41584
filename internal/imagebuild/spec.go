package imagebuild

import (
	"path/filepath"
)

// NonRootID is the user and group the images run as (distroless's
// "nonroot"), and the operator's default runAsUser and fsGroup.
const NonRootID = 65532

// imagePath is the PATH of the images, distroless's.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Entry is one file or directory of an image's program layer.
type Entry struct {
	// Path inside the image, absolute ("/usr/local/bin/broker").
	Path string
	// Source is the file on this machine whose bytes the entry holds; empty
	// for a directory.
	Source string
	// Mode is the permission bits (0o755 for programs).
	Mode int64
	// UID and GID own the entry.
	UID, GID int
}

// Spec is one image: its program layer and its configuration, which follow
// the Dockerfile's target of the same name.
type Spec struct {
	// Name is the Dockerfile target ("broker").
	Name string
	// Repository is the image's repository ("kairolog/broker").
	Repository string
	// Title and Description are the OCI title and description labels.
	Title, Description string
	// Entries are the program layer: programs and the directories they need.
	Entries []Entry
	// Entrypoint is the image's ENTRYPOINT.
	Entrypoint []string
	// Env is the image's ENV, PATH first.
	Env []string
	// WorkingDir is the image's WORKDIR ("" for /).
	WorkingDir string
	// Volumes are the image's VOLUME paths.
	Volumes []string
	// ExposedPorts are the image's EXPOSE ports ("8080/tcp").
	ExposedPorts []string
}

// Paths of the broker image that the operator relies on.
const (
	// BrokerDataDir is the broker's default data directory (KAIRO_DATA_DIR),
	// created owned by the non-root user.
	BrokerDataDir = "/var/lib/kairolog/data"
	// BrokerVolume is the broker image's VOLUME and WORKDIR, where the
	// operator mounts each broker's claim.
	BrokerVolume = "/var/lib/kairolog"
)

// BrokerSpec is kairolog/broker: the broker and kairoctl from binDir.
func BrokerSpec(binDir string) Spec {
	return Spec{
		Name:        "broker",
		Repository:  "kairolog/broker",
		Title:       "KairoLog broker",
		Description: "A Kafka-shaped replicated commit log with an HTTP API; includes kairoctl.",
		Entries: []Entry{
			{Path: "/usr/local/bin/broker", Source: filepath.Join(binDir, "broker"), Mode: 0o755},
			{Path: "/usr/local/bin/kairoctl", Source: filepath.Join(binDir, "kairoctl"), Mode: 0o755},
			{Path: BrokerDataDir, Mode: 0o755, UID: NonRootID, GID: NonRootID},
		},
		Entrypoint: []string{"/usr/local/bin/broker"},
		Env:        []string{imagePath, "KAIRO_DATA_DIR=" + BrokerDataDir},
		WorkingDir: BrokerVolume,
		Volumes:    []string{BrokerVolume},
		// HTTP API and metrics; raft transport of the metadata quorum.
		ExposedPorts: []string{"8080/tcp", "9093/tcp"},
	}
}

// OperatorSpec is kairolog/operator: the manager from binDir.
func OperatorSpec(binDir string) Spec {
	return Spec{
		Name:        "operator",
		Repository:  "kairolog/operator",
		Title:       "KairoLog operator",
		Description: "Runs KairoLog clusters, topics and consumer groups on Kubernetes.",
		Entries: []Entry{
			{Path: "/manager", Source: filepath.Join(binDir, "manager"), Mode: 0o755},
		},
		Entrypoint: []string{"/manager"},
		Env:        []string{imagePath},
		// Metrics; health and readiness probes.
		ExposedPorts: []string{"8080/tcp", "8081/tcp"},
	}
}

// Specs are the images `make images` builds, from the binaries in binDir.
func Specs(binDir string) []Spec {
	return []Spec{BrokerSpec(binDir), OperatorSpec(binDir)}
}
