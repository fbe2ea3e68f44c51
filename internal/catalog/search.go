package catalog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/secrets"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// A SearchPlace is where one search index reads sessions: an omp-format data
// dir (xdev's, omp's, pi's) as it is, Claude Code's and Codex's
// transcripts in place (converted as the index reads them), or another
// harness's sessions through their mirror, an omp-format data dir in
// xdev's cache of each session converted for reading.
type SearchPlace struct {
	Harness Harness
	// Dir is the omp-format data dir the index reads, or for sessions
	// read in place the mirror dir that names the index (and keeps what
	// the harness's listing said of each).
	Dir string
	// Root is where the sessions are, as a person knows it: Dir, or the
	// harness's root for a mirror.
	Root   string
	mirror *foreign.Mirror
	// inPlace: the mirror's sessions are indexed in place (Claude
	// Code's, Codex's): the index names their transcripts, and holds no
	// mirror file's (foreign.Mirror.InPlace).
	inPlace bool
}

// indexSource is where p's index reads its sessions from when they are
// not a data dir's files: the transcripts of a mirror in place.
func (p SearchPlace) indexSource() search.Source {
	if !p.inPlace {
		return nil
	}
	return p.mirror.IndexSource()
}

// DataDirPlace is the place of the omp-format data dir dir, of harness h
// (Xdev, Omp).
func DataDirPlace(h Harness, dir string) SearchPlace {
	return SearchPlace{Harness: h, Dir: dir, Root: dir}
}

// IndexedFile is the file of p's index that holds the session ref names:
// its mirror for a Claude Code or Codex session, else its own file. What
// a search limited to one session filters on.
func (c *Catalog) IndexedFile(ref Ref) (string, error) {
	if !ref.Harness.Converted() {
		return ref.Path, nil
	}
	m, err := c.mirror(ref.Harness)
	if err != nil {
		return "", err
	}
	if m.InPlace() {
		return ref.Path, nil
	}
	return foreign.MirrorPath(m.Dir, ref.Path), nil
}

// IndexOptions say how OpenIndexes reports as it works; each may be nil.
type IndexOptions struct {
	// Reindex drops each index and reads every session again (a mirror
	// converts every session again).
	Reindex bool
	// Waiting is told that another process (pid holder, 0 if unknown)
	// holds the index at path, once the wait has lasted a moment.
	Waiting func(path string, holder int)
	// Notice is told what an index says of itself (rebuilt, set aside).
	Notice func(string)
	// Problem is told of each session that could not be indexed.
	Problem func(error)
	// Progress returns the progress callback of p's refresh and what to
	// call when it is done.
	Progress func(p SearchPlace) (update func(search.Progress), done func())
	// Live is told of each place whose index a running xdev serve keeps
	// fresh (internal/live), which is then not refreshed here.
	Live func(p SearchPlace)
	// NoLive refreshes every index, whatever a server says of it: the
	// server's own.
	NoLive bool
	// Stale, when set, makes a refresh that ctx stops no error: the
	// index is left as far as the refresh read (search.DB.Refresh keeps
	// it), Stale is told of its place and of each place after it, which
	// is opened unrefreshed, and the indexes answer from what they hold.
	// For a caller on a deadline that would rather answer in part than
	// not at all (xdev mcp); the next refresh goes on where this stopped.
	Stale func(p SearchPlace)
}

// Indexes are the open, fresh indexes of some places. Close them.
type Indexes struct {
	places []SearchPlace
	dbs    []*search.DB
	opts   IndexOptions
}

// OpenIndexes opens the index of each place and brings it up to date:
// a mirror first converts what changed of its harness's sessions, then
// each index reads what changed of its data dir. It returns each index's
// refresh statistics. On an error the indexes opened so far are returned
// too, for the caller to close.
func (c *Catalog) OpenIndexes(ctx context.Context, places []SearchPlace, opts IndexOptions) (*Indexes, []search.RefreshStats, error) {
	ix := &Indexes{opts: opts}
	var stats []search.RefreshStats
	// The indexes a running xdev serve keeps fresh need no stat walk:
	// they are asked for and opened at once (each asks the server and
	// waits for its answer, and opens its own connection), the others
	// then in turn.
	served := make([]*search.DB, len(places))
	servedErr := make([]error, len(places))
	if !opts.Reindex && !opts.NoLive {
		var wg sync.WaitGroup
		for k, p := range places {
			wg.Go(func() {
				path, err := search.DefaultPath(p.Dir)
				if err == nil && live.Fresh(live.MarkerPath(path), liveWait) {
					served[k], servedErr[k] = search.Open(path, p.Dir, &search.OpenOptions{Source: p.indexSource()})
				}
			})
		}
		wg.Wait()
	}
	for k, p := range places {
		path, err := search.DefaultPath(p.Dir)
		if err == nil {
			err = servedErr[k]
		}
		if err != nil {
			for _, db := range served[k:] {
				if db != nil {
					db.Close()
				}
			}
			return ix, stats, err
		}
		if db := served[k]; db != nil {
			ix.places, ix.dbs = append(ix.places, p), append(ix.dbs, db)
			tell(opts.Live, p)
			stats = append(stats, search.RefreshStats{})
			continue
		}
		var stopped error // the mirror's refresh ran out of time
		if p.mirror != nil {
			if stopped = ix.refreshMirror(ctx, p, opts.Reindex); stopped != nil && !ix.outOfTime(ctx) {
				return ix, stats, stopped
			}
		}
		db, err := search.Open(path, p.Dir, &search.OpenOptions{Source: p.indexSource(), Waiting: func(holder int) {
			if opts.Waiting != nil {
				opts.Waiting(path, holder)
			}
		}})
		if err != nil {
			return ix, stats, err
		}
		ix.places, ix.dbs = append(ix.places, p), append(ix.dbs, db)
		if db.Notice != "" {
			tell(opts.Notice, db.Notice)
		}
		// Refreshed even out of time: a refresh reads at least an entry
		// (a mirror converts at least a session), so that refreshes on
		// any deadline get on.
		st, err := ix.refreshIndex(ctx, len(ix.dbs)-1, opts.Reindex, nil)
		if (err != nil || stopped != nil) && ix.outOfTime(ctx) {
			tell(opts.Stale, p)
			err = nil
		}
		if err != nil {
			return ix, stats, err
		}
		stats = append(stats, st)
	}
	return ix, stats, nil
}

// outOfTime reports whether ctx is done and the caller asked for what
// is indexed then rather than an error (IndexOptions.Stale).
func (ix *Indexes) outOfTime(ctx context.Context) bool {
	return ix.opts.Stale != nil && ctx.Err() != nil
}

// liveWait is how long OpenIndexes and Usage wait for a running server's
// answer that an index or a usage cache it keeps is fresh (internal/live)
// before they refresh it themselves. The server answers at once when
// nothing changed, and after indexing (or rebuilding the ledger of) what
// did otherwise.
const liveWait = 3 * time.Second

// Len is how many places the indexes are of; Place(k) is the k-th.
func (ix *Indexes) Len() int { return len(ix.places) }

// Place is the place of the k-th index.
func (ix *Indexes) Place(k int) SearchPlace { return ix.places[k] }

// IndexPath is the file of the k-th index (its live marker is beside it).
func (ix *Indexes) IndexPath(k int) string { return ix.dbs[k].Path() }

// Refresh brings the k-th index up to date again (its mirror first), as
// OpenIndexes did: for a process that keeps indexes open and fresh
// (xdev serve). Queries must not run on the indexes meanwhile.
func (ix *Indexes) Refresh(ctx context.Context, k int) (search.RefreshStats, error) {
	return ix.RefreshPaths(ctx, k, nil)
}

// RefreshPaths is Refresh told which files changed (a watcher's paths;
// nil for unknown): of a data dir, only they are read, with no walk of
// it (search.RefreshOptions.Paths); of a mirror's place, so too where
// its mirror can be refreshed from them alone (foreign.Mirror.
// RefreshPaths: sessions read in place), else whole.
func (ix *Indexes) RefreshPaths(ctx context.Context, k int, paths []string) (search.RefreshStats, error) {
	var stopped error // the mirror's refresh ran out of time
	if p := ix.places[k]; p.mirror != nil {
		done := false
		if paths != nil {
			st, ok, err := p.mirror.RefreshPaths(ctx, paths)
			if err != nil {
				return search.RefreshStats{}, fmt.Errorf("reading %s sessions: %w", p.Harness, err)
			}
			for _, err := range st.Errors {
				tell(ix.opts.Problem, err)
			}
			done = ok
		}
		if !done {
			if stopped = ix.refreshMirror(ctx, p, false); stopped != nil && !ix.outOfTime(ctx) {
				return search.RefreshStats{}, stopped
			}
			paths = nil
		}
	}
	st, err := ix.refreshIndex(ctx, k, false, paths)
	if err == nil {
		err = stopped
	}
	return st, err
}

// Freshen brings every index up to date again as OpenIndexes did, for a
// process that keeps indexes open between queries (xdev mcp): one a
// running xdev serve keeps fresh is asked (internal/live) and not
// walked, the others are refreshed, or as far as ctx lets them when
// IndexOptions.Stale is set. Queries must not run meanwhile.
func (ix *Indexes) Freshen(ctx context.Context) error {
	for k, db := range ix.dbs {
		if !ix.opts.NoLive && live.Fresh(live.MarkerPath(db.Path()), liveWait) {
			tell(ix.opts.Live, ix.places[k])
			continue
		}
		if _, err := ix.Refresh(ctx, k); err != nil {
			if ix.outOfTime(ctx) {
				tell(ix.opts.Stale, ix.places[k])
				continue
			}
			return err
		}
	}
	return nil
}

// Places are the places the indexes are of, in order.
func (ix *Indexes) Places() []SearchPlace { return slices.Clone(ix.places) }

// Reopen closes every index and opens it again, as it is: the memory a
// search or a refresh grew SQLite's heap to goes back to the system with
// the connection (it never shrinks while the connection is open). For a
// process that keeps indexes open between bursts of work (xdev serve).
func (ix *Indexes) Reopen() error {
	for k, db := range ix.dbs {
		path, dir := db.Path(), db.DataDir()
		db.Close()
		fresh, err := search.Open(path, dir, &search.OpenOptions{Source: ix.places[k].indexSource()})
		if err != nil {
			// It stays closed: its searches and refreshes say so.
			return fmt.Errorf("reopening the index of %s: %w", ix.places[k].Root, err)
		}
		ix.dbs[k] = fresh
	}
	return nil
}

// refreshMirror converts what changed of p's harness's sessions.
func (ix *Indexes) refreshMirror(ctx context.Context, p SearchPlace, reindex bool) error {
	refresh := p.mirror.Refresh
	if reindex {
		refresh = p.mirror.Rebuild
	}
	st, err := refresh(ctx)
	if err != nil {
		return fmt.Errorf("reading %s sessions: %w", p.Harness, err)
	}
	for _, err := range st.Errors {
		tell(ix.opts.Problem, err)
	}
	return nil
}

// refreshIndex reads what changed of the k-th index's data dir.
func (ix *Indexes) refreshIndex(ctx context.Context, k int, reindex bool, paths []string) (search.RefreshStats, error) {
	p, db, opts := ix.places[k], ix.dbs[k], ix.opts
	notice := db.Notice
	var update func(search.Progress)
	done := func() {}
	if opts.Progress != nil {
		update, done = opts.Progress(p)
	}
	st, err := db.Refresh(ctx, search.RefreshOptions{Harness: string(p.Harness), Reindex: reindex, Progress: update, Paths: paths})
	done()
	if db.Notice != notice {
		tell(opts.Notice, db.Notice)
	}
	if err != nil {
		return st, fmt.Errorf("indexing %s: %w", p.Dir, err)
	}
	for _, err := range st.Errors {
		tell(opts.Problem, err)
	}
	return st, nil
}

func tell[T any](f func(T), v T) {
	if f != nil {
		f(v)
	}
}

// Close closes the indexes.
func (ix *Indexes) Close() {
	for _, db := range ix.dbs {
		db.Close()
	}
}

// Search runs q on every index and returns its hits as what a person has
// (a mirror's hit names the source transcript, its line and its
// modification time), merged into one list by search.Merge: the ranks of
// separate indexes are not comparable, their positions are.
func (ix *Indexes) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	return ix.SearchIn(ctx, q, nil)
}

// SearchIn is Search over the places keep keeps (every place when keep
// is nil): a search of some harnesses only.
//
// Each index's hits are merged before they are finished: the snippets
// (each read from its entry's session file) and the names of the hits
// kept only, a third of them when three indexes have hits.
func (ix *Indexes) SearchIn(ctx context.Context, q search.Query, keep func(SearchPlace) bool) ([]search.Hit, error) {
	var lists [][]search.Hit
	var from []int // the index of each list
	raw := q
	raw.NoSnippets = true
	per := make([][]search.Hit, len(ix.dbs))
	if err := ix.each(keep, func(i int, db *search.DB) (err error) {
		per[i], err = db.Search(ctx, raw)
		return err
	}); err != nil {
		return nil, err
	}
	for i := range ix.dbs {
		if keep == nil || keep(ix.places[i]) {
			lists, from = append(lists, per[i]), append(from, i)
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	order := search.MergeOrder(lists, q.Newest, limit)
	// The hits kept, finished index by index, in the merge's order.
	kept := make([][]*search.Hit, len(lists))
	for _, at := range order {
		kept[at.List] = append(kept[at.List], &lists[at.List][at.Pos])
	}
	for w, hits := range kept {
		if len(hits) == 0 {
			continue
		}
		p := ix.places[from[w]]
		if !q.NoSnippets {
			if err := ix.dbs[from[w]].Snippets(q, hits); err != nil {
				return nil, err
			}
		}
		p.nameUntitled(hits)
		for _, h := range hits {
			p.toSource(h)
		}
	}
	out := make([]search.Hit, len(order))
	for i, at := range order {
		out[i] = lists[at.List][at.Pos]
	}
	return out, nil
}

// Sessions returns every session with a hit for q, of every index, as
// what a person has, newest first.
func (ix *Indexes) Sessions(ctx context.Context, q search.Query) ([]search.Session, error) {
	per := make([][]search.Session, len(ix.dbs))
	if err := ix.each(nil, func(i int, db *search.DB) (err error) {
		per[i], err = db.Sessions(ctx, q)
		for k := range per[i] {
			ix.places[i].sessionToSource(&per[i][k])
		}
		return err
	}); err != nil {
		return nil, err
	}
	n := 0
	for _, ss := range per {
		n += len(ss)
	}
	all := make([]search.Session, 0, n)
	for _, ss := range per {
		all = append(all, ss...)
	}
	slices.SortStableFunc(all, func(a, b search.Session) int { return b.Modified.Compare(a.Modified) })
	return all, nil
}

// each calls fn for each index keep keeps (every one when keep is nil),
// the indexes at once: each is its own connection, and a query of a
// common word spends tens of ms in each. The error is the first index's
// that failed, in their order.
func (ix *Indexes) each(keep func(SearchPlace) bool, fn func(i int, db *search.DB) error) error {
	errs := make([]error, len(ix.dbs))
	var wg sync.WaitGroup
	for i, db := range ix.dbs {
		if keep != nil && !keep(ix.places[i]) {
			continue
		}
		wg.Go(func() { errs[i] = fn(i, db) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// source is the session file a path in p's index stands for: a mirror
// file's source transcript and its modification time (what a listing
// shows), with ok; else ok is false and the path stands for itself.
func (p SearchPlace) source(path string) (src string, modified time.Time, ok bool) {
	if p.mirror == nil || p.inPlace {
		return path, time.Time{}, false
	}
	if src, modified = p.mirror.SourceOf(path); src == "" {
		return path, time.Time{}, false
	}
	return src, modified, true
}

// nameUntitled gives the hits (those a merge kept) what the place's
// listing calls their sessions:
// a mirror's, the harness listing's title (which the conversion's need
// not be) or else its first message; a data dir's untitled sessions,
// their first message. Each session is read once.
func (p SearchPlace) nameUntitled(hits []*search.Hit) {
	seen := map[string][2]string{}
	for _, h := range hits {
		if p.mirror == nil && h.Title != "" {
			continue
		}
		l, ok := seen[h.Path]
		if !ok {
			if p.mirror != nil {
				src, _, ok := p.source(h.Path)
				if !ok && !p.inPlace {
					src = ""
				}
				l[0], l[1] = p.mirror.Listed(src)
			} else {
				l[0], l[1] = h.Title, session.Stat(h.Path).FirstMessage
			}
			l[0], l[1] = secrets.Mask(l[0]), secrets.Mask(l[1]) // as every listing is
			seen[h.Path] = l
		}
		if l[0] != "" || l[1] != "" {
			h.Title = l[0]
		}
		if h.Title == "" {
			h.FirstMessage = l[1]
		}
	}
}

// toSource makes a hit in a mirror file name what the person has: the
// source transcript, the line of it the entry came from (read from the
// first bytes of the mirror's line, foreign.SourceLine), and the
// source's modification time.
func (p SearchPlace) toSource(h *search.Hit) {
	for j, a := range h.AlsoIn {
		h.AlsoIn[j], _, _ = p.source(a)
	}
	src, modified, ok := p.source(h.Path)
	if !ok {
		return
	}
	if f, err := os.Open(h.Path); err == nil {
		head := make([]byte, 32)
		n, _ := f.ReadAt(head, h.Offset)
		f.Close()
		if line, ok := foreign.SourceLineOf(head[:n]); ok {
			h.Line = line
			if strings.HasSuffix(src, ".json") {
				h.Line = matchLine(src, line, matched(h))
			}
		}
	}
	h.Path, h.Modified = src, modified
}

// matched are the tokens a hit's snippet highlights: what the query
// matched in the entry.
func matched(h *search.Hit) map[string]bool {
	out := map[string]bool{}
	for _, r := range h.Highlights {
		if r[0] >= 0 && r[1] <= len(h.Snippet) && r[0] < r[1] {
			for _, tok := range searchtext.Tokenize(h.Snippet[r[0]:r[1]]) {
				out[tok] = true
			}
		}
	}
	return out
}

// matchLine refines the line of a hit in a document that spreads an entry
// over many lines (a Gemini CLI chat, pretty-printed JSON): from the
// entry's first line, the first line whose string values hold one of the
// tokens matched, within maxMatchLines; the entry's first line when none
// does. A JSONL transcript needs none: its entry is one line.
func matchLine(path string, from int, tokens map[string]bool) int {
	if len(tokens) == 0 {
		return from
	}
	f, err := os.Open(path)
	if err != nil {
		return from
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; n < from+maxMatchLines; n++ {
		line, err := br.ReadSlice('\n')
		if n >= from && lineHolds(line, tokens) {
			return n
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer: skipped
				_, err = br.ReadSlice('\n')
			}
		}
		if err != nil {
			break
		}
	}
	return from
}

// maxMatchLines bounds how far matchLine looks past an entry's first line.
const maxMatchLines = 20000

// lineHolds reports whether a line of pretty-printed JSON holds, in a
// string value (not a member's name), one of tokens.
func lineHolds(line []byte, tokens map[string]bool) bool {
	s := string(line)
	if k := strings.Index(s, `": `); k >= 0 && strings.HasPrefix(strings.TrimSpace(s), `"`) {
		s = s[k+3:] // the value of a "name": value line
	}
	for _, lit := range jsonStrings().FindAllString(s, -1) {
		var v string
		if json.Unmarshal([]byte(lit), &v) != nil {
			continue
		}
		for _, tok := range searchtext.Tokenize(v) {
			if tokens[tok] {
				return true
			}
		}
	}
	return false
}

var jsonStrings = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) })

// sessionToSource is toSource for a session with hits.
func (p SearchPlace) sessionToSource(s *search.Session) {
	if src, modified, ok := p.source(s.Path); ok {
		s.Path, s.Modified = src, modified
	}
}

// IndexInfo is one open index, as `xdev index` reports it.
type IndexInfo struct {
	Place SearchPlace
	Path  string // the index file
	Size  int64  // its size in bytes
}

// Info describes each index, in the order of the places.
func (ix *Indexes) Info() ([]IndexInfo, error) {
	out := make([]IndexInfo, len(ix.dbs))
	for i, db := range ix.dbs {
		size, err := db.Size()
		if err != nil {
			return nil, err
		}
		out[i] = IndexInfo{Place: ix.places[i], Path: db.Path(), Size: size}
	}
	return out, nil
}

// The search index's vocabulary, as the catalog's callers use it: a
// query, its hits, the sessions with hits, a refresh's statistics and
// progress (internal/search says what each holds).
type (
	Query           = search.Query
	Hit             = search.Hit
	SessionHits     = search.Session
	RefreshStats    = search.RefreshStats
	RefreshProgress = search.Progress
)

// ErrQuery wraps every error of a query that cannot run (the user's, exit
// 2), whichever index or database it was put to.
var ErrQuery = search.ErrQuery

// DefaultLimit is how many hits a search returns unless told.
const DefaultLimit = search.DefaultLimit

// The roles a query can be limited to.
const (
	RoleUser      = search.RoleUser
	RoleAssistant = search.RoleAssistant
	RoleTool      = search.RoleTool
	RoleSummary   = search.RoleSummary
	RoleCustom    = search.RoleCustom
	RoleTitle     = search.RoleTitle
)

// Roles are the roles a query can be limited to.
var Roles = []string{RoleUser, RoleAssistant, RoleTool, RoleSummary, RoleCustom, RoleTitle}
