package search

import (
	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
)

// The index is opened through zeroPageVFS: the OS's VFS, except that a
// page of the main database read back as all zeros is damage
// (IOERR_DATA), as a page whose checksum fails is. The page checksums
// cannot see it, since the checksum of zeros is zeros; and a zeroed page
// is what a crash or a lost block most often leaves. SQLite's B-tree
// reports a zeroed page of its own, but FTS5 reads a zeroed leaf of its
// index as a term with no matches, which would answer short. No page
// SQLite writes here is all zeros (its checksum alone is not), so none
// is taken for damage; the worst a false one could cost is a rebuild.
const zeroPageVFSName = "xdev-search"

func init() { vfs.Register(zeroPageVFSName, zeroPageVFS{vfs.Find("")}) }

type zeroPageVFS struct{ vfs.VFS }

func (z zeroPageVFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := z.VFS.Open(name, flags)
	return checkZeroPages(f, flags, err)
}

// OpenFilename keeps the URI parameters (modeof, the busy timeout) the
// OS's VFS reads from the name.
func (z zeroPageVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	o, ok := z.VFS.(vfs.VFSFilename)
	if !ok {
		return z.Open(name.String(), flags)
	}
	f, flags, err := o.OpenFilename(name, flags)
	return checkZeroPages(f, flags, err)
}

// osFile is what the OS's VFS's files do: every interface SQLite asks
// them for, so that the wrapper answers as the file would.
type osFile interface {
	vfs.File
	vfs.FileLockState
	vfs.FileHasMoved
	vfs.FileSizeHint
	vfs.FilePersistWAL
	vfs.FilePowersafeOverwrite
	vfs.FileSharedMemory
	vfs.FileMemoryMapper
}

// checkZeroPages wraps the main database's file; the others (the
// write-ahead log, whose frames have checksums of their own, and
// temporary files) and a file that is not the OS's as expected are
// given as they are.
func checkZeroPages(f vfs.File, flags vfs.OpenFlag, err error) (vfs.File, vfs.OpenFlag, error) {
	if err != nil || flags&vfs.OPEN_MAIN_DB == 0 {
		return f, flags, err
	}
	if o, ok := f.(osFile); ok {
		return zeroPageFile{o}, flags, nil
	}
	return f, flags, nil
}

type zeroPageFile struct{ osFile }

func (f zeroPageFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.osFile.ReadAt(p, off)
	if n == len(p) && off > 0 && n >= 512 && allZero(p) {
		return 0, sqlite3.IOERR_DATA
	}
	return n, err
}

func (f zeroPageFile) Unwrap() vfs.File { return f.osFile }

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// MemoryMapper is nil: the index is never mapped into memory. SQLite
// learns at open, from this file before go-sqlite3's checksum shim wraps
// it, whether it may map it; the shim then has no mapper while it
// verifies checksums, and go-sqlite3 v0.37 dereferences that nil when
// SQLite, closing after a write failed (a full disk, a file size
// limit), asks it to unmap (vfs.go:379, vfsUnfetch): a panic. A file
// without a mapper is never asked (TestFailedFirstBuildLeavesNothing).
func (f zeroPageFile) MemoryMapper() vfs.MemoryMapper { return nil }
