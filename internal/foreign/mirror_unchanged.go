package foreign

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// A refresh of a mirror whose harness changed nothing is every search's
// freshness check, so it must cost a stat of each transcript and little
// more. Listing the harness for it decoded the list cache (at 10,000
// Claude Code transcripts, 11 MB of heap) and the manifest into maps
// (4.7 MB more), a third of a search's memory, to learn that nothing
// changed.
//
// So a complete refresh leaves beside the manifest its listing's stamp
// (listing.json): the stat of each file the listing read besides the
// transcripts (Claude Code's history.jsonl, whence first prompts and
// times; Codex's session_index.jsonl, whence titles), each transcript
// the manifest has no row of (one the listing left out or could not
// read, with what it said), and the sum of a hash of each row's path and
// stat (statSum). The next refresh of a source that names its
// transcripts without opening them (a transcriptWalker: Claude Code and
// Codex, whose transcripts are read in place) walks its directories and
// stats each transcript (on several goroutines, statAll): when the stats
// of those with a row sum to the stamp's, each unlisted one is
// unchanged, and the listing's own files are as stamped, nothing can
// have changed and the refresh ends there, having read no manifest (at
// 10,000 Claude Code transcripts, finding and decoding each row was 80
// of a search's 225 ms). What it found is what the index in place reads
// next (Transcripts). The mirror file made when a person opened a
// session is not the refresh's to check: Ensure checks it before it is
// read again.
//
// The stamp is only ever written by a refresh that listed the harness
// whole and reached every session, after the manifest; any other
// writer of the manifest (Ensure, a refresh cut short) removes it first.

// listingStampFormat is the stamp's version, with the mirror's: a stamp
// of another is no stamp.
const listingStampFormat = 2 // 2: the digest of rows read in place

// A transcriptWalker is a Source that names its transcripts without
// opening one (walking its directories), every one its listing with
// subagents would look at, and names the files besides them that its
// listing reads.
type transcriptWalker interface {
	walkTranscripts(fn func(path string))
	listingInputs() []string
}

// listingStamp is a complete refresh's stamp (listing.json).
type listingStamp struct {
	Format       int            `json:"format"`
	MirrorFormat int            `json:"mirrorFormat"`
	Rows         int            `json:"rows"`     // the manifest's rows
	Inputs       []fileStamp    `json:"inputs"`   // the listing's own files
	Unlisted     []unlistedFile `json:"unlisted"` // transcripts with no row
	// Digest is the statSum of the rows.
	Digest string `json:"digest"`
}

// statSum is a sum of a hash of each transcript's path and stat, in any
// order: what a stamp keeps of the manifest's rows, for a walk to tell
// that each transcript is as its row says without reading the rows.
// Each hash is FNV-1a's of 128 bits (a path, then its size and
// modification time in 16 bytes: no two rows hash the same input), and
// the sum is modulo 2^128.
type statSum struct{ hi, lo uint64 }

func (s *statSum) add(path string, size, mtime int64) {
	h := fnv.New128a()
	io.WriteString(h, path)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(size))
	binary.LittleEndian.PutUint64(b[8:], uint64(mtime))
	h.Write(b[:])
	sum := h.Sum(b[:0])
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, binary.BigEndian.Uint64(sum[8:]), 0)
	s.hi, _ = bits.Add64(s.hi, binary.BigEndian.Uint64(sum[:8]), carry)
}

func (s statSum) String() string { return fmt.Sprintf("%016x%016x", s.hi, s.lo) }

// fileStamp is a file's stat as a stamp keeps it; Missing for a file
// that was not there.
type fileStamp struct {
	Path    string `json:"path"`
	Size    int64  `json:"size,omitzero"`
	Mtime   int64  `json:"mtimeNs,omitzero"`
	Ino     uint64 `json:"ino,omitzero"`
	Missing bool   `json:"missing,omitzero"`
}

// unlistedFile is a transcript the manifest has no row of: its stat,
// and the error its listing gave, which every refresh reports.
type unlistedFile struct {
	fileStamp
	Err string `json:"error,omitempty"`
}

func (m *Mirror) listingStampPath() string { return filepath.Join(m.Dir, "listing.json") }

// stampFile is the stat of the file at path, as a stamp keeps it.
func stampFile(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{Path: path, Missing: true}
	}
	e, ok := stampOf(fi) // the list cache's stamp, of the same stat
	if !ok {
		return fileStamp{Path: path, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	}
	return fileStamp{Path: path, Size: e.Size, Mtime: e.Mtime, Ino: e.Ino}
}

// stampInputs is the stat of each of the listing's own files, taken
// before the listing reads them; nil when one changed too lately to be
// sure the listing read it as it is now (racyWindow), or the source
// keeps no stamp.
func (m *Mirror) stampInputs() []fileStamp {
	w, ok := m.Source.(transcriptWalker)
	if !ok {
		return nil
	}
	out := []fileStamp{} // not nil: a source with no such files
	now := time.Now()
	for _, p := range w.listingInputs() {
		s := stampFile(p)
		if !s.Missing && now.Sub(time.Unix(0, s.Mtime)) < racyWindow {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// unchanged reports whether the source is, by its stats alone, as the
// last complete refresh left the mirror (see above), and then how many
// sessions it listed and the errors it reported of those it could not.
func (m *Mirror) unchanged() (int, []error, bool) {
	w, ok := m.Source.(transcriptWalker)
	if !ok {
		return 0, nil, false
	}
	stamp, ok := m.readListingStamp()
	if !ok {
		return 0, nil, false
	}
	inputs := w.listingInputs()
	if len(inputs) != len(stamp.Inputs) {
		return 0, nil, false
	}
	for i, p := range inputs {
		if stampFile(p) != stamp.Inputs[i] {
			return 0, nil, false
		}
	}
	m.manifest = nil // read again when a hit is named
	paths, same := stamp.walk(w)
	if !same || len(paths) != stamp.Rows {
		return 0, nil, false
	}
	var sum statSum
	files := make([]session.SessionFile, len(paths))
	for i, st := range statAll(paths) {
		if !st.ok {
			return 0, nil, false
		}
		sum.add(paths[i], st.size, st.mtime.UnixNano())
		// As Transcripts makes it of the row: no inode, no subagent
		// flag, for the index to find it unchanged.
		files[i] = session.SessionFile{Path: paths[i], Size: st.size, ModTime: st.mtime}
	}
	if sum.String() != stamp.Digest {
		return 0, nil, false
	}
	m.walked = files
	return stamp.sessions(len(paths))
}

// walk names w's transcripts but those the stamp names unlisted,
// each of which it checks against its stamp: false when one differs or
// is not there.
func (s listingStamp) walk(w transcriptWalker) ([]string, bool) {
	unlisted := make(map[string]unlistedFile, len(s.Unlisted))
	for _, u := range s.Unlisted {
		unlisted[u.Path] = u
	}
	var paths []string
	same, seen := true, 0
	w.walkTranscripts(func(path string) {
		if u, ok := unlisted[path]; ok {
			seen++
			same = same && stampFile(path) == u.fileStamp
			return
		}
		paths = append(paths, path)
	})
	return paths, same && seen == len(s.Unlisted)
}

// sessions is what a refresh that found nothing changed says: the
// sessions listed (the rows, and each unlisted transcript the listing
// gave an error of) and those errors.
func (s listingStamp) sessions(rows int) (int, []error, bool) {
	var errs []error
	n := rows
	for _, u := range s.Unlisted {
		if u.Err != "" {
			errs = append(errs, errors.New(u.Err))
			n++ // listed, with its error
		}
	}
	return n, errs, true
}

// readListingStamp is the stamp of the last complete refresh, false when
// there is none (or it is of another format).
func (m *Mirror) readListingStamp() (listingStamp, bool) {
	data, err := regularfile.ReadFile(m.listingStampPath(), 1<<20)
	var s listingStamp
	if err != nil || json.Unmarshal(data, &s) != nil || s.Format != listingStampFormat || s.MirrorFormat != mirrorFormat || s.Inputs == nil || s.Digest == "" {
		return listingStamp{}, false
	}
	return s, true
}

// writeListingStamp records a complete refresh: inputs, the listing's
// own files as stamped before it read them (nil: none to trust), and the
// rows the manifest was just written with. The transcripts the source
// names that have no row are stamped now: the refresh found them
// unlisted, and one changed since is one whose stamp differs.
func (m *Mirror) writeListingStamp(inputs []fileStamp, rows []mirrorRow, errs map[string]string) {
	w, ok := m.Source.(transcriptWalker)
	if !ok || inputs == nil {
		return
	}
	have := make(map[string]bool, len(rows))
	for _, r := range rows {
		have[r.Source] = true
	}
	stamp := listingStamp{Format: listingStampFormat, MirrorFormat: mirrorFormat, Rows: len(rows), Inputs: inputs, Digest: rowsDigest(rows)}
	if stamp.Digest == "" {
		return
	}
	racy := false
	w.walkTranscripts(func(path string) {
		if have[path] {
			return
		}
		s := stampFile(path)
		if !s.Missing && time.Since(time.Unix(0, s.Mtime)) < racyWindow {
			racy = true // it may be half written: a listing of it now may differ
		}
		stamp.Unlisted = append(stamp.Unlisted, unlistedFile{s, errs[path]})
	})
	if racy {
		return
	}
	atomicfile.ReplaceCache(m.listingStampPath(), func(w io.Writer) error {
		return json.MarshalWrite(w, stamp)
	})
}

// rowsDigest is the statSum of rows; "" (no stamp) when a row is of
// another format or failed: a conversion's error, which a source read in
// place does not make (its rows are each a transcript the index reads,
// as Transcripts says).
func rowsDigest(rows []mirrorRow) string {
	var sum statSum
	for _, r := range rows {
		if r.Format != mirrorFormat || r.Err != "" {
			return ""
		}
		sum.add(r.Source, r.Size, r.ModTime)
	}
	return sum.String()
}

// dropListingStamp removes the stamp, before the manifest is written by
// anything but a complete refresh.
func (m *Mirror) dropListingStamp() error {
	err := os.Remove(m.listingStampPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
