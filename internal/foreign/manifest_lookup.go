package foreign

import (
	"bytes"
	"io"

	"github.com/xdev/xdev/internal/regularfile"
)

// A search that names a few hits (Listed: a listing's title) need not
// read the manifest whole: its lines are sorted by the mirror file's
// name each starts with, so a binary search of the file by byte offsets
// finds one in a few reads of a few KB. Reading and indexing the whole
// manifest (5.6 MB at 10,000 Claude Code transcripts) was 17 ms of a
// search's 170 once its freshness check read no manifest.
//
// The lookup trusts the order only to find a line, never to say there
// is none: a line found has the name asked (the rows' names are unique),
// and one not found is looked for again in the manifest read whole
// (lines), which checks the order.

// lookupChunk is how much of the manifest one step reads: a few lines.
const lookupChunk = 4096

// lookupLine returns the manifest line (without its newline) of the
// mirror file named name, found by a binary search of the file; false
// when it is not found so (or the manifest cannot be read).
func (m *Mirror) lookupLine(name string) ([]byte, bool) {
	f, fi, err := regularfile.Open(m.manifestPath(), 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	return searchSortedLines(f, fi.Size(), name)
}

// searchSortedLines finds the line of r (size bytes of lines sorted by
// their manifestLines key) whose key is name.
func searchSortedLines(r io.ReaderAt, size int64, name string) ([]byte, bool) {
	// Every line starting before lo has a key before name; every line
	// starting at hi or after, a key at or past it.
	lo, hi := int64(0), size
	for lo < hi {
		mid := lo + (hi-lo)/2
		start, line, ok := readLineFrom(r, size, mid)
		if !ok || start >= hi {
			break // no line starts in [mid, hi): a line or two from lo
		}
		key := lineKey(line)
		if key == nil {
			return nil, false
		}
		if string(key) < name {
			lo = start + int64(len(line)) + 1
		} else {
			hi = start
		}
	}
	for at := lo; at < size && at <= hi; {
		line, ok := readLineAt(r, size, at)
		if !ok {
			return nil, false
		}
		switch key := lineKey(line); {
		case key == nil || string(key) > name:
			return nil, false
		case string(key) == name:
			return line, true
		}
		at += int64(len(line)) + 1
	}
	return nil, false
}

// readLineFrom returns the first whole line of r starting at or after off,
// and where it starts.
func readLineFrom(r io.ReaderAt, size, off int64) (int64, []byte, bool) {
	if off > 0 {
		// The line starts after the first newline at or past off-1.
		for at := off - 1; ; at += lookupChunk {
			if at >= size {
				return 0, nil, false
			}
			buf := make([]byte, min(lookupChunk, size-at))
			if n, err := r.ReadAt(buf, at); n < len(buf) && err != nil {
				return 0, nil, false
			}
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				off = at + int64(i) + 1
				break
			}
		}
	}
	line, ok := readLineAt(r, size, off)
	return off, line, ok
}

// readLineAt returns the line of r starting at off, without its newline;
// false when it has none (a torn last line) or r cannot be read.
func readLineAt(r io.ReaderAt, size, off int64) ([]byte, bool) {
	var line []byte
	for at := off; at < size; at += lookupChunk {
		buf := make([]byte, min(lookupChunk, size-at))
		if n, err := r.ReadAt(buf, at); n < len(buf) && err != nil {
			return nil, false
		}
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return append(line, buf[:i]...), true
		}
		line = append(line, buf...)
	}
	return nil, false
}

// lineKey is the mirror file name a manifest line starts with; nil when
// it does not start as writeManifest writes lines.
func lineKey(line []byte) []byte {
	if !bytes.HasPrefix(line, []byte(manifestPrefix)) {
		return nil
	}
	line = line[len(manifestPrefix):]
	end := bytes.IndexAny(line, "\"\\\n")
	if end <= 0 || line[end] != '"' {
		return nil
	}
	return line[:end]
}
