//go:build !unix

package storage

import "errors"

// Without mmap, sealed indexes stay on the heap.
func mmapFile(string) ([]byte, error) { return nil, errors.ErrUnsupported }

func munmap([]byte) error { return nil }
