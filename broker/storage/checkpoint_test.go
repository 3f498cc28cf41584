package storage

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	entries := [][]int64{{0, 0}, {3, 120}, {7, 1 << 40}}
	if err := writeCheckpoint(dir, "cp", entries); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "cp"))
	if string(data) != "0\n3\n0 0\n3 120\n7 1099511627776\n" {
		t.Fatalf("file = %q", data)
	}
	got, err := readCheckpoint(dir, "cp", 2)
	if err != nil || !reflect.DeepEqual(got, entries) {
		t.Fatalf("read = %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cp"+tmpSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("temporary file left behind")
	}
	if err := writeOffsetCheckpoint(dir, "off", 99); err != nil {
		t.Fatal(err)
	}
	if off, ok := readOffsetCheckpoint(dir, "off"); !ok || off != 99 {
		t.Fatalf("offset checkpoint = %d %v", off, ok)
	}
	if _, ok := readOffsetCheckpoint(dir, "missing"); ok {
		t.Fatal("missing checkpoint read as present")
	}
	if _, err := readCheckpoint(dir, "missing", 1); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing checkpoint err = %v", err)
	}
}

func TestCheckpointRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty":         "",
		"bad version":   "1\n1\n5\n",
		"short":         "0\n2\n5\n",
		"extra lines":   "0\n1\n5\n6\n",
		"wrong fields":  "0\n1\n5 6\n",
		"not a number":  "0\n1\nfive\n",
		"negative size": "0\n-1\n",
		"binary":        "\x00\xff\x13",
	} {
		if err := os.WriteFile(filepath.Join(dir, "cp"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readCheckpoint(dir, "cp", 1); !errors.Is(err, errCheckpointCorrupt) {
			t.Errorf("%s: err = %v, want errCheckpointCorrupt", name, err)
		}
	}
}
