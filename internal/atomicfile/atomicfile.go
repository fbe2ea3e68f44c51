// Package atomicfile writes files so that a reader, or a crash, sees either
// nothing (or the file as it was) or the whole new content, never a part.
//
// The content goes to a temp file beside the target (same directory, so
// the same filesystem), is synced, and only then takes the target's name:
// Create links it into place, which fails if the name is taken, and
// Replace renames it over the old file. If anything fails before that, the
// temp file is removed and the target is untouched: a failed write never
// truncates, damages or removes a file that was there.
//
// New files are 0600: what xdev writes comes from transcripts, which hold
// secrets.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Create makes a new file at path holding what fill writes. It fails with
// an error wrapping fs.ErrExist if path exists, and never replaces it.
func Create(path string, fill func(w io.Writer) error) error {
	return write(path, true, fill)
}

// Replace writes what fill writes to path, replacing the file there (if
// any) only once the new content is complete and synced.
func Replace(path string, fill func(w io.Writer) error) error {
	return write(path, false, fill)
}

func write(path string, exclusive bool, fill func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp") // 0600 whatever the umask
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = fill(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if exclusive {
		// A hard link, unlike a rename, fails when the name is taken.
		if err = os.Link(tmp.Name(), path); err != nil {
			if os.IsExist(err) {
				return fmt.Errorf("%s: %w", path, fs.ErrExist)
			}
			return err
		}
		os.Remove(tmp.Name())
	} else if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes a rename or link in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MkdirAll makes dir and its missing parents (0700: they will hold
// transcripts) and returns undo, which removes the directories it made,
// deepest first, if they are still empty: a write that fails after making
// its directory leaves no empty directory behind. undo is never nil.
func MkdirAll(dir string) (undo func(), err error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	undo = func() {
		for _, d := range made {
			if os.Remove(d) != nil { // not empty, or gone: leave the rest
				return
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		undo()
		return func() {}, err
	}
	return undo, nil
}

// CreateAll is Create that first makes path's directory and its missing
// parents, and removes those again if the file could not be made.
func CreateAll(path string, fill func(w io.Writer) error) error {
	undo, err := MkdirAll(filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := Create(path, fill); err != nil {
		undo()
		return err
	}
	return nil
}

// Scratch returns a new, empty temp file that has no name: it is gone
// when closed, or when the process dies, so a killed command leaves
// nothing behind in the temp directory. (On Linux, an O_TMPFILE file;
// elsewhere, a temp file unlinked at once.)
func Scratch() (*os.File, error) {
	if f, err := os.OpenFile(os.TempDir(), os.O_RDWR|oTmpfile, 0o600); err == nil {
		return f, nil
	}
	f, err := os.CreateTemp("", "xdev-scratch-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
