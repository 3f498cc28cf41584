package imagebuild

import (
	_ "embed"
	"fmt"
	"strings"
)

// caBundle is the certificates of Debian's ca-certificates package
// (version in base/ca-certificates.version), refreshed by
// hack/refresh-ca-bundle.sh. It is committed, rather than read from the
// building machine, so that every machine builds the same digest.
//
//go:embed base/ca-certificates.crt
var caBundle []byte

//go:embed base/ca-certificates.version
var caVersion string

// CABundlePath is where the base layer puts the CA bundle: where Debian,
// distroless and Go's crypto/x509 look first.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// CAVersion is the Debian ca-certificates version the bundle comes from.
func CAVersion() string { return strings.TrimSpace(caVersion) }

// CABundle returns the base layer's CA bundle.
func CABundle() []byte { return append([]byte(nil), caBundle...) }

// baseEntries is the base layer: users, groups, CA bundle and the two
// directories a non-root program expects (a world-writable /tmp and its
// home). Nothing else: no shell, no package manager, no libc.
func baseEntries() []layerEntry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootID, NonRootID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootID)
	return []layerEntry{
		{path: "etc/passwd", data: []byte(passwd), mode: 0o644},
		{path: "etc/group", data: []byte(group), mode: 0o644},
		{path: relative(CABundlePath), data: caBundle, mode: 0o644},
		{path: "tmp", dir: true, mode: 0o1777},
		{path: "home/nonroot", dir: true, mode: 0o700, uid: NonRootID, gid: NonRootID},
		{path: "root", dir: true, mode: 0o700},
	}
}
