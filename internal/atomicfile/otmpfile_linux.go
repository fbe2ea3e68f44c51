package atomicfile

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

const oTmpfile = unix.O_TMPFILE

// linkAnonymous names an O_TMPFILE file, through its /proc/self/fd link
// followed (linkat with AT_EMPTY_PATH would want a privilege).
func linkAnonymous(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
	}
	return nil
}

// renameNoReplace renames old to new unless new exists (then an error
// wrapping fs.ErrExist): renameat2's RENAME_NOREPLACE, or, on a
// filesystem without it, a check before the rename.
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return renameChecked(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
