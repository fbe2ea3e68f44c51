package search

import (
	"context"
	"fmt"
	"time"

	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// A Source is where an index's sessions come from when they are not the
// files of an omp-format data dir: another harness's transcripts (Claude
// Code's, Codex's), converted to omp's entries as they are read and
// indexed in place, with no copy of them written anywhere. The index
// keeps each session under its transcript's path, and an entry's place
// as the transcript's line (and that line's offset), so a hit names what
// the person has; its snippet is cut from the entries of that line
// (EntriesAt), converted again alone.
//
// A session whose stat (Files) changed is read again whole: a
// conversion has no cursor to go on from. So a refresh that ctx stops
// stops between sessions, never inside one (Read is given ctx for what
// else it may wait on).
type Source interface {
	// Files names the sessions, each with the stat that changes when it
	// does.
	Files() ([]session.SessionFile, error)
	// Read converts the session at path: head is called once, before
	// any entry, then entry with each of its omp entries in order. It
	// returns how many of the transcript's lines it skipped as unreadable.
	Read(ctx context.Context, path string, head func(SourceHead) error, entry func(SourceEntry) error) (skipped int, err error)
	// EntriesAt converts the transcript's line that starts at off (line
	// its number) alone: the JSON of the omp entries it holds text of.
	EntriesAt(path string, off int64, line int) ([][]byte, error)
}

// A PathSource is a Source that can name a few of its sessions alone:
// FilesAt is what Files says of the paths named, and only of them (a
// path it names no session at is gone): what a refresh told which files
// changed (RefreshOptions.Paths) asks, where Files names every one.
type PathSource interface {
	FilesAt(paths []string) ([]session.SessionFile, error)
}

// SourceHead is what a Source's session says of itself, as an omp
// header and title would.
type SourceHead struct {
	ID, Cwd, Title string
	Created        time.Time
}

// SourceEntry is one omp entry of a Source's session: its JSON (valid
// only until the call returns), and the line of the transcript it came
// from, and where that line starts.
type SourceEntry struct {
	JSON   []byte
	Line   int
	Offset int64
}

// fileJob is a session file a refresh reads: its stat, its files row
// (nil for a new one) and how much of it is to read, for the progress.
type fileJob struct {
	f    session.SessionFile
	row  *fileRow
	size int64
}

// sourceItem is what the conversion of sources hands the writer, in
// order: the entries of a job's session, then its end.
type sourceItem struct {
	job int
	doc indexDoc
	end *sourceEnd // the job's last item
}

// sourceEnd is how a session's conversion ended.
type sourceEnd struct {
	head      SourceHead
	skipped   int // the transcript's lines, and the entries' lines, skipped
	entries   int
	textBytes int64
	linear    bool
	err       error
}

// sourceFiles indexes a Source's sessions that changed, each whole (its
// earlier rows dropped first). The sessions are converted, one after the
// other, on a goroutine of their own while this one writes what the one
// before gave (pipeline): a conversion reads its transcript through
// before it gives its first entry (its first pass), so a pipeline within
// one session left SQLite idle for half of it. A refresh ctx stops stops
// between sessions.
func (w *writer) sourceFiles(ctx context.Context, jobs []fileJob, st *RefreshStats, prog Progress, report func(Progress)) error {
	src := w.db.opts.Source
	cur := -1 // the job whose rows are being written
	var r fileRow
	begin := func(k int) error {
		j := jobs[k]
		if j.row != nil {
			if err := w.dropFile(j.row.path, j.row.id, false); err != nil {
				return err
			}
		}
		r = fileRow{path: j.f.Path, harness: w.harness, subagent: j.f.Subagent, ino: int64(j.f.Ino), size: j.f.Size,
			mtime: j.f.ModTime.UnixNano()}
		if j.row != nil {
			r.id = j.row.id
		} else if err := w.saveFile(&r); err != nil { // for the id its entries name
			return err
		}
		var err error
		w.next, err = w.nextRowid(r.id)
		cur = k
		return err
	}
	readErr, writeErr := pipeline(8, func(send func(sourceItem) error) error {
		for k, j := range jobs {
			// Looked at once a session is read, for a refresh to get on
			// however little time it is given.
			if err := ctx.Err(); k > 0 && err != nil {
				return err
			}
			end := &sourceEnd{linear: true}
			dec := session.NewLineDecoder(j.f.Path, searchtext.ReadOptions)
			prev := ""
			skipped, err := src.Read(ctx, j.f.Path, func(h SourceHead) error {
				end.head = h
				return nil
			}, func(se SourceEntry) error {
				rd, ok := dec.Decode(se.JSON)
				if !ok {
					return nil
				}
				n, d, ok := nodeOf(rd)
				if !ok {
					return nil
				}
				end.linear = end.linear && n.extends(prev)
				prev = n.id
				end.entries++
				end.textBytes += int64(len(d.Text) + len(d.Thinking))
				return send(sourceItem{job: k, doc: readyDoc(n, d, se.Offset, se.Line)})
			})
			if err == errStopped {
				return err
			}
			end.skipped, end.err = skipped+dec.Stats().Malformed, err
			if err := send(sourceItem{job: k, end: end}); err != nil {
				return err
			}
		}
		return nil
	}, func(it sourceItem) error {
		if it.job != cur {
			if err := begin(it.job); err != nil {
				return err
			}
		}
		if it.end == nil {
			return w.entry(r.id, it.doc)
		}
		if err := w.endSource(&r, jobs[it.job].f, it.end, st); err != nil {
			return err
		}
		prog.Files++
		prog.Bytes += jobs[it.job].size
		if report != nil {
			report(prog)
		}
		if w.pending > commitBytes {
			if err := w.commit(); err != nil {
				return err
			}
			return w.begin()
		}
		return nil
	})
	if writeErr != nil {
		return writeErr
	}
	return readErr
}

// endSource writes a converted session's files row, its title and its
// branch: or, for one that could not be converted (not one of the
// harness's sessions, unreadable), the row with its error and stat, so
// that it is reported once and read again when it changes.
func (w *writer) endSource(r *fileRow, f session.SessionFile, end *sourceEnd, st *RefreshStats) error {
	w.pending += f.Size
	st.Bytes += f.Size
	st.Indexed++
	st.Entries += end.entries
	st.TextBytes += end.textBytes
	st.Malformed += end.skipped
	r.cur = session.Cursor{}
	r.malformed = int64(end.skipped)
	r.indexedB = f.Size
	r.sessionID, r.cwd, r.created = end.head.ID, end.head.Cwd, end.head.Created.UnixMilli()
	if end.err != nil {
		r.err = end.err.Error()
		if err := w.dropFile(r.path, r.id, false); err != nil {
			return err
		}
		r.title = ""
		st.Errors = append(st.Errors, end.err)
		return w.saveFile(r)
	}
	if end.head.Title != r.title {
		if err := w.setTitle(r, end.head.Title); err != nil {
			return err
		}
		st.TextBytes += int64(len(end.head.Title))
	}
	if err := w.saveFile(r); err != nil {
		return err
	}
	if !end.linear {
		return w.markBranch(r.id)
	}
	return nil
}

// nodeOf is where an entry read hangs in the tree and its searchable
// text, by the rule a data dir's files are read; ok is false for a line
// too long to hold even an id in its first megabyte (skipped, counted).
func nodeOf(rd session.Read) (n node, d searchtext.Doc, ok bool) {
	if e := rd.Entry; e != nil {
		n, d = node{id: e.ID, parent: e.ParentID, typ: e.Type}, searchtext.Of(e)
		if c, ok := e.Body.(*session.Compaction); ok && c.FirstKeptEntryID != nil {
			n.kept = *c.FirstKeptEntryID
		}
		return n, d, true
	}
	n.typ, n.id, n.parent, d = searchtext.OfTruncated(rd.Truncated)
	return n, d, n.id != ""
}

// sourceDoc reads back the searchable text of a Source's hit: the
// entries of its line, converted again, their texts joined (a line holds
// one message in Claude Code's and Codex's transcripts, a few tool
// results at most).
func (db *DB) sourceDoc(h *Hit) (searchtext.Doc, error) {
	var d searchtext.Doc
	entries, err := db.opts.Source.EntriesAt(h.Path, h.Offset, h.Line)
	if err != nil {
		return d, err
	}
	dec := session.NewLineDecoder(h.Path, searchtext.ReadOptions)
	found := false
	for _, e := range entries {
		rd, ok := dec.Decode(e)
		if !ok {
			continue
		}
		_, x, ok := nodeOf(rd)
		if !ok || x.Role == "" {
			continue
		}
		found = true
		d.Text = joinText(d.Text, x.Text)
		d.Thinking = joinText(d.Thinking, x.Thinking)
	}
	if !found {
		return d, fmt.Errorf("%s: line %d: no entry there any more", h.Path, h.Line)
	}
	return d, nil
}

func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}
