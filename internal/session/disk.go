package session

import "os"

// The store's writes to files go through these three functions, so that
// tests can act out a full or failing disk (ENOSPC, EIO) part-way through
// a write, and check that no torn line is left and no original damaged.
var (
	diskWrite    = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	diskWriteAt  = func(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
	diskTruncate = func(f *os.File, size int64) error { return f.Truncate(size) }
)

// diskWriter is an io.Writer over diskWrite.
type diskWriter struct{ f *os.File }

func (w diskWriter) Write(b []byte) (int, error) { return diskWrite(w.f, b) }
