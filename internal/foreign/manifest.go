package foreign

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// The manifest, manifest.jsonl in the mirror's dir, is one JSON object a
// line (a mirrorRow), sorted by the mirror file's name, which each line
// starts with: {"mirror":"<24 hex digits>.jsonl",…}. A search names its
// hits (SourcePath, Listed) by finding their lines, a binary search on
// those names, and decodes only them: decoding every row of a large
// archive's manifest (25,000 rows, 5.6 MB) into maps was most of a
// search's time with the index fresh, and still takes twice as long as
// finding every row's line alone (a common word's hits name them all).
// A refresh reads it whole.
//
// An older xdev wrote manifest.json, one JSON array in the listing's
// order: it is read when manifest.jsonl is not there, and removed once
// manifest.jsonl is written.

func (m *Mirror) manifestPath() string { return filepath.Join(m.Dir, "manifest.jsonl") }

func (m *Mirror) legacyManifestPath() string { return filepath.Join(m.Dir, "manifest.json") }

// manifestPrefix is how every manifest line starts, before its mirror name.
const manifestPrefix = `{"mirror":"`

// SourcePath is the source transcript of a mirror file (a search hit's path),
// or "" for a path that is not one of this mirror's.
func (m *Mirror) SourcePath(mirrorPath string) string {
	src, _ := m.SourceOf(mirrorPath)
	return src
}

// SourceOf is SourcePath and the source's modification time as the last
// refresh found it (what a search hit shows, as a listing would), with
// no stat of it: a common word's hits name every session.
func (m *Mirror) SourceOf(mirrorPath string) (source string, modified time.Time) {
	if m.sources == nil {
		if filepath.Dir(mirrorPath) != filepath.Join(session.SessionsDir(m.Dir), mirrorSub) {
			return "", time.Time{}
		}
		if ml := m.lines(); ml != nil {
			r, _ := ml.findStamp(filepath.Base(mirrorPath))
			return r.Source, timeOfNs(r.Source, r.ModTime)
		}
		m.index(nil)
	}
	src := m.sources[mirrorPath]
	return src.path, timeOfNs(src.path, src.mtime)
}

// timeOfNs is the time of mtime (nanoseconds), zero for no source.
func timeOfNs(source string, mtime int64) time.Time {
	if source == "" {
		return time.Time{}
	}
	return time.Unix(0, mtime)
}

// Listed is what the harness's listing called the session at source
// (Session.Title and FirstMessage) when the mirror was last refreshed.
func (m *Mirror) Listed(source string) (title, firstMessage string) {
	if m.sources == nil {
		if m.manifest == nil {
			// A few hits named: their lines are looked up, the
			// manifest not read whole (manifest_lookup.go).
			if line, ok := m.lookupLine(mirrorName(source)); ok {
				var r mirrorRow
				if jsonv2.Unmarshal(line, &r) == nil && r.Source == source {
					return r.Title, r.FirstMessage
				}
			}
		}
		if ml := m.lines(); ml != nil {
			if r, ok := ml.find(mirrorName(source)); ok && r.Source == source {
				return r.Title, r.FirstMessage
			}
			return "", ""
		}
		m.index(nil)
	}
	l := m.listed[source]
	return l[0], l[1]
}

// lines is the manifest's lines, read once; nil when the manifest is not
// one whose lines can be searched (an older xdev's, a damaged one).
func (m *Mirror) lines() *manifestLines {
	if m.manifest == nil {
		data, err := regularfile.ReadFile(m.manifestPath(), 0)
		if err != nil {
			return nil
		}
		m.manifest = newManifestLines(data)
	}
	if len(m.manifest.starts) == 0 && len(m.manifest.data) > 0 {
		return nil
	}
	return m.manifest
}

// index makes the maps of rows, or of the manifest's rows.
func (m *Mirror) index(rows []mirrorRow) {
	if rows == nil {
		for _, r := range m.readManifest() {
			rows = append(rows, r)
		}
	}
	m.sources, m.listed = map[string]sourceFile{}, map[string][2]string{}
	files := filepath.Join(session.SessionsDir(m.Dir), mirrorSub)
	for _, r := range rows {
		m.sources[filepath.Join(files, r.Mirror)] = sourceFile{r.Source, r.ModTime}
		m.listed[r.Source] = [2]string{r.Title, r.FirstMessage}
	}
}

// readManifest is the last refresh's rows by source path; an unreadable
// manifest is an empty one (everything is converted again).
func (m *Mirror) readManifest() map[string]mirrorRow {
	rows, _ := m.readManifestRows()
	return rows
}

// searchableManifest is the manifest's lines as they are now, where they
// can be searched by mirror name: nil for an older xdev's manifest, a
// damaged one or one that cannot be read (readManifestRows decodes
// those, or calls them empty). No manifest is an empty one.
func (m *Mirror) searchableManifest() *manifestLines {
	data, err := regularfile.ReadFile(m.manifestPath(), 0)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(m.legacyManifestPath()); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return newManifestLines(nil)
	}
	if err != nil {
		return nil
	}
	ml := newManifestLines(data)
	if ml.starts == nil && len(data) > 0 || len(ml.starts) > 0 && ml.end(len(ml.starts)-1) != len(data) {
		return nil // out of order, or torn
	}
	return ml
}

// manifestOfRows is the manifest as readManifestRows reads it, where its
// lines cannot be searched (an older xdev's; one out of order; a damaged
// one, empty), made into the lines writeManifest writes.
func (m *Mirror) manifestOfRows() (*manifestLines, error) {
	rows, _ := m.readManifestRows()
	data, err := manifestBytes(slices.Collect(maps.Values(rows)))
	if err != nil {
		return nil, err
	}
	return newManifestLines(data), nil
}

// readManifestRows is readManifest and the manifest's rows in its order.
func (m *Mirror) readManifestRows() (map[string]mirrorRow, []mirrorRow) {
	out := map[string]mirrorRow{}
	var rows []mirrorRow
	data, err := regularfile.ReadFile(m.manifestPath(), 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		legacy, err := regularfile.ReadFile(m.legacyManifestPath(), 0)
		// json/v2's decoder: twice as fast as encoding/json's.
		if err != nil || jsonv2.Unmarshal(legacy, &rows) != nil {
			return out, nil
		}
	case err != nil:
		return out, nil
	default:
		for line := range bytes.Lines(data) {
			var r mirrorRow
			if jsonv2.Unmarshal(line, &r) != nil {
				return out, nil // damaged: everything is converted again
			}
			rows = append(rows, r)
		}
	}
	for _, r := range rows {
		out[r.Source] = r
	}
	return out, rows
}

// writeManifest replaces the manifest with rows (in any order), unless
// it already holds exactly those (prev, its rows as read under the same
// lock): a refresh that changed nothing, which every search's freshness
// check is, then encodes, writes and syncs nothing.
func (m *Mirror) writeManifest(rows, prev []mirrorRow) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b mirrorRow) int { return strings.Compare(a.Mirror, b.Mirror) })
	if prev != nil && slices.Equal(rows, prev) {
		return nil
	}
	data, err := manifestBytes(rows)
	if err != nil {
		return err
	}
	m.manifest, m.walked = nil, nil
	if err := atomicfile.Replace(m.manifestPath(), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return err
	}
	if err := os.Remove(m.legacyManifestPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// manifestBytes is the manifest of rows: a line each, sorted by mirror
// name.
func manifestBytes(rows []mirrorRow) ([]byte, error) {
	rows = slices.SortedFunc(slices.Values(rows), func(a, b mirrorRow) int { return strings.Compare(a.Mirror, b.Mirror) })
	var buf bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// manifestLines is a manifest's bytes and where each line starts.
type manifestLines struct {
	data   []byte
	starts []int
}

// newManifestLines indexes the lines of data; none when a line is not
// one writeManifest writes or the lines are out of order (then the
// caller decodes the whole).
func newManifestLines(data []byte) *manifestLines {
	ml := &manifestLines{data: data}
	var starts []int
	var prev []byte
	for at := 0; at < len(data); {
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			return ml // torn
		}
		starts = append(starts, at)
		ml.starts = starts
		key := ml.key(len(starts) - 1)
		if key == nil || prev != nil && bytes.Compare(key, prev) <= 0 {
			ml.starts = nil
			return ml
		}
		prev = key
		at += end + 1
	}
	ml.starts = starts
	return ml
}

// end is where line i ends, after its newline.
func (ml *manifestLines) end(i int) int {
	if i+1 < len(ml.starts) {
		return ml.starts[i+1]
	}
	return ml.starts[i] + bytes.IndexByte(ml.data[ml.starts[i]:], '\n') + 1
}

// lineAt is line i, without its newline.
func (ml *manifestLines) lineAt(i int) []byte { return ml.data[ml.starts[i] : ml.end(i)-1] }

// linesHolding is the lines holding one of texts, in order, each once:
// found by a search of the whole manifest for each text, not line by
// line.
func (ml *manifestLines) linesHolding(texts ...string) []int {
	var out []int
	for _, text := range texts {
		for off := 0; ; {
			j := bytes.Index(ml.data[off:], []byte(text))
			if j < 0 {
				break
			}
			at := off + j
			i := sort.Search(len(ml.starts), func(i int) bool { return ml.starts[i] > at }) - 1
			if i < 0 || at >= ml.end(i) {
				break // in a torn end
			}
			out = append(out, i)
			off = ml.end(i) // the next line
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// key is the mirror name line i starts with, or nil.
func (ml *manifestLines) key(i int) []byte { return lineKey(ml.data[ml.starts[i]:]) }

// findStamp decodes the row of the mirror file named name but for the
// listing's title and first message, which naming every hit of a common
// word would otherwise allocate for nothing.
func (ml *manifestLines) findStamp(name string) (mirrorRow, bool) {
	line, ok := ml.line(name)
	if !ok {
		return mirrorRow{}, false
	}
	return stampOfLine(line)
}

// stampAt is findStamp of the i-th line.
func (ml *manifestLines) stampAt(i int) (mirrorRow, bool) {
	line := ml.data[ml.starts[i]:]
	return stampOfLine(line[:bytes.IndexByte(line, '\n')])
}

// stampOfLine decodes findStamp's part of a manifest line.
func stampOfLine(line []byte) (mirrorRow, bool) {
	var r struct {
		Mirror      string `json:"mirror"`
		Source      string `json:"source"`
		ID          string `json:"id"`
		Size        int64  `json:"size"`
		ModTime     int64  `json:"mtimeNs"`
		Err         string `json:"error,omitempty"`
		Skipped     int    `json:"skipped,omitempty"`
		Format      int    `json:"format,omitempty"`
		MirrorSize  int64  `json:"mirrorSize,omitempty"`
		MirrorMtime int64  `json:"mirrorMtimeNs,omitempty"`
		InPlace     bool   `json:"inPlace,omitempty"`
	}
	if jsonv2.Unmarshal(line, &r) != nil {
		return mirrorRow{}, false
	}
	return mirrorRow{Mirror: r.Mirror, Source: r.Source, ID: r.ID, Size: r.Size, ModTime: r.ModTime, Err: r.Err, Skipped: r.Skipped,
		Format: r.Format, MirrorSize: r.MirrorSize, MirrorMtime: r.MirrorMtime, InPlace: r.InPlace}, true
}

// line is the line of the mirror file named name, without its newline.
func (ml *manifestLines) line(name string) ([]byte, bool) {
	i := sort.Search(len(ml.starts), func(i int) bool { return string(ml.key(i)) >= name })
	if i == len(ml.starts) || string(ml.key(i)) != name {
		return nil, false
	}
	line := ml.data[ml.starts[i]:]
	return line[:bytes.IndexByte(line, '\n')], true
}

// find decodes the row of the mirror file named name.
func (ml *manifestLines) find(name string) (mirrorRow, bool) {
	line, ok := ml.line(name)
	if !ok {
		return mirrorRow{}, false
	}
	var r mirrorRow
	if jsonv2.Unmarshal(line, &r) != nil {
		return mirrorRow{}, false
	}
	return r, true
}
