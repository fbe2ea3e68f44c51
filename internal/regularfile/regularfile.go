// Package regularfile opens files that must be regular files: session
// transcripts, their copies and their caches. A FIFO, a socket or a device
// standing where such a file should be (by mistake, or put there by
// someone) is refused before a byte is read, so no reader blocks on a pipe
// nobody writes to or reads /dev/zero forever.
//
// Open never blocks: the file is opened with O_NONBLOCK (which changes
// nothing for a regular file) and checked with fstat, on the descriptor
// itself, so a file swapped between a check and the open cannot slip
// through.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file (a directory, FIFO, socket or device).
var ErrNotRegular = errors.New("not a regular file")

// Error is the error for a path that is not a regular file: Kind says
// what it is instead ("directory", "FIFO", "device", "socket").
type Error struct {
	Path string
	Kind string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: not a regular file (a %s)", e.Path, e.Kind)
}

func (e *Error) Unwrap() error { return ErrNotRegular }

// Kind names what a file mode is, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}

// Check returns an *Error when fi is not a regular file.
func Check(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &Error{Path: path, Kind: Kind(fi.Mode())}
}

// Open opens path for reading with the extra open flags (O_RDWR,
// O_APPEND, O_NOFOLLOW…) and returns it with its FileInfo, or an *Error
// if it is not a regular file.
func Open(path string, flags int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = Check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

// Stat is os.Stat that also refuses what is not a regular file.
func Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return fi, Check(path, fi)
}

// ReadFile reads a regular file whole, refusing one larger than max bytes
// (max <= 0: no bound).
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if max > 0 && fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this reads", path, fi.Size(), max)
	}
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	// Read into a buffer of the file's size, a byte over to see its end
	// (or that it grew): io.ReadAll's doubling from 512 bytes cost a
	// 5.6 MB manifest 100 ms of copies and page faults.
	b := make([]byte, 0, fi.Size()+1)
	for {
		var n int
		n, err = r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			break
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // it grew while read: more room
		}
	}
	if err == io.EOF {
		err = nil
	}
	if err == nil && max > 0 && int64(len(b)) > max {
		err = fmt.Errorf("%s: grew past the %d bytes this reads", path, max)
	}
	return b, err
}
