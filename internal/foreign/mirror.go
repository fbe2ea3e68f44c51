package foreign

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/filelock"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// A Mirror is an omp-format data dir, in xdev's cache, holding one
// harness's sessions as omp would import them: what makes Claude Code and
// Codex sessions searchable by the index built for omp's format, without
// writing a byte beside them. Like the index, it is a cache: deleting it
// loses nothing.
//
// Each source session has one mirror file, sessions/mirror/<hash of the
// source path>.jsonl, whose header id is the source's id, so a hit names
// the session its harness knows. A manifest records each source's size
// and modification time; a refresh converts again only the sessions whose
// stat changed, and drops the mirrors of sources gone.
type Mirror struct {
	Dir    string // the mirror's data dir
	Source Source // Claude Code's or Codex's

	// Listing, when not nil, is what Refresh lists the source's sessions
	// (subagents' included) with, in place of Source.List(true): a
	// listing the caller made already, for one command to stat each
	// transcript once (catalog.Config.ListOnce).
	Listing func() ([]Session, error)

	sources map[string]sourceFile // mirror path → its source, after Refresh
	listed  map[string][2]string  // source → its listing's title and first message
	// manifest is the manifest's lines, read to name a few hits without
	// decoding every row (manifest.go); nil until then, or after Refresh.
	manifest *manifestLines
	// byPath is the sessions of the last listing, by path, for a
	// conversion in place (ReadInPlace); nil until one is made.
	byPath map[string]Session
	// walked is the transcripts a refresh that found nothing changed
	// stated, as Transcripts answers them; nil after any other refresh
	// or a write of the manifest.
	walked []session.SessionFile
}

// sourceFile is a mirror file's source and its modification time
// (nanoseconds) when it was last refreshed.
type sourceFile struct {
	path  string
	mtime int64
}

// mirrorRow is one source in the manifest.
type mirrorRow struct {
	// Mirror is first: each manifest line starts with it (manifest.go).
	Mirror  string `json:"mirror"` // file name under sessions/mirror
	Source  string `json:"source"`
	ID      string `json:"id"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtimeNs"`
	Err     string `json:"error,omitempty"`
	Skipped int    `json:"skipped,omitempty"` // source lines the conversion skipped
	// Format is the conversion's version (mirrorFormat) when it was
	// written: a mirror an older xdev wrote is converted again.
	Format int `json:"format,omitempty"`
	// The mirror file's stat when it was written: a mirror file changed
	// since (cut short, replaced, edited) is converted again.
	MirrorSize  int64 `json:"mirrorSize,omitempty"`
	MirrorMtime int64 `json:"mirrorMtimeNs,omitempty"`
	// What the harness's listing calls the session (Session.Title and
	// FirstMessage), as of the last refresh: what a search hit in the
	// mirror shows, as a listing would.
	Title        string `json:"title,omitempty"`
	FirstMessage string `json:"firstMessage,omitempty"`
	// InPlace: the session is searched in place (inplace.go) and has no
	// mirror file, until a person opens it (Ensure).
	InPlace bool `json:"inPlace,omitempty"`
	// Opened is when a person's opening of the session made its mirror
	// file (Ensure; Unix nanoseconds): the ones made longest ago go first
	// (trimOpened). A file's mtime would not do: a coarse clock gives
	// conversions in a row the same.
	Opened int64 `json:"openedNs,omitempty"`
}

// current reports whether prev, the manifest's row of a source, still
// stands for row, the source as it is now: the same source stat and id,
// converted by this format, and its mirror file (target) as it was
// written, or a conversion that failed (which a refresh does not retry
// until the source changes).
func (prev mirrorRow) current(row mirrorRow, target string) bool {
	if prev.Size != row.Size || prev.ModTime != row.ModTime || prev.ID != row.ID || prev.Format != mirrorFormat {
		return false
	}
	if prev.Err != "" || prev.InPlace {
		return true
	}
	fi, err := os.Lstat(target)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == prev.MirrorSize && fi.ModTime().UnixNano() == prev.MirrorMtime
}

// MirrorStats say what a refresh did.
type MirrorStats struct {
	Sessions  int     // source sessions listed
	Converted int     // converted again (new or changed)
	Removed   int     // mirrors of sources gone
	Errors    []error // sources that could not be converted (their mirror is gone too)
}

// DefaultMirrorDir is where the mirror of harness's sessions under root
// lives: os.UserCacheDir()/xdev/foreign/<harness>-<hash of root>.
func DefaultMirrorDir(harness, root string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "xdev", "foreign", harness+"-"+hex.EncodeToString(sum[:6])), nil
}

const mirrorSub = "mirror" // the one project directory under sessions/

// mirrorFormat is the version of what a mirror file holds: 2 is a
// conversion for reading (ForReading), each entry naming its source line;
// 3 names a Claude Code compaction by its summary's line; 4 leaves out
// the label omp's import gives a Codex compaction, text its file never
// held; 5 searches Claude Code's and Codex's sessions in place (their
// mirror files of format 4, made for the index, are removed). A change
// to the conversion that a mirror shows bumps it.
const mirrorFormat = 5

// Refresh brings the mirror up to date with the harness's sessions,
// subagent transcripts included. Two refreshes of one mirror run one
// after the other (an flock beside the manifest). A mirror file whose
// stat is not the one it was written with is converted again. A refresh
// ctx stops keeps what it converted (and the mirrors it did not reach)
// and returns ctx's error; the next one goes on from there.
func (m *Mirror) Refresh(ctx context.Context) (MirrorStats, error) {
	return m.refresh(ctx, false)
}

// Rebuild converts every session again, trusting nothing of the mirror:
// what `--reindex` does, and the cure for a mirror damaged in place.
func (m *Mirror) Rebuild(ctx context.Context) (MirrorStats, error) {
	return m.refresh(ctx, true)
}

func (m *Mirror) refresh(ctx context.Context, rebuild bool) (MirrorStats, error) {
	var st MirrorStats
	files := filepath.Join(session.SessionsDir(m.Dir), mirrorSub)
	if err := os.MkdirAll(files, 0o700); err != nil {
		return st, err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(m.Dir, "lock"), nil)
	if err != nil {
		return st, err
	}
	defer unlock()
	m.byPath, m.walked = nil, nil
	if !rebuild {
		if n, errs, ok := m.unchanged(); ok {
			// Hits are named from the manifest's lines, read when a hit
			// is named (SourcePath, Listed).
			m.sources, m.listed = nil, nil
			st.Sessions, st.Errors = n, errs
			return st, nil
		}
	}
	inputs := m.stampInputs() // before the listing reads them
	old, oldRows := m.readManifestRows()
	if rebuild {
		old = nil
	}
	list, err := m.list()
	if err != nil {
		return st, err
	}
	inPlace := m.InPlace()
	if !slices.Equal(inputs, m.stampInputs()) {
		inputs = nil // changed while listed: the next refresh lists again
	}
	st.Sessions = len(list)
	rows := make([]mirrorRow, 0, len(list))
	keep := map[string]bool{}
	unlisted := map[string]string{} // what the listing said of a transcript it could not list
	var stopped error
	// The rows are decided in order; the sessions to convert are
	// converted on every CPU (each in bounded memory, as one is), then
	// their rows filled in: a first refresh converts thousands.
	type conversion struct {
		at     int // the row's index
		s      Session
		target string
		err    error
		done   bool
	}
	var todo []conversion
	var changed []Session // of a source in place: what its index reads again
	for _, s := range list {
		if s.Err != nil {
			st.Errors = append(st.Errors, s.Err)
			unlisted[s.Path] = s.Err.Error()
			continue
		}
		size, mtime, err := m.listedStamp(s)
		if err != nil {
			continue // gone since the listing
		}
		row := mirrorRow{Source: s.Path, ID: s.ID, Size: size, ModTime: mtime, Mirror: mirrorName(s.Path)}
		target := filepath.Join(files, row.Mirror)
		row.Format = mirrorFormat
		row.Title, row.FirstMessage = s.Title, s.FirstMessage
		if prev, ok := old[s.Path]; ok && prev.current(row, target) {
			prev.Title, prev.FirstMessage = s.Title, s.FirstMessage
			rows = append(rows, prev)
			keep[prev.Mirror] = prev.Err == "" && !prev.InPlace
			continue
		}
		if inPlace {
			// Read by the index as it is: no mirror file (and the one
			// a person opened, of the source as it was, is removed).
			row.InPlace = true
			rows = append(rows, row)
			changed = append(changed, s)
			continue
		}
		todo = append(todo, conversion{at: len(rows), s: s, target: target})
		rows = append(rows, row)
	}
	var converted atomic.Int64
	forEach(len(todo), func(k int) {
		c := &todo[k]
		// Looked at once a session is converted, for a refresh to get on
		// however little time it is given: what was converted stands.
		if converted.Load() > 0 && ctx.Err() != nil {
			return
		}
		rows[c.at].Skipped, c.err = m.convert(c.s, c.target)
		c.done = true
		converted.Add(1)
	})
	drop := map[int]bool{}
	for _, c := range todo {
		row := &rows[c.at]
		switch {
		case !c.done:
			// Not reached: the mirror of the session stays as it was, and
			// the next refresh goes on.
			stopped = ctx.Err()
			if prev, ok := old[c.s.Path]; ok {
				*row = prev
			} else {
				drop[c.at] = true
				continue
			}
		case c.err != nil:
			row.Err = c.err.Error()
			st.Errors = append(st.Errors, c.err)
		default:
			st.Converted++
			if mfi, err := os.Stat(c.target); err == nil {
				row.MirrorSize, row.MirrorMtime = mfi.Size(), mfi.ModTime().UnixNano()
			}
		}
		keep[row.Mirror] = row.Err == ""
	}
	if len(drop) > 0 {
		kept := rows[:0]
		for k, row := range rows {
			if !drop[k] {
				kept = append(kept, row)
			}
		}
		rows = kept
	}
	if inPlace {
		m.keepListing(changed)
	}
	ents, _ := os.ReadDir(files)
	for _, e := range ents {
		if !keep[e.Name()] {
			if os.Remove(filepath.Join(files, e.Name())) == nil {
				st.Removed++
			}
		}
	}
	if err := m.dropListingStamp(); err != nil {
		return st, err
	}
	if err := m.writeManifest(rows, oldRows); err != nil {
		return st, err
	}
	if stopped == nil {
		m.writeListingStamp(inputs, rows, unlisted)
	}
	m.index(rows)
	return st, stopped
}

// Ensure brings the mirror file of one session up to date and returns its
// path: what show and export read a Claude Code or Codex session
// through, so that reading one writes nothing outside the cache (never a
// temp file to leave behind when the reader is killed) and a second
// reading of an unchanged transcript converts nothing. The source may lie
// outside the harness's root (a path someone named); a later Refresh,
// which keeps the mirrors of the listed sessions only, drops its mirror.
func (m *Mirror) Ensure(ctx context.Context, s Session) (MirrorFile, error) {
	row, target, unlock, err := m.opening(ctx, s)
	if err != nil {
		return MirrorFile{}, err
	}
	defer unlock()
	// Found by the session's line alone: a session opened before and
	// unchanged since, which every view of its page is, by a binary
	// search of the file (a few reads of 4 KB: lookupLine); a first
	// opening, whose row is spliced in, by one of the lines read whole.
	// Decoding and writing every row (10,000 of them, 23 MB allocated)
	// made each O(every session).
	if line, ok := m.lookupLine(row.Mirror); ok {
		var prev mirrorRow
		if jsonv2.Unmarshal(line, &prev) == nil && prev.Source == s.Path && prev.Err == "" && !prev.InPlace && prev.current(row, target) {
			return MirrorFile{target, prev.Skipped}, nil
		}
	}
	ml := m.searchableManifest()
	if ml == nil {
		if ml, err = m.manifestOfRows(); err != nil {
			return MirrorFile{}, err
		}
	}
	return m.ensureSpliced(ml, s, row, target)
}

// opening begins Ensure's opening of s: the mirror's lock taken (unlock
// drops it), and the row s has as it is now, with the path of its mirror
// file (target).
func (m *Mirror) opening(ctx context.Context, s Session) (row mirrorRow, target string, unlock func(), err error) {
	files := filepath.Join(session.SessionsDir(m.Dir), mirrorSub)
	if err := os.MkdirAll(files, 0o700); err != nil {
		return row, "", nil, err
	}
	if unlock, err = filelock.Lock(ctx, filepath.Join(m.Dir, "lock"), nil); err != nil {
		return row, "", nil, err
	}
	size, mtime, err := m.stamp(s)
	if err != nil {
		unlock()
		return row, "", nil, err
	}
	row = mirrorRow{Source: s.Path, ID: s.ID, Size: size, ModTime: mtime, Mirror: mirrorName(s.Path), Format: mirrorFormat}
	return row, filepath.Join(files, row.Mirror), unlock, nil
}

// openedBytes bounds the mirror files of the sessions a person opened,
// of a mirror whose sessions are searched in place: past it, the ones
// converted longest ago are removed, to be converted again when opened.
// A command that opens every session (xdev secrets) would otherwise
// leave a copy of every transcript in the cache.
var openedBytes int64 = 512 << 20

// trimOpened keeps the mirror files of rows, but keep's, within
// openedBytes: a row whose file it removes is in place again.
func (m *Mirror) trimOpened(rows map[string]mirrorRow, keep string) {
	if !m.InPlace() {
		return // the index reads every mirror file
	}
	var opened []mirrorRow
	var total int64
	for _, r := range rows {
		if !r.InPlace && r.Err == "" && r.MirrorSize > 0 {
			opened = append(opened, r)
			total += r.MirrorSize
		}
	}
	if total <= openedBytes {
		return
	}
	slices.SortFunc(opened, func(a, b mirrorRow) int { return cmp.Compare(a.Opened, b.Opened) })
	files := filepath.Join(session.SessionsDir(m.Dir), mirrorSub)
	for _, r := range opened {
		if total <= openedBytes {
			break
		}
		if r.Source == keep {
			continue
		}
		if err := os.Remove(filepath.Join(files, r.Mirror)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		total -= r.MirrorSize
		r.InPlace, r.MirrorSize, r.MirrorMtime, r.Skipped, r.Opened = true, 0, 0, 0, 0
		rows[r.Source] = r
	}
}

// list is the source's sessions, subagents' included: Listing's when
// set, else listed now.
func (m *Mirror) list() ([]Session, error) {
	if m.Listing != nil {
		return m.Listing()
	}
	return m.Source.List(true)
}

// listedStamp is stamp, taken from the listing when it stat'ed the file
// (Session.mtimeNs): a refresh of an unchanged harness then makes one
// stat of each transcript, the listing's. Only a refresh trusts it: it
// has just listed; a session handed to Ensure may have been listed long
// before.
func (m *Mirror) listedStamp(s Session) (size, mtime int64, err error) {
	if _, ok := m.Source.(Stamper); !ok && s.mtimeNs != 0 {
		return s.Size, s.mtimeNs, nil
	}
	return m.stamp(s)
}

// A Stamper is a Source whose sessions are not files (rows of a
// database): Stamp says what a session's size and modification time are
// for its mirror, which is converted again when they change.
type Stamper interface {
	Stamp(s Session) (size, mtime int64, err error)
}

// stamp is the size and modification time of s's source, by which its
// mirror is kept: its file's stat, or what the Source says (Stamper).
func (m *Mirror) stamp(s Session) (size, mtime int64, err error) {
	if st, ok := m.Source.(Stamper); ok {
		return st.Stamp(s)
	}
	fi, err := regularfile.Stat(s.Path)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), nil
}

// A MirrorFile is the mirror of one session: the omp-format file to read,
// and how many of the source's lines the conversion skipped as
// unreadable (a torn line, junk), for the reader to say.
type MirrorFile struct {
	Path    string
	Skipped int
}

// convert writes s's conversion at target, replacing what was there once
// the new file is whole, and returns how many source lines it skipped. A
// session that names no working directory (a Claude Code transcript
// outside a projects dir) reads as started in its own file's directory;
// an import asks instead (ErrNoCwd).
func (m *Mirror) convert(s Session, target string) (skipped int, err error) {
	conv := m.Source.Stream(s, ForReading)
	if conv == nil {
		return 0, fmt.Errorf("%s: %s sessions are read as they are, not mirrored", s.Path, s.Harness)
	}
	counted := func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return conv(func(c *Converted) error {
			skipped = c.Skipped
			if !filepath.IsAbs(c.Cwd) {
				c.Cwd = filepath.Dir(s.Path)
			}
			return begin(c)
		}, emit)
	}
	err = writeSessionAs(func(*Converted) (string, string, error) { return target, s.ID, nil }, true, nil, s.Provenance(), counted, true)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Path, err)
	}
	return skipped, nil
}

// mirrorName is the name of the mirror file of the transcript at source.
func mirrorName(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:12]) + ".jsonl"
}

// MirrorPath is the mirror file that a mirror in dir keeps of the
// transcript at source (whether or not it has been made yet): what a
// search limited to one session filters on.
func MirrorPath(dir, source string) string {
	return filepath.Join(session.SessionsDir(dir), mirrorSub, mirrorName(source))
}
