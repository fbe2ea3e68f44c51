package session

import (
	"os"

	"github.com/xdev/xdev/internal/regularfile"
)

// openRegular opens path for reading (with extra open flags) and checks
// that it is a regular file, so no reader blocks on or reads a device
// (see package regularfile).
func openRegular(path string, flags int) (*os.File, os.FileInfo, error) {
	return regularfile.Open(path, flags)
}
