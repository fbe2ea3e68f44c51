package session

import (
	"fmt"
	"os"
	"syscall"
)

// openRead opens path for reading without blocking on a FIFO or device
// that stands where a session file should be; the caller then refuses it
// for not being a regular file. On regular files the flag changes nothing.
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openRegular opens path for reading (with extra open flags) and checks
// that it is a regular file, so no reader blocks on or reads a device.
func openRegular(path string, flags int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}
