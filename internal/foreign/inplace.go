package foreign

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/session"
)

// Claude Code's and Codex's transcripts, nine tenths of the bytes of
// every other harness's sessions on a machine, are searched in place: a
// search index reads each one converted as it is read (ReadInPlace),
// with no copy of it written, and cuts a hit's snippet from the entries
// of one line of it converted again alone (EntriesAt). A mirror of
// theirs then keeps its manifest (what the listing said of each
// transcript, its stat) and the mirror files of the sessions a person
// opened (Ensure), nothing else: the mirror files of every session,
// written for the index alone, were as large as the transcripts (7 GB
// of a 13.65 GB home).
//
// Each of those sources converts one line of its transcript alone
// (lineConverter): a line holds one record, whose text needs nothing of
// the lines before it (a tool result's tool name does, which a snippet
// does not show).
type lineConverter interface {
	// lineEntries is the omp entries (for reading) of the record on
	// line, converted alone, with placeholder ids; nil for none.
	lineEntries(line []byte) [][]byte
}

// InPlace reports whether the mirror's sessions are searched in place
// (ReadInPlace, EntriesAt) rather than through mirror files.
func (m *Mirror) InPlace() bool {
	_, ok := m.Source.(lineConverter)
	return ok
}

// Transcripts are the sessions the last refresh listed, each with the
// stat it found (path, size, modification time): what an index in place
// compares with what it read. A transcript whose conversion failed when
// a person opened it is left out, as a mirror leaves it out.
func (m *Mirror) Transcripts() ([]session.SessionFile, error) {
	if m.walked != nil {
		return slices.Clone(m.walked), nil
	}
	ml := m.lines()
	if ml == nil {
		return nil, fmt.Errorf("the manifest of %s cannot be read", m.Dir)
	}
	out := make([]session.SessionFile, 0, len(ml.starts))
	for i := range ml.starts {
		r, ok := ml.stampAt(i)
		if !ok {
			return nil, fmt.Errorf("the manifest of %s cannot be read", m.Dir)
		}
		if r.Err != "" {
			continue
		}
		out = append(out, session.SessionFile{Path: r.Source, Size: r.Size, ModTime: time.Unix(0, r.ModTime)})
	}
	return out, nil
}

// IndexSource is the mirror's sessions as a search index reads them in
// place (search.OpenOptions.Source), nil for a mirror of mirror files.
func (m *Mirror) IndexSource() search.Source {
	if !m.InPlace() {
		return nil
	}
	return inPlaceSource{m}
}

// inPlaceSource is a mirror's sessions as a search index reads them in
// place.
type inPlaceSource struct{ m *Mirror }

func (s inPlaceSource) Files() ([]session.SessionFile, error) { return s.m.Transcripts() }

func (s inPlaceSource) Read(ctx context.Context, path string, head func(search.SourceHead) error,
	entry func(search.SourceEntry) error) (int, error) {
	return s.m.ReadInPlace(path, func(ls Session, c *Converted) error {
		// What a mirror file's header says (writeSessionAs): the
		// source's id, the cleaned title, the start (else the listing's).
		created := c.Started
		if created.IsZero() {
			created = ls.Created
		}
		return head(search.SourceHead{ID: ls.ID, Cwd: c.Cwd, Title: session.CleanTitle(c.Title), Created: created})
	}, func(e []byte, line int, off int64) error {
		return entry(search.SourceEntry{JSON: e, Line: line, Offset: off})
	})
}

// FilesAt is Transcripts of the paths named alone (search.PathSource):
// their rows, found in the manifest's lines.
func (s inPlaceSource) FilesAt(paths []string) ([]session.SessionFile, error) {
	ml := s.m.lines()
	if ml == nil {
		return nil, fmt.Errorf("the manifest of %s cannot be read", s.m.Dir)
	}
	var out []session.SessionFile
	for _, p := range cleanPaths(paths) {
		if r, ok := ml.findStamp(mirrorName(p)); ok && r.Source == p && r.Err == "" {
			out = append(out, session.SessionFile{Path: r.Source, Size: r.Size, ModTime: time.Unix(0, r.ModTime)})
		}
	}
	return out, nil
}

func (s inPlaceSource) EntriesAt(path string, off int64, _ int) ([][]byte, error) {
	return s.m.EntriesAt(path, off)
}

// ReadInPlace converts the session whose transcript is at path as a
// reader sees it (ForReading), calling begin with the listed session and
// what its conversion says of it, and emit with each entry, the line of
// the transcript it came from and where that line starts. It returns how
// many lines it skipped as unreadable. The session is the one the last
// refresh listed there. A session is converted whole once begun, as a
// mirror file was: what is read of one in part is read again (there is
// no cursor to go on from).
func (m *Mirror) ReadInPlace(path string, begin func(Session, *Converted) error,
	emit func(entry []byte, line int, off int64) error) (skipped int, err error) {
	s, err := m.listedAt(path)
	if err != nil {
		return 0, err
	}
	// Each session is read once by an index's refresh: what the listing
	// said of it is not kept past that (a server would hold a whole
	// harness's listing).
	delete(m.byPath, path)
	if len(m.byPath) == 0 {
		m.byPath = nil
	}
	conv := m.Source.Stream(s, ForReading)
	if conv == nil {
		return 0, fmt.Errorf("%s: %s sessions are read as they are", path, s.Harness)
	}
	lines := &lineStarts{path: path}
	defer lines.close()
	err = conv(func(c *Converted) error {
		skipped = c.Skipped
		if !filepath.IsAbs(c.Cwd) {
			c.Cwd = filepath.Dir(s.Path)
		}
		return begin(s, c)
	}, func(_ string, e []byte) error {
		line, _ := SourceLineOf(e)
		off, err := lines.at(line)
		if err != nil {
			return err
		}
		return emit(e, line, off)
	})
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return skipped, err
}

// EntriesAt converts the transcript's line that starts at off alone (see
// lineConverter): the entries a search hit there is cut from.
func (m *Mirror) EntriesAt(path string, off int64) ([][]byte, error) {
	lc, ok := m.Source.(lineConverter)
	if !ok {
		return nil, fmt.Errorf("%s: %s sessions are not read in place", path, m.Source.Harness())
	}
	line, err := lineAt(path, off)
	if err != nil {
		return nil, err
	}
	return lc.lineEntries(line), nil
}

// listedAt is the session the listing has at path: the refresh's
// listing of the sessions that changed, else one made now (an index
// behind its mirror).
func (m *Mirror) listedAt(path string) (Session, error) {
	s, ok := m.byPath[path]
	if !ok {
		list, err := m.list()
		if err != nil {
			return Session{}, err
		}
		m.keepListing(list)
		s, ok = m.byPath[path]
	}
	if !ok {
		return Session{}, fmt.Errorf("%s: not one of the %s sessions listed", path, m.Source.Harness())
	}
	return s, nil
}

// keepListing keeps the sessions of a listing by path, for ReadInPlace.
func (m *Mirror) keepListing(list []Session) {
	m.byPath = nil
	for _, s := range list {
		if s.Err == nil {
			if m.byPath == nil {
				m.byPath = map[string]Session{}
			}
			m.byPath[s.Path] = s
		}
	}
}

// lineStarts finds where a transcript's lines start, reading it forward
// beside its conversion, which asks for them nearly in order (a Claude
// Code compaction is named by its summary's line, a little further on;
// an earlier line is found by reading again from the start).
type lineStarts struct {
	path string
	r    io.ReadCloser
	br   *bufio.Reader
	next int   // the number of the line that starts at off
	off  int64 // where line next starts
}

// lineStartsBuffers are the readers lineStarts read with: an index in
// place reads thousands of transcripts.
var lineStartsBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// at is where line n (from 1) starts; past the end, the end.
func (ls *lineStarts) at(n int) (int64, error) {
	if ls.r == nil || n < ls.next {
		ls.close()
		r, err := openTranscript(ls.path)
		if err != nil {
			return 0, err
		}
		ls.r, ls.br = r, lineStartsBuffers.Get().(*bufio.Reader)
		ls.br.Reset(r)
		ls.next, ls.off = 1, 0
	}
	for ls.next < n {
		b, err := ls.br.ReadSlice('\n')
		ls.off += int64(len(b))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the same line goes on
		}
		if err == io.EOF {
			return ls.off, nil
		}
		if err != nil {
			return 0, err
		}
		ls.next++
	}
	return ls.off, nil
}

func (ls *lineStarts) close() {
	if ls.r != nil {
		ls.r.Close()
		ls.br.Reset(nil)
		lineStartsBuffers.Put(ls.br)
		ls.r, ls.br = nil, nil
	}
}

// maxLineAt bounds the line lineAt reads: a line longer than a session
// line may be (session.DefaultMaxLineBytes) has no snippet.
const maxLineAt = session.DefaultMaxLineBytes

// lineAt reads the line of the transcript at path that starts at off,
// without its newline (a compressed rollout is read from its start).
func lineAt(path string, off int64) ([]byte, error) {
	r, err := openTranscript(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if f, ok := r.(*os.File); ok {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
	} else if _, err := io.CopyN(io.Discard, r, off); err != nil {
		return nil, fmt.Errorf("%s: offset %d: %w", path, off, err)
	}
	br := bufio.NewReaderSize(io.LimitReader(r, maxLineAt+1), 64<<10)
	var line []byte
	for {
		b, err := br.ReadSlice('\n')
		line = append(line, b...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > maxLineAt {
			return nil, fmt.Errorf("%s: offset %d: a line over %d bytes", path, off, maxLineAt)
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		break
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	return line, nil
}

// lineEntries converts one Claude Code record alone: a compaction's
// summary as a compaction, a message record as its messages.
func (claudeSource) lineEntries(line []byte) [][]byte {
	v, err := jsonx.Parse(line)
	if err != nil || v.Kind() != jsonx.Object {
		return nil
	}
	if isTrue(v, "isCompactSummary") && v.Get("type").Is("user") {
		return [][]byte{jsonx.ObjectOf(member("type", jsonx.Str("compaction")), member("id", jsonx.Str("line-compaction")),
			member("parentId", jsonx.NullValue()), member("timestamp", jsonx.Str(epoch)),
			member("summary", jsonx.Str(compactSummaryText(v.Get("message")))), member("firstKeptEntryId", jsonx.Str("line-compaction")),
			member("tokensBefore", jsonx.Num(0))).JSON()}
	}
	var out [][]byte
	for i, c := range convertRecord(v, 0, map[string]string{}, true) {
		out = append(out, lineMessage(i, c.msg))
	}
	return out
}

// lineEntries converts one Codex rollout record alone.
func (codexSource) lineEntries(line []byte) [][]byte {
	v, err := jsonx.Parse(line)
	if err != nil || v.Kind() != jsonx.Object {
		return nil
	}
	cv := codexConverter{canon: codexCanon{map[textKey]bool{}, map[textKey]bool{}, map[string]bool{}},
		toolNames: map[string]string{}, model: "codex"}
	it := cv.item(v, 0)
	if it == nil {
		return nil
	}
	var out [][]byte
	if e, err := codexEntry(it, "line-1", "", 0, ForReading); err == nil && e != nil {
		out = append(out, e)
	}
	if it.following.Defined() {
		out = append(out, lineMessage(len(out), it.following))
	}
	return out
}

// epoch is the time the entries of a line read alone carry: a snippet
// shows none.
const epoch = "1970-01-01T00:00:00.000Z"

// lineMessage is a message entry of msg, the i-th of a line read alone.
func lineMessage(i int, msg jsonx.Value) []byte {
	return jsonx.ObjectOf(member("type", jsonx.Str("message")), member("id", jsonx.Str("line-"+strconv.Itoa(i+1))),
		member("parentId", jsonx.NullValue()), member("timestamp", jsonx.Str(epoch)), member("message", msg)).JSON()
}
