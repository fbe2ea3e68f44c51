package foreign

import (
	"bytes"
	"io"
	"os"

	"github.com/xdev/xdev/internal/jsonx"
)

// PiName is the name pi gave the session at path: the last session_info
// entry's name in the file's last 64 KiB (pi appends one when a session
// is named with /name), else "".
func PiName(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, fi.Size()-claudeHeadBytes)
	tail, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return ""
	}
	name := ""
	for line := range bytes.Lines(tail) {
		if !bytes.Contains(line, []byte(`"session_info"`)) {
			continue
		}
		if v, err := jsonx.Parse(line); err == nil && v.Get("type").Is("session_info") {
			if n, ok := v.Get("name").Text(); ok {
				name = n
			}
		}
	}
	return name
}
