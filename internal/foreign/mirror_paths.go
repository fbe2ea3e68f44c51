package foreign

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/filelock"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// A running server's watcher names the transcripts that changed, a few at
// a time while an agent writes one. A refresh lists the harness whole
// (every transcript stat'ed, its head read or its list cache decoded),
// decodes every manifest row and writes them all again: at 25,000
// Claude Code transcripts, most of a second of CPU and 50 MB of heap for
// each append. RefreshPaths makes again only the rows of the files
// named, as a refresh would make them (PathLister), splices their lines
// into the manifest's (never decoding the others'), and moves the
// listing's stamp by what they moved (statSum is a sum: a row's hash
// comes out, its new one goes in), so that the next refresh still finds
// nothing changed by its stats alone. It does so only where the last
// complete refresh's stamp stands for the listing's own files (a
// history.jsonl appended to may name any session: a refresh lists them
// all), and the sessions are read in place (a mirror of mirror files
// would convert them).

// transcriptNamer is a transcriptWalker that can say whether its walk
// names a file, without the walk.
type transcriptNamer interface {
	walks(path string) bool
}

// RefreshPaths is Refresh told which files changed (a watcher's paths),
// where it can be told so (above); ok is false where it cannot, and
// nothing was changed: then Refresh.
func (m *Mirror) RefreshPaths(ctx context.Context, paths []string) (st MirrorStats, ok bool, err error) {
	pl, isLister := m.Source.(PathLister)
	namer, isNamer := m.Source.(transcriptNamer)
	if !isLister || !isNamer || !m.InPlace() || len(paths) == 0 {
		return st, false, nil
	}
	files := filepath.Join(session.SessionsDir(m.Dir), mirrorSub)
	unlock, err := filelock.Lock(ctx, filepath.Join(m.Dir, "lock"), nil)
	if err != nil {
		return st, false, err
	}
	defer unlock()
	stamp, ok := m.readListingStamp()
	if !ok {
		return st, false, nil
	}
	if inputs := m.stampInputs(); inputs == nil || !slices.Equal(inputs, stamp.Inputs) {
		return st, false, nil // what the listing reads besides changed: every row may have
	}
	sum, ok := parseStatSum(stamp.Digest)
	if !ok {
		return st, false, nil
	}
	data, err := regularfile.ReadFile(m.manifestPath(), 0)
	if err != nil {
		return st, false, nil
	}
	ml := newManifestLines(data)
	if len(ml.starts) == 0 && len(data) > 0 || ml.starts == nil && stamp.Rows > 0 {
		return st, false, nil
	}
	list, ok := pl.ListPaths(paths, true)
	if !ok {
		return st, false, nil
	}
	listed := make(map[string]Session, len(list))
	for _, s := range list {
		listed[s.Path] = s
	}
	unlisted := make(map[string]unlistedFile, len(stamp.Unlisted))
	for _, u := range stamp.Unlisted {
		unlisted[u.Path] = u
	}
	rows := stamp.Rows
	lines := map[string][]byte{} // the new line of each mirror name changed, nil for none
	var remove []string          // mirror files of sources changed or gone
	var read []Session           // what the index reads again
	racy := false
	for _, p := range cleanPaths(paths) {
		name := mirrorName(p)
		target := filepath.Join(files, name)
		var prev mirrorRow
		line, had := ml.line(name)
		if had {
			if jsonv2.Unmarshal(line, &prev) != nil || prev.Source != p || prev.Format != mirrorFormat || prev.Err != "" {
				return st, false, nil // not a row a stamp stands for
			}
		}
		delete(unlisted, p)
		var row *mirrorRow
		s, isListed := listed[p]
		if isListed && s.Err == nil {
			if size, mtime, err := m.listedStamp(s); err == nil {
				r := mirrorRow{Source: p, ID: s.ID, Size: size, ModTime: mtime, Mirror: name, Format: mirrorFormat, Title: s.Title, FirstMessage: s.FirstMessage}
				if had && prev.current(r, target) {
					prev.Title, prev.FirstMessage = s.Title, s.FirstMessage
					r = prev
				} else {
					r.InPlace = true
					read = append(read, s)
				}
				row = &r
			}
		}
		if had && !prev.InPlace && (row == nil || row.InPlace) {
			remove = append(remove, target) // the mirror of the source as it was
		}
		if row == nil && namer.walks(p) {
			u := unlistedFile{fileStamp: stampFile(p)}
			if isListed && s.Err != nil {
				u.Err = s.Err.Error()
			}
			racy = racy || !u.Missing && time.Since(time.Unix(0, u.Mtime)) < racyWindow
			unlisted[p] = u
		}
		if isListed && s.Err != nil {
			st.Errors = append(st.Errors, s.Err)
		}
		if had {
			sum.sub(prev.Source, prev.Size, prev.ModTime)
			rows--
		}
		if row != nil {
			sum.add(row.Source, row.Size, row.ModTime)
			rows++
			b, err := json.Marshal(*row)
			if err != nil {
				return st, false, err
			}
			lines[name] = b
		} else if had {
			lines[name] = nil
		}
	}
	// The stamp goes first: a manifest written with none is what any
	// writer but a complete refresh leaves, and a refresh lists whole.
	if err := m.dropListingStamp(); err != nil {
		return st, true, err
	}
	for _, target := range remove {
		if os.Remove(target) == nil {
			st.Removed++
		}
	}
	m.manifest, m.walked, m.sources, m.listed = nil, nil, nil, nil
	if len(lines) > 0 {
		spliced := ml.splice(lines)
		if err := atomicfile.Replace(m.manifestPath(), func(w io.Writer) error {
			_, err := w.Write(spliced)
			return err
		}); err != nil {
			return st, true, err
		}
		m.manifest = newManifestLines(spliced) // what the index names its hits by next
	}
	m.keepListing(read)
	st.Converted = len(read)
	stamp.Rows, stamp.Digest = rows, sum.String()
	stamp.Unlisted = stamp.Unlisted[:0]
	for _, u := range unlisted {
		stamp.Unlisted = append(stamp.Unlisted, u)
	}
	slices.SortFunc(stamp.Unlisted, func(a, b unlistedFile) int { return cmp.Compare(a.Path, b.Path) })
	if !racy {
		atomicfile.ReplaceCache(m.listingStampPath(), func(w io.Writer) error {
			return jsonv2.MarshalWrite(w, stamp)
		})
	}
	st.Sessions, st.Errors, _ = stamp.sessions(rows)
	return st, true, nil
}

// splice is the manifest's lines with those of the mirror names of
// lines replaced by theirs (left out where nil), and those it does not
// hold put in their places: the lines stay sorted by name.
func (ml *manifestLines) splice(lines map[string][]byte) []byte {
	n := len(ml.data)
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	ml.writeSpliced(buf, lines) // a bytes.Buffer's writes do not fail
	return buf.Bytes()
}

// writeSpliced writes splice's lines to w: the lines between those
// changed a run at a time, each found by a binary search, so that a
// writer of the file itself holds no copy of it.
func (ml *manifestLines) writeSpliced(w io.Writer, lines map[string][]byte) error {
	names := make([]string, 0, len(lines))
	for name := range lines {
		names = append(names, name)
	}
	slices.Sort(names)
	at := 0 // what is written of ml.data
	for _, name := range names {
		i := sort.Search(len(ml.starts), func(i int) bool { return string(ml.key(i)) >= name })
		start := len(ml.data)
		if i < len(ml.starts) {
			start = ml.starts[i]
		}
		if _, err := w.Write(ml.data[at:start]); err != nil {
			return err
		}
		at = start
		if i < len(ml.starts) && string(ml.key(i)) == name {
			at = ml.end(i) // replaced, or left out
		}
		if l := lines[name]; l != nil {
			if _, err := w.Write(append(l, '\n')); err != nil {
				return err
			}
		}
	}
	_, err := w.Write(ml.data[at:])
	return err
}

// sub takes out of s what add put in for the same path and stat.
func (s *statSum) sub(path string, size, mtime int64) {
	var one statSum
	one.add(path, size, mtime)
	var borrow uint64
	s.lo, borrow = bits.Sub64(s.lo, one.lo, 0)
	s.hi, _ = bits.Sub64(s.hi, one.hi, borrow)
}

// parseStatSum reads what statSum.String wrote.
func parseStatSum(digest string) (statSum, bool) {
	var s statSum
	if len(digest) != 32 {
		return s, false
	}
	if _, err := fmt.Sscanf(digest, "%016x%016x", &s.hi, &s.lo); err != nil || s.String() != digest {
		return statSum{}, false
	}
	return s, true
}

// walks is whether Claude Code's walk of its transcripts
// (walkTranscripts) names the file at path: a project's regular .jsonl,
// or a .jsonl under a session directory's subagents directory.
func (c claudeSource) walks(path string) bool {
	_, _, nested, transcript, _ := c.transcriptPath(filepath.Clean(path))
	if !transcript {
		return false
	}
	fi, err := os.Lstat(path)
	if nested {
		session, err2 := os.Lstat(filepath.Dir(filepath.Dir(path)))
		return err == nil && err2 == nil && session.IsDir()
	}
	return err == nil && fi.Mode().IsRegular()
}

// walks is whether Codex's walk of its rollouts (walkTranscripts) names
// the file at path: a regular .jsonl or .jsonl.zst under one of its
// rollout directories.
func (c codexSource) walks(path string) bool {
	path = filepath.Clean(path)
	if !isRolloutName(path) {
		return false
	}
	for _, r := range codexRoots {
		if rel, err := filepath.Rel(filepath.Join(c.root, r), path); err == nil && filepath.IsLocal(rel) {
			fi, err := os.Lstat(path)
			return err == nil && fi.Mode().IsRegular()
		}
	}
	return false
}
