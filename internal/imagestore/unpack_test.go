package imagestore

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// entry is one tar entry of a test layer.
type entry struct {
	name, body, link string
	typ              byte
	mode             int64
	uid, gid         int
}

func file(name, body string) entry {
	return entry{name: name, body: body, typ: tar.TypeReg, mode: 0o644}
}
func dir(name string) entry { return entry{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) entry {
	return entry{name: name, link: target, typ: tar.TypeSymlink, mode: 0o777}
}
func hardlink(name, target string) entry { return entry{name: name, link: target, typ: tar.TypeLink} }

func layer(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Uid: e.uid, Gid: e.gid,
			Size: int64(len(e.body)), ModTime: time.Unix(1, 0)}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unpackInto applies layers to a fresh root below a parent directory that
// the test can check for anything written outside the root.
func unpackInto(t *testing.T, layers ...[]byte) (string, error) {
	t.Helper()
	parent := t.TempDir()
	rootDir := filepath.Join(parent, "root")
	if err := os.Mkdir(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, l := range layers {
		if err := applyLayer(root, bytes.NewReader(l)); err != nil {
			return rootDir, err
		}
	}
	return rootDir, nil
}

// tree lists a directory as "path type [→ target | = content]" lines.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" → "+target)
		case info.IsDir():
			lines = append(lines, rel+"/")
		default:
			b, _ := os.ReadFile(p)
			lines = append(lines, rel+" = "+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestApplyLayers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers [][]entry
		want   string
	}{
		{
			name: "whiteout removes a lower file and a lower directory",
			layers: [][]entry{
				{dir("a"), file("a/x", "x"), file("a/y", "y"), dir("b"), file("b/z", "z")},
				{file("a/.wh.x", ""), file(".wh.b", "")},
			},
			want: "a/\na/y = y",
		},
		{
			name: "opaque directory hides the lower layers' entries, not its own",
			layers: [][]entry{
				{dir("d"), file("d/old", "old"), dir("d/sub"), file("d/sub/deep", "deep"), file("keep", "k")},
				{file("d/new-before", "1"), file("d/.wh..wh..opq", ""), file("d/new-after", "2")},
			},
			want: "d/\nd/new-after = 2\nd/new-before = 1\nkeep = k",
		},
		{
			name: "a later entry replaces an earlier one of another type",
			layers: [][]entry{
				{file("f", "file"), dir("g"), file("g/inner", "i"), symlink("l", "f")},
				{dir("f"), file("f/now-a-dir", "d"), file("g", "now a file"), file("l", "now a file too")},
			},
			want: "f/\nf/now-a-dir = d\ng = now a file\nl = now a file too",
		},
		{
			name: "relative links inside the root, and a write through one",
			layers: [][]entry{
				{dir("usr"), dir("usr/lib"), file("usr/lib/libx", "lib"), symlink("lib", "usr/lib"),
					dir("etc"), symlink("etc/up", "../usr/lib/libx"), hardlink("usr/lib/libx.1", "usr/lib/libx")},
				{file("lib/through-link", "t")},
			},
			want: "etc/\netc/up → ../usr/lib/libx\nlib → usr/lib\nusr/\nusr/lib/\nusr/lib/libx = lib\nusr/lib/libx.1 = lib\nusr/lib/through-link = t",
		},
		{
			name:   "./-prefixed names",
			layers: [][]entry{{dir("./"), dir("./etc/"), file("./etc/passwd", "root")}},
			want:   "etc/\netc/passwd = root",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var layers [][]byte
			for _, l := range tc.layers {
				layers = append(layers, layer(t, l...))
			}
			root, err := unpackInto(t, layers...)
			if err != nil {
				t.Fatal(err)
			}
			if got := tree(t, root); got != tc.want {
				t.Errorf("root:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestApplyLayerKeepsOwnersAndModes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	root, err := unpackInto(t, layer(t,
		entry{name: "data", typ: tar.TypeDir, mode: 0o750, uid: 65532, gid: 65532},
		entry{name: "tmp", typ: tar.TypeDir, mode: 0o1777},
		entry{name: "bin-suid", typ: tar.TypeReg, mode: 0o4755, body: "x"},
		entry{name: "data/f", typ: tar.TypeReg, mode: 0o640, uid: 65532, gid: 1000, body: "f"},
	))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]struct {
		mode     os.FileMode
		uid, gid uint32
	}{
		"data":     {os.ModeDir | 0o750, 65532, 65532},
		"tmp":      {os.ModeDir | os.ModeSticky | 0o777, 0, 0},
		"bin-suid": {os.ModeSetuid | 0o755, 0, 0},
		"data/f":   {0o640, 65532, 1000},
	} {
		info, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		st := info.Sys().(*syscall.Stat_t)
		if info.Mode() != want.mode || st.Uid != want.uid || st.Gid != want.gid {
			t.Errorf("%s: %s %d:%d, want %s %d:%d", p, info.Mode(), st.Uid, st.Gid, want.mode, want.uid, want.gid)
		}
	}
}

// TestApplyLayerRefusesEscapes: every way out of the root is refused with
// ErrUnsafeLayer, and nothing lands outside the root.
func TestApplyLayerRefusesEscapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers [][]entry
		want   string // in the error
	}{
		{"a name that climbs out", [][]entry{{file("../evil", "x")}}, `"../evil" leaves the root`},
		{"a name that climbs out through a directory", [][]entry{{dir("a"), file("a/../../evil", "x")}}, "leaves the root"},
		{"an absolute name", [][]entry{{file("/evil", "x")}}, "absolute path"},
		{"an absolute symbolic link", [][]entry{{symlink("etc", "/etc")}}, "is absolute"},
		{"a symbolic link that climbs out", [][]entry{{symlink("up", "../outside")}}, "leaves the root"},
		{"a nested symbolic link that climbs out", [][]entry{{dir("a"), dir("a/b"), symlink("a/b/up", "../../../outside")}}, "leaves the root"},
		{"a hard link to a path outside", [][]entry{{hardlink("h", "../outside")}}, "leaves the root"},
		{"an absolute hard link", [][]entry{{hardlink("h", "/etc/passwd")}}, "leaves the root"},
		{"a hard link to a directory", [][]entry{{dir("d"), hardlink("h", "d")}}, "not a regular file"},
		{"a device", [][]entry{{{name: "dev/mem", typ: tar.TypeChar, mode: 0o600}}}, "character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var layers [][]byte
			for _, l := range tc.layers {
				layers = append(layers, layer(t, l...))
			}
			root, err := unpackInto(t, layers...)
			if !errors.Is(err, ErrUnsafeLayer) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrUnsafeLayer mentioning %q", err, tc.want)
			}
			siblings, _ := os.ReadDir(filepath.Dir(root))
			if len(siblings) != 1 {
				t.Errorf("something was written next to the root: %v", siblings)
			}
		})
	}
}

// TestApplyLayerCannotFollowAPlantedLink: a symbolic link that leaves the
// root, made on disk by something other than the layers, is not followed
// by a later layer's write.
func TestApplyLayerCannotFollowAPlantedLink(t *testing.T) {
	parent := t.TempDir()
	rootDir := filepath.Join(parent, "root")
	outside := filepath.Join(parent, "outside")
	for _, d := range []string{rootDir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(rootDir, "planted")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = applyLayer(root, bytes.NewReader(layer(t, file("planted/evil", "x"))))
	if err == nil {
		t.Fatal("a write through a link to outside the root succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("written outside the root: %v", entries)
	}
}

// TestApplyLargeLayerStreams unpacks a 256 MiB file from a streamed layer
// and checks its bytes and that the heap stayed small.
func TestApplyLargeLayerStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	const size = 256 << 20
	pr, pw := io.Pipe()
	want := sha256.New()
	go func() {
		tw := tar.NewWriter(pw)
		if err := tw.WriteHeader(&tar.Header{Name: "big", Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
			pw.CloseWithError(err)
			return
		}
		block := make([]byte, 1<<20)
		for i := 0; i < size/len(block); i++ {
			for j := range block {
				block[j] = byte(i + j*7)
			}
			want.Write(block)
			if _, err := tw.Write(block); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(tw.Close())
	}()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = applyLayer(root, pr)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := sha256.New()
	n, err := io.Copy(got, f)
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("unpacked %d bytes (err %v), content matches: %v", n, err, bytes.Equal(got.Sum(nil), want.Sum(nil)))
	}
	if p := peak.Load(); p > 64<<20 {
		t.Errorf("heap in use peaked at %d MiB while unpacking a %d MiB layer", p>>20, size>>20)
	}
	t.Logf("heap in use peaked at %.1f MiB", float64(peak.Load())/(1<<20))
}
