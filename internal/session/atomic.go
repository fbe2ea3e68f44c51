package session

import (
	"io"

	"github.com/xdev/xdev/internal/atomicfile"
)

// createFile makes a new file at path (never replacing one) and
// replaceFile rewrites one, both through internal/atomicfile: readers see
// the old file or the whole new one. Their writes go through the disk seam
// (see disk.go), so tests can fail them part-way.
func createFile(path string, fill func(w io.Writer) error) error {
	return atomicfile.Create(path, func(w io.Writer) error { return fill(seamWriter{w}) })
}

func replaceFile(path string, fill func(w io.Writer) error) error {
	return atomicfile.Replace(path, func(w io.Writer) error { return fill(seamWriter{w}) })
}

// replaceFileIf is replaceFile that asks ready, once the new content is
// synced, whether the swap may still happen.
func replaceFileIf(path string, fill func(w io.Writer) error, ready func() error) error {
	return atomicfile.ReplaceIf(path, func(w io.Writer) error { return fill(seamWriter{w}) }, ready)
}

// writeNewFile is createFile for content already in memory.
func writeNewFile(path string, data []byte) error {
	return createFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
