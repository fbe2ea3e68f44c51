package atomicfile

import "golang.org/x/sys/unix"

const oTmpfile = unix.O_TMPFILE
