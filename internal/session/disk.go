package session

import (
	"io"
	"os"
)

// The store's writes to files go through these functions, so that tests
// can act out a full or failing disk (ENOSPC, EIO) part-way through a
// write, and check that no torn line is left and no original damaged.
var (
	diskWrite    = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	diskWriteAt  = func(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
	diskTruncate = func(f *os.File, size int64) error { return f.Truncate(size) }
	// diskFill writes the content of a new or rewritten file.
	diskFill = func(w io.Writer, b []byte) (int, error) { return w.Write(b) }
)

// seamWriter is an io.Writer over diskFill.
type seamWriter struct{ w io.Writer }

func (s seamWriter) Write(b []byte) (int, error) { return diskFill(s.w, b) }
