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

// clockNanos is the clock a mirror file's Opened is taken from (a test
// sets one of its own).
var clockNanos = func() int64 { return time.Now().UnixNano() }

// ensureSpliced is Ensure on the manifest's lines (ml): the session's row
// found by its line; where it must be converted, its line, and those of
// the mirror files trimOpened removes, spliced into the manifest, the
// others left as they are (only the rows with mirror files decoded, for
// trimOpened).
func (m *Mirror) ensureSpliced(ml *manifestLines, s Session, row mirrorRow, target string) (f MirrorFile, err error) {
	prev, had := ml.find(row.Mirror)
	had = had && prev.Source == s.Path // another's of the same name is replaced
	if had && prev.Err == "" && !prev.InPlace && prev.current(row, target) {
		return MirrorFile{target, prev.Skipped}, nil
	}
	if row.Skipped, err = m.convert(s, target); err != nil {
		return MirrorFile{}, err
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
			// Damaged: the manifest is taken for an empty one, as
			// readManifestRows takes it (every session converted again).
			ml, rows, last, had = newManifestLines(nil), map[string]mirrorRow{}, 0, false
			break
		}
		last = max(last, r.Opened)
		if r.Source != s.Path {
			rows[r.Source] = r
		}
	}
	row.Opened = max(clockNanos(), last+1)
	if had && prev.Size == row.Size && prev.ModTime == row.ModTime && prev.ID == row.ID {
		// The listed session, unchanged since, opened (an index in place
		// made no mirror file of it): what the listing said of it
		// stands, and so does the listing's stamp.
		row.Title, row.FirstMessage = prev.Title, prev.FirstMessage
	} else if err := m.dropListingStamp(); err != nil {
		// A row of no listing (no title): the next refresh lists again.
		return MirrorFile{}, err
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
			return MirrorFile{}, err
		}
		lines[r.Mirror] = b
	}
	m.manifest, m.walked = nil, nil
	if err := atomicfile.Replace(m.manifestPath(), func(w io.Writer) error {
		return ml.writeSpliced(w, lines)
	}); err != nil {
		return MirrorFile{}, err
	}
	if err := os.Remove(m.legacyManifestPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return MirrorFile{}, err
	}
	return MirrorFile{target, row.Skipped}, nil
}
