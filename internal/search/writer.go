package search

import (
	"context"
	"hash/fnv"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// writer indexes files inside one write transaction at a time.
type writer struct {
	db      *DB
	harness string
	pending int64 // bytes read since the last commit
	inTx    bool
	stmts   map[string]*sqlite3.Stmt
	// snap is the stat snapshot (see statRows), changed with every files
	// row and written with each commit.
	snap      map[string]statRow
	snapDirty bool
	// partial: snap holds only the rows of the files a refresh was told
	// of (RefreshOptions.Paths); the snapshot is then dropped where it
	// changed, not written, and the next whole refresh writes it anew.
	partial bool
	// next is the rowid the next entry of the file being indexed takes
	// (see rowid.go).
	next int64
}

func (w *writer) begin() error {
	if err := w.db.conn.Exec(`BEGIN IMMEDIATE`); err != nil {
		return err
	}
	w.inTx, w.pending = true, 0
	return nil
}

func (w *writer) commit() error {
	if w.inTx && w.snapDirty {
		var err error
		if w.partial {
			err = w.exec(`DELETE FROM blobs WHERE key = 'stats'`)
		} else {
			err = w.exec(`INSERT OR REPLACE INTO blobs(key, value) VALUES('stats', ?)`, encodeStats(w.snap))
		}
		if err != nil {
			return err
		}
		w.snapDirty = false
	}
	w.closeStmts()
	if !w.inTx {
		return nil
	}
	w.inTx = false
	return w.db.conn.Exec(`COMMIT`)
}

func (w *writer) rollback() {
	w.closeStmts()
	if w.inTx {
		w.db.conn.Exec(`ROLLBACK`)
		w.inTx = false
	}
}

func (w *writer) closeStmts() {
	for _, s := range w.stmts {
		s.Close()
	}
	w.stmts = nil
}

// stmt returns a prepared statement, kept for the transaction.
func (w *writer) stmt(sql string) (*sqlite3.Stmt, error) {
	if s, ok := w.stmts[sql]; ok {
		s.Reset()
		s.ClearBindings()
		return s, nil
	}
	s, _, err := w.db.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if w.stmts == nil {
		w.stmts = map[string]*sqlite3.Stmt{}
	}
	w.stmts[sql] = s
	return s, nil
}

func (w *writer) exec(sql string, args ...any) error {
	s, err := w.stmt(sql)
	if err != nil {
		return err
	}
	if err := bind(s, args...); err != nil {
		return err
	}
	return s.Exec()
}

// dropFile removes what the index holds of a file: its entries and their
// text, and with row, its files row.
func (w *writer) dropFile(path string, id int64, row bool) error {
	lo, hi := fileRows(id)
	if err := w.exec(`DELETE FROM docs WHERE rowid IN (SELECT id FROM entries WHERE id BETWEEN ? AND ?)`, lo, hi); err != nil {
		return err
	}
	if err := w.exec(`DELETE FROM entries WHERE id BETWEEN ? AND ?`, lo, hi); err != nil {
		return err
	}
	if row {
		delete(w.snap, path)
		w.snapDirty = true
		return w.exec(`DELETE FROM files WHERE id = ?`, id)
	}
	return nil
}

// file brings one file's part of the index up to date and returns the
// bytes it read. An error that is not the database's is the file's: what
// the index held of it stays. When ctx is done the read stops at the
// entry, what was read is kept, and ctx's error is returned.
func (w *writer) file(ctx context.Context, f session.SessionFile, row *fileRow, st *RefreshStats) (int64, error) {
	info := session.Stat(f.Path)
	if info.Err != nil {
		// Not a session, or unreadable: remembered with its stat, so that
		// it is reported once, not at every refresh, and looked at again
		// when it changes.
		r := fileRow{path: f.Path, harness: w.harness, subagent: f.Subagent, ino: int64(f.Ino), size: f.Size,
			mtime: f.ModTime.UnixNano(), err: info.Err.Error()}
		if row != nil {
			r.id = row.id
			if err := w.dropFile(row.path, row.id, false); err != nil {
				return 0, err
			}
		}
		if err := w.saveFile(&r); err != nil {
			return 0, err
		}
		return 0, info.Err
	}
	grow := row != nil && row.ino == int64(f.Ino) && f.Size >= row.cur.Offset && stillThere(f.Path, row)
	if row != nil && !grow {
		if err := w.dropFile(row.path, row.id, false); err != nil {
			return 0, err
		}
	}
	r := fileRow{path: f.Path, harness: w.harness, subagent: f.Subagent, ino: int64(f.Ino), size: f.Size,
		mtime: f.ModTime.UnixNano()}
	if grow {
		r = *row
		r.ino, r.size, r.mtime, r.subagent = int64(f.Ino), f.Size, f.ModTime.UnixNano(), f.Subagent
	} else if row != nil {
		r.id = row.id
	}
	r.sessionID, r.cwd, r.created, r.parentSession = info.ID, info.Cwd, info.Created.UnixMilli(), info.ParentSession
	if r.id == 0 {
		// A new file: its row first, for the id its entries name. Every
		// row is written with its cursor below.
		if err := w.saveFile(&r); err != nil {
			return 0, err
		}
	}
	var err error
	if w.next, err = w.nextRowid(r.id); err != nil {
		return 0, err
	}
	if title := info.ListTitle(); title != r.title { // r.title: the title document the index holds
		if err := w.setTitle(&r, title); err != nil {
			return 0, err
		}
		st.TextBytes += int64(len(title))
	}

	// linear: the new entries only extend the leaf's branch, and none
	// changes what is in the context; the flags of the others stand.
	linear := true
	prev := r.cur.LastID()
	start := r.cur.Offset
	// The file is read, and each entry's text made, on a goroutine of its
	// own while this one writes the entries before it into the index
	// (pipeline): SQLite's work and the decoding each on a CPU (a first
	// index spends a third of its time decoding).
	var (
		cur session.Cursor
		rs  session.ReadStats
	)
	err, werr := pipeline(8, func(send func(indexDoc) error) error {
		k := 0
		var err error
		cur, rs, err = session.ReadFrom(f.Path, r.cur, searchtext.ReadOptions, func(rd session.Read) error {
			// Looked at once an entry is in, for a refresh to get on
			// however little time it is given.
			if k++; k > 1 && k%ctxEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			n, d, ok := nodeOf(rd)
			if !ok {
				return nil // not even an id in its first megabyte: skipped, and counted
			}
			linear = linear && n.extends(prev)
			prev = n.id
			st.Entries++
			st.TextBytes += int64(len(d.Text) + len(d.Thinking))
			return send(readyDoc(n, d, rd.Offset, rd.Line))
		})
		return err
	}, func(x indexDoc) error {
		return w.entry(r.id, x)
	})
	if werr != nil {
		err = werr
	}
	read := cur.Offset - start
	w.pending += read
	st.Malformed += rs.Malformed
	if err != nil && isSQLiteErr(err) {
		return read, err
	}
	if grow {
		st.Grown++
	} else {
		st.Indexed++
	}
	readErr := err
	r.cur = cur
	r.malformed += int64(rs.Malformed)
	r.indexedB = cur.Offset
	if fh, _, err := regularfile.Open(f.Path, 0); err == nil {
		r.tailOff = max(0, cur.Offset-tailBytes)
		r.tailHash, err = tailHash(fh, r.tailOff, cur.Offset)
		fh.Close()
		if err != nil {
			return read, err
		}
	}
	if readErr != nil {
		// Keep what was read, but make the next refresh look again.
		r.mtime = 0
	}
	if err := w.saveFile(&r); err != nil {
		return read, err
	}
	if !linear {
		if err := w.markBranch(r.id); err != nil {
			return read, err
		}
	}
	return read, readErr
}

// ctxEvery is how many entries a file's read goes between looks at its
// context.
var ctxEvery = 256 // a var: tests look at every entry

// saveFile writes a files row, giving a new one its id.
func (w *writer) saveFile(r *fileRow) error {
	args := []any{r.path, r.harness, r.subagent, r.ino, r.size, r.mtime, r.cur.Offset, r.cur.Line, r.cur.Entries,
		r.cur.HeaderLine, r.cur.Version, r.cur.LastID(), r.tailOff, r.tailHash, r.sessionID, r.cwd, r.title,
		r.created, r.parentSession, r.malformed, r.indexedB, r.err}
	if r.tailHash == nil {
		args[13] = []byte{}
	}
	defer func() {
		w.snap[r.path] = statRow{r.id, r.ino, r.size, r.mtime, r.subagent}
		w.snapDirty = true
	}()
	if r.id == 0 {
		err := w.exec(`INSERT INTO files(path, harness, subagent, ino, size, mtime, cur_off, cur_line, cur_entries,
			header_line, version, last_id, tail_off, tail_hash, session_id, cwd, title, created, parent_session,
			malformed, indexed_bytes, error) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
		r.id = w.db.conn.LastInsertRowID()
		if err == nil && r.id > maxFileID {
			return errRowids(r.id)
		}
		return err
	}
	return w.exec(`UPDATE files SET path=?, harness=?, subagent=?, ino=?, size=?, mtime=?, cur_off=?, cur_line=?,
		cur_entries=?, header_line=?, version=?, last_id=?, tail_off=?, tail_hash=?, session_id=?, cwd=?, title=?,
		created=?, parent_session=?, malformed=?, indexed_bytes=?, error=? WHERE id=?`, append(args, r.id)...)
}

// setTitle replaces the title's document.
func (w *writer) setTitle(r *fileRow, title string) error {
	lo, hi := fileRows(r.id)
	if r.title == "" {
		// No title document to delete: a delete costs FTS5 a flush.
	} else if err := w.exec(`DELETE FROM docs WHERE rowid IN (SELECT id FROM entries WHERE id BETWEEN ? AND ? AND type = 'title')`, lo, hi); err != nil {
		return err
	}
	if err := w.exec(`DELETE FROM entries WHERE id BETWEEN ? AND ? AND type = 'title'`, lo, hi); err != nil {
		return err
	}
	r.title = title
	if title == "" {
		return nil
	}
	id, err := w.take(r.id)
	if err != nil {
		return err
	}
	if err := w.exec(`INSERT INTO entries(id, file, entry_id, parent_id, type, first_kept, role, tool, model, ts, off, line,
		digest, on_branch, in_context) VALUES(?, ?, '', '', 'title', '', ?, '', '', ?, 0, 0, 0, 1, 1)`, id, r.id, RoleTitle, r.created); err != nil {
		return err
	}
	return w.exec(`INSERT INTO docs(rowid, text, thinking) VALUES(?, ?, '')`, id, searchtext.SpaceCJK(searchtext.CapText(title)))
}

// node is where an entry hangs in the tree.
type node struct {
	id, parent, typ string
	kept            string // a compaction's firstKeptEntryId
}

// entry indexes one entry: its entries row always (the branch walk needs
// every entry), its text when it has some.
func (w *writer) entry(file int64, x indexDoc) error {
	n, d := x.n, x.d
	id, err := w.take(file)
	if err != nil {
		return err
	}
	if err := w.exec(`INSERT INTO entries(id, file, entry_id, parent_id, type, first_kept, role, tool, model, ts, off, line,
		digest, on_branch, in_context) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,1,1)`,
		id, file, n.id, n.parent, n.typ, n.kept, d.Role, d.Tool, d.Model, d.TS, x.off, x.line, x.digest); err != nil {
		return err
	}
	if d.Role == "" {
		return nil
	}
	return w.exec(`INSERT INTO docs(rowid, text, thinking) VALUES(?, ?, ?)`, id, x.text, x.thk)
}

// indexDoc is an entry to index, its text made ready for the index.
type indexDoc struct {
	n         node
	d         searchtext.Doc
	off       int64 // where its line starts
	line      int
	text, thk string // d's, with CJK spaced, as the index takes them
	digest    uint64
}

// readyDoc makes entry n, of text d, on the line that starts at off,
// ready for the index: on the goroutine that reads, not SQLite's.
func readyDoc(n node, d searchtext.Doc, off int64, line int) indexDoc {
	x := indexDoc{n: n, d: d, off: off, line: line}
	if d.Role != "" {
		x.digest = digest(n.id, d)
		x.text, x.thk = searchtext.SpaceCJK(d.Text), searchtext.SpaceCJK(d.Thinking)
	}
	return x
}

// extends reports whether entry n only extends the branch whose leaf is
// prev, changing nothing of what is in the context: the flags of the
// entries before it then stand (no branch walk).
func (n node) extends(prev string) bool {
	return n.parent == prev && n.id != "" && n.typ != session.TypeCompaction && n.typ != session.TypeResetBoundary
}

// digest identifies an entry's searchable content, so that the copies a
// fork makes (same id, same text) are found once. It is never 0.
func digest(id string, d searchtext.Doc) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(d.Text))
	h.Write([]byte{0})
	h.Write([]byte(d.Thinking))
	return h.Sum64() | 1
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
