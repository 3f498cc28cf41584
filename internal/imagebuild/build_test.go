package imagebuild

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// fakeBins writes stand-ins for the programs of the images.
func fakeBins(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range []string{"broker", "kairoctl", "manager"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte(content+" "+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func buildAll(t *testing.T, bins string, opts Options) []Tagged {
	t.Helper()
	opts.Scratch = t.TempDir()
	b, err := NewBuilder(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []Tagged
	for _, s := range Specs(bins) {
		img, err := b.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(s.Repository + ":dev")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Tagged{Ref: ref, Image: img})
	}
	return out
}

func digests(t *testing.T, images []Tagged) []string {
	t.Helper()
	var out []string
	for _, i := range images {
		d, err := i.Image.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

// TestBuildIsReproducible: the same binaries and options give the same
// digests, whatever the files' times on disk; other binaries or another
// revision give other digests.
func TestBuildIsReproducible(t *testing.T) {
	bins := fakeBins(t, "v1")
	first := digests(t, buildAll(t, bins, Options{Revision: "abc"}))
	later := time.Now().Add(time.Hour)
	for _, b := range []string{"broker", "kairoctl", "manager"} {
		if err := os.Chtimes(filepath.Join(bins, b), later, later); err != nil {
			t.Fatal(err)
		}
	}
	again := digests(t, buildAll(t, bins, Options{Revision: "abc"}))
	if strings.Join(first, " ") != strings.Join(again, " ") {
		t.Fatalf("two builds of the same inputs differ: %v and %v", first, again)
	}
	if other := digests(t, buildAll(t, fakeBins(t, "v2"), Options{Revision: "abc"})); other[0] == first[0] || other[1] == first[1] {
		t.Errorf("other binaries gave the same digests %v", other)
	}
	if other := digests(t, buildAll(t, bins, Options{Revision: "def"})); other[0] == first[0] {
		t.Errorf("another revision gave the same digest %s", other[0])
	}

	// The layout and the archive hold the same bytes twice too.
	images := buildAll(t, bins, Options{})
	sum := func() [2]string {
		dir := t.TempDir()
		if err := WriteLayout(filepath.Join(dir, "oci"), images); err != nil {
			t.Fatal(err)
		}
		var archives string
		for _, img := range images {
			if err := WriteArchive(filepath.Join(dir, "image.tar"), img); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "image.tar"))
			archives += string(b)
		}
		idx, _ := os.ReadFile(filepath.Join(dir, "oci", "index.json"))
		return [2]string{string(idx), archives}
	}
	if a, b := sum(), sum(); a != b {
		t.Error("writing the same images twice gave different layouts or archives")
	}
}

// files lists an image's flattened files: path → header.
func files(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	hdrs := map[string]*tar.Header{}
	data := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := "/" + strings.TrimSuffix(h.Name, "/")
		hdrs[p] = h
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			data[p], _ = io.ReadAll(tr)
		}
	}
	return hdrs, data
}

// TestBrokerImageContents: the broker image holds the base (users, groups,
// CA bundle, /tmp) and the programs, as the Dockerfile's image does, and
// nothing that could run a shell.
func TestBrokerImageContents(t *testing.T) {
	images := buildAll(t, fakeBins(t, "x"), Options{})
	hdrs, data := files(t, images[0].Image)
	want := map[string]struct {
		mode     int64
		uid, gid int
	}{
		"/usr/local/bin/broker":              {0o755, 0, 0},
		"/usr/local/bin/kairoctl":            {0o755, 0, 0},
		"/var/lib/kairolog/data":             {0o755, NonRootID, NonRootID},
		"/etc/passwd":                        {0o644, 0, 0},
		"/etc/group":                         {0o644, 0, 0},
		"/etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0},
		"/tmp":                               {0o1777, 0, 0},
		"/home/nonroot":                      {0o700, NonRootID, NonRootID},
	}
	for p, w := range want {
		h, ok := hdrs[p]
		if !ok {
			t.Errorf("%s is missing", p)
			continue
		}
		if h.Mode != w.mode || h.Uid != w.uid || h.Gid != w.gid {
			t.Errorf("%s: mode %o uid %d gid %d, want %o %d %d", p, h.Mode, h.Uid, h.Gid, w.mode, w.uid, w.gid)
		}
		if h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: uname %q gname %q mtime %s; want none and the epoch", p, h.Uname, h.Gname, h.ModTime)
		}
	}
	for p := range hdrs {
		if strings.HasPrefix(p, "/bin") || strings.HasPrefix(p, "/usr/bin") || strings.Contains(p, "sh") && !strings.HasPrefix(p, "/etc/ssl") {
			t.Errorf("unexpected %s in the image", p)
		}
	}
	if !strings.Contains(string(data["/etc/passwd"]), "nonroot:x:65532:65532:") || !strings.Contains(string(data["/etc/group"]), "nonroot:x:65532:") {
		t.Errorf("passwd/group:\n%s\n%s", data["/etc/passwd"], data["/etc/group"])
	}

	cf, err := images[0].Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.WorkingDir != BrokerVolume || cf.OS != "linux" {
		t.Errorf("config = %+v", cf.Config)
	}
	if _, ok := cf.Config.Volumes[BrokerVolume]; !ok || len(cf.Config.Volumes) != 1 {
		t.Errorf("volumes = %v", cf.Config.Volumes)
	}
	if cf.Config.Labels["org.opencontainers.image.title"] != "KairoLog broker" || cf.Config.Labels["org.opencontainers.image.version"] != "dev" {
		t.Errorf("labels = %v", cf.Config.Labels)
	}
}

// TestCABundle: the committed bundle is a list of CA certificates Go can
// use, and, where this machine has the same ca-certificates package
// installed, exactly its certificates in the order the refresh script
// writes them.
func TestCABundle(t *testing.T) {
	rest := CABundle()
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("certificate %d: %v", n, err)
		}
		if !cert.IsCA {
			t.Errorf("certificate %d (%s) is not a CA", n, cert.Subject)
		}
		n++
	}
	if n < 100 || len(strings.TrimSpace(string(rest))) != 0 {
		t.Fatalf("%d certificates, %d trailing bytes", n, len(rest))
	}
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "ca-certificates").Output()
	if err != nil || string(out) != CAVersion() {
		t.Logf("ca-certificates %q installed here, the bundle is from %s: not compared", out, CAVersion())
		return
	}
	matches, _ := filepath.Glob("/usr/share/ca-certificates/mozilla/*.crt")
	var want strings.Builder
	for _, m := range matches { // Glob sorts bytewise, as LC_ALL=C sort
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			want.WriteByte('\n')
		}
	}
	if want.String() != string(CABundle()) {
		t.Error("the committed bundle differs from the installed package's certificates: run hack/refresh-ca-bundle.sh")
	}
}
