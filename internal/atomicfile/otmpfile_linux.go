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
