package session

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path through a temp file in the same
// directory, synced before it is renamed into place, so readers see either
// nothing or the whole file. With exclusive set, an existing file at path is
// never replaced: the rename becomes a hard link, which fails if path exists.
func writeFileAtomic(path string, data []byte, exclusive bool) error {
	return createAtomic(path, exclusive, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// createAtomic is writeFileAtomic for content too large to hold in memory:
// fill writes it to the temp file, which becomes path only if fill succeeds.
func createAtomic(path string, exclusive bool, fill func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600 whatever the umask.
	bw := bufio.NewWriterSize(diskWriter{tmp}, 1<<20)
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
		if err = os.Link(tmp.Name(), path); err != nil {
			if os.IsExist(err) {
				return fmt.Errorf("%s: %w", path, os.ErrExist)
			}
			return err
		}
		os.Remove(tmp.Name())
	} else if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename or link in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
