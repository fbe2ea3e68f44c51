package regularfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRaw: a regular file opens and reads as os.File reads it, with
// the FileInfo os.Stat gives; a directory and a FIFO are refused as Open
// refuses them (the FIFO without waiting for a writer); a missing file is
// fs.ErrNotExist.
func TestOpenRaw(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := []byte("line one\nline two\n")
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	f, fi, err := OpenRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(path)
	if fi.Size() != want.Size() || fi.Mode() != want.Mode() || !fi.ModTime().Equal(want.ModTime()) || fi.Name() != want.Name() {
		t.Errorf("FileInfo %v %v %v %s, os.Stat %v %v %v %s", fi.Size(), fi.Mode(), fi.ModTime(), fi.Name(), want.Size(), want.Mode(), want.ModTime(), want.Name())
	}
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 5)
	if err != io.EOF || string(buf[:n]) != string(data[5:]) {
		t.Errorf("ReadAt = %q, %v", buf[:n], err)
	}
	if n, err := f.ReadAt(buf[:3], 0); err != nil || string(buf[:n]) != "lin" {
		t.Errorf("ReadAt of 3 = %q, %v", buf[:n], err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}

	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]string{dir: "directory", fifo: "FIFO"} {
		_, fi, err := OpenRaw(name)
		var re *Error
		if !errors.As(err, &re) || re.Kind != kind || !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRaw(%s) = %v, want a %s refused", name, err, kind)
		}
		if want, _ := os.Stat(name); fi == nil || fi.Mode() != want.Mode() {
			t.Errorf("%s: mode %v, os.Stat says %v", name, fi, want.Mode())
		}
	}
	if _, _, err := OpenRaw(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
