package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// parseSegmentName splits "00000000000000000042.log" into 42 and ".log".
func parseSegmentName(name string) (base int64, suffix string, ok bool) {
	const digits = 20
	if len(name) <= digits {
		return 0, "", false
	}
	base, err := strconv.ParseInt(name[:digits], 10, 64)
	if err != nil || base < 0 || strings.ContainsAny(name[:digits], "+-") {
		return 0, "", false
	}
	suffix = name[digits:]
	return base, suffix, suffix == logSuffix || suffix == indexSuffix || suffix == timeIndexSuffix
}

// listSegments returns the base offsets of the .log files in dir, removing
// leftovers of interrupted writes and index files whose log is gone.
func listSegments(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []int64
	logs := map[int64]bool{}
	var indexes []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, tmpSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, err
			}
			continue
		}
		base, suffix, ok := parseSegmentName(name)
		switch {
		case !ok || e.IsDir():
		case suffix == logSuffix:
			bases = append(bases, base)
			logs[base] = true
		default:
			indexes = append(indexes, name)
		}
	}
	for _, name := range indexes {
		if base, _, _ := parseSegmentName(name); !logs[base] {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(bases)
	return bases, nil
}

// dropFiles deletes the files of segments that did not survive recovery.
func (l *Log) dropFiles(bases []int64) error {
	for _, b := range bases {
		for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
			if err := os.Remove(segmentPath(l.dir, b, suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
