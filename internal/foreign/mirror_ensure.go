package foreign

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/atomicfile"
)

// ensureWhole has Ensure read and write every row of the manifest, as it
// does where the manifest's lines cannot be searched: a test compares
// the two ways.
var ensureWhole = false

// clockNanos is the clock a mirror file's Opened is taken from (a test
// sets one of its own).
var clockNanos = func() int64 { return time.Now().UnixNano() }

// ensureSpliced is Ensure on a manifest whose lines can be searched
// (ml): the session's row found by its line; where it must be converted,
// its line, and those of the mirror files trimOpened removes, spliced
// into the manifest, the others left as they are (only the rows with
// mirror files decoded, for trimOpened). ok is false where the row found
// is another source's (Ensure then reads every row).
func (m *Mirror) ensureSpliced(ml *manifestLines, s Session, row mirrorRow, target string) (f MirrorFile, ok bool, err error) {
	prev, had := ml.find(row.Mirror)
	if had && prev.Source != s.Path {
		return MirrorFile{}, false, nil
	}
	if had && prev.Err == "" && !prev.InPlace && prev.current(row, target) {
		return MirrorFile{target, prev.Skipped}, true, nil
	}
	if row.Skipped, err = m.convert(s, target); err != nil {
		return MirrorFile{}, true, err
	}
	if mfi, err := os.Stat(target); err == nil {
		row.MirrorSize, row.MirrorMtime = mfi.Size(), mfi.ModTime().UnixNano()
	}
	// The rows with mirror files, and the latest Opened of any: the keys
	// are in a line only where the values are not zero (omitempty), and
	// their text, a name and the quote after it, never inside a string
	// (json.Marshal escapes its quotes). Searched for without the quote
	// before: a search is as slow as its first byte is common.
	rows := map[string]mirrorRow{}
	var last int64
	for _, i := range ml.linesHolding(`mirrorSize":`, `openedNs":`) {
		var r mirrorRow
		if jsonv2.Unmarshal(ml.lineAt(i), &r) != nil {
			return MirrorFile{}, false, nil
		}
		last = max(last, r.Opened)
		if r.Source != s.Path {
			rows[r.Source] = r
		}
	}
	row.Opened = max(clockNanos(), last+1)
	if had && prev.Size == row.Size && prev.ModTime == row.ModTime && prev.ID == row.ID {
		row.Title, row.FirstMessage = prev.Title, prev.FirstMessage // as Ensure says
	} else if err := m.dropListingStamp(); err != nil {
		return MirrorFile{}, true, err
	}
	rows[s.Path] = row
	before := maps.Clone(rows)
	m.trimOpened(rows, s.Path)
	lines := map[string][]byte{}
	for src, r := range rows {
		if src != s.Path && r == before[src] {
			continue
		}
		b, err := json.Marshal(r)
		if err != nil {
			return MirrorFile{}, true, err
		}
		lines[r.Mirror] = b
	}
	m.manifest, m.walked = nil, nil
	if err := atomicfile.Replace(m.manifestPath(), func(w io.Writer) error {
		return ml.writeSpliced(w, lines)
	}); err != nil {
		return MirrorFile{}, true, err
	}
	if err := os.Remove(m.legacyManifestPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return MirrorFile{}, true, err
	}
	return MirrorFile{target, row.Skipped}, true, nil
}
