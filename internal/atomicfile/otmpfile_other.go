//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

const oTmpfile = 0

// linkAnonymous is never called: without O_TMPFILE every temp file has a
// name.
func linkAnonymous(f *os.File, path string) error {
	return errors.New("atomicfile: no anonymous temp files here")
}

// renameNoReplace renames old to new unless new exists (then an error
// wrapping fs.ErrExist).
func renameNoReplace(old, new string) error { return renameChecked(old, new) }
