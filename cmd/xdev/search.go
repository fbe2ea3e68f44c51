package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/when"
)

var searchCommand = &command{
	name: "search", namesSessions: true, args: "[flags] QUERY...", freeText: true,
	summary: "Find what was said in any session (full-text, indexed)",
	example: `  xdev search lock timeout                 entries holding both words
  xdev search '"windowed load"' OR backward  a phrase, or a word
  xdev search 'pars*' -test --role user      a prefix, without "test", typed by you
  xdev search -- -l fix                      words after -- are the query's, even a flag's name
  xdev search --here --since 7d flaky        this project, the last week
  xdev search --with-omp --json panic | jq -r '.[].path'`,
	options: func() options { return &searchOptions{} },
}

var indexCommand = &command{
	name: "index", args: "[--reindex] [--with-omp] [--json]",
	summary: "Bring the search index up to date (search does it too)",
	example: `  xdev index               read what changed since the last search
  xdev index --reindex     drop the index and read every session again
  xdev index --omp         omp's sessions`,
	options: func() options { return &indexOptions{} },
}

// indexFlags are the flags search and index share: which data dirs, and
// how to refresh their indexes.
type indexFlags struct {
	store   *storeFlags
	foreign *sourceFlags
	withOmp bool
	from    string
	reindex bool
	// nothing, set by places, is what to say when no place has sessions.
	nothing string
}

func (f *indexFlags) define(fs *flag.FlagSet) {
	f.store = addStoreFlags(fs)
	f.foreign = addSourceFlags(fs)
	fs.BoolVar(&f.withOmp, "with-omp", false, "with --data-dir, search omp's sessions too")
	fs.StringVar(&f.from, "from", "", "whose sessions (default: every harness's here): "+catalog.HarnessChoices())
	fs.BoolVar(&f.reindex, "reindex", false, "drop the index and read every session again")
}

// places returns the places the flags choose to search, and the catalog
// they are in: every harness's here by default (catalog.Scope), --from's,
// or the data dir a flag chose (with omp's beside it for --with-omp).
func (f *indexFlags) places(e *env) (*catalog.Catalog, []catalog.SearchPlace, error) {
	switch {
	case f.withOmp && f.store.omp:
		return nil, nil, usagef("--omp and --with-omp: give one")
	case f.from != "" && (f.withOmp || f.store.explicit() && f.from == "all"):
		return nil, nil, usagef("--from chooses whose sessions; --with-omp, --omp and --data-dir do not go with it")
	case f.from == "omp" && f.store.dataDir != "":
		return nil, nil, usagef("--from omp and --data-dir both choose the data dir; give one")
	}
	c, err := f.foreign.catalog(e, f.store)
	if err != nil {
		return nil, nil, err
	}
	hs, err := c.Scope(f.from)
	if err != nil {
		return nil, nil, usagef("--from is %s, not %q", catalog.HarnessChoices(), f.from)
	}
	if f.withOmp && !slices.Contains(hs, catalog.Omp) {
		hs = append(hs, catalog.Omp)
	}
	places, err := c.PlacesIn(hs)
	if err != nil {
		return nil, nil, err
	}
	if len(places) == 0 && len(hs) == 1 {
		// The one harness asked for is not here: an error, as a file
		// that is not there is.
		return nil, nil, notHere(c, hs[0])
	}
	if len(places) == 0 {
		f.nothing = "No sessions here. " + lookedIn(c, hs) + "\n--data-dir and --claude-dir, --codex-dir, … point xdev at directories elsewhere."
	}
	return c, places, nil
}

// openFresh opens the index of each place the flags choose and
// refreshes it, saying on stderr what a person should know (a wait for
// another process, a rebuilt index, a session not indexed) and, on a
// terminal, how far it is. The caller closes the indexes.
func (f *indexFlags) openFresh(e *env, ctx context.Context) (*catalog.Indexes, []catalog.RefreshStats, error) {
	c, places, err := f.places(e)
	if err != nil {
		return &catalog.Indexes{}, nil, err
	}
	return c.OpenIndexes(ctx, places, catalog.IndexOptions{
		Reindex: f.reindex,
		Waiting: func(path string, holder int) {
			who := "another xdev"
			if holder > 0 {
				who = fmt.Sprintf("another xdev (pid %d)", holder)
			}
			fmt.Fprintf(e.ErrOut, "xdev: waiting for %s to finish with the search index %s…\n", who, term.HomePath(path))
		},
		Notice:  func(n string) { fmt.Fprintln(e.ErrOut, "xdev: "+n) },
		Problem: func(err error) { fmt.Fprintf(e.ErrOut, "xdev: not indexed: %v\n", err) },
		Progress: func(p catalog.SearchPlace) (func(catalog.RefreshProgress), func()) {
			bar := &byteProgress{term.Meter{IO: e.IOStreams, What: "Indexing " + term.HomePath(p.Root)}}
			return bar.update, bar.done
		},
	})
}

// byteProgress is a refresh's progress bar on stderr (a term.Meter of
// the bytes read), shown on a terminal once the refresh has taken a
// moment.
type byteProgress struct{ m term.Meter }

func (p *byteProgress) update(pr catalog.RefreshProgress) {
	frac := 1.0
	if pr.BytesTotal > 0 {
		frac = float64(pr.Bytes) / float64(pr.BytesTotal)
	}
	p.m.Update(frac, fmt.Sprintf("%d/%d files, %s", pr.Files, pr.FilesTotal, term.Size(pr.Bytes)), pr.Files == pr.FilesTotal)
}

func (p *byteProgress) done() { p.m.Done() }

// interruptible is a context ^C cancels: a long first index stops
// between files, keeping what it committed.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// indexOptions are the flags of `xdev index`.
type indexOptions struct {
	indexFlags
	asJSON bool
	args   []string
}

func (o *indexOptions) define(fs *flag.FlagSet) {
	o.indexFlags.define(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *indexOptions) setArgs(args []string) { o.args = args }

// indexJSON is one index in `xdev index --json`.
type indexJSON struct {
	Harness   string `json:"harness"`
	Root      string `json:"root"`    // where the sessions are, as a person knows it
	DataDir   string `json:"dataDir"` // the omp-format dir indexed: Root, or its converted mirror
	Index     string `json:"index"`
	IndexSize int64  `json:"indexSize"`
	Files     int    `json:"files"`
	Unchanged int    `json:"unchanged"`
	Grown     int    `json:"grown"`
	Indexed   int    `json:"indexed"`
	Removed   int    `json:"removed"`
	Entries   int    `json:"entries"`
	BytesRead int64  `json:"bytesRead"`
	Malformed int    `json:"malformed"`
	TextBytes int64  `json:"textBytes"`
	Errors    int    `json:"errors"`
	Millis    int64  `json:"ms"`
}

func (o *indexOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	ctx, cancel := interruptible()
	defer cancel()
	start := e.Now()
	ix, stats, err := o.openFresh(e, ctx)
	defer ix.Close()
	if err != nil {
		return err
	}
	took := e.Now().Sub(start)
	if o.nothing != "" && !o.asJSON {
		fmt.Fprintln(e.ErrOut, o.nothing)
	}
	infos, err := ix.Info()
	if err != nil {
		return err
	}
	out := []indexJSON{}
	for i, in := range infos {
		st := stats[i]
		j := indexJSON{Harness: string(in.Place.Harness), Root: in.Place.Root, DataDir: in.Place.Dir, Index: in.Path, IndexSize: in.Size,
			Files: st.Files, Unchanged: st.Unchanged, Grown: st.Grown, Indexed: st.Indexed, Removed: st.Removed,
			Entries: st.Entries, BytesRead: st.Bytes, Malformed: st.Malformed, TextBytes: st.TextBytes, Errors: len(st.Errors), Millis: took.Milliseconds()}
		out = append(out, j)
	}
	if o.asJSON {
		return writeJSON(e, out)
	}
	for _, j := range out {
		fmt.Fprintf(e.Out, "%s %s: %s (%s unchanged, %d grown, %d read anew, %d removed), %s indexed from %s read in %s\n",
			catalog.Harness(j.Harness).Name(), term.HomePath(j.Root), term.Plural(j.Files, "session file"), strconv.Itoa(j.Unchanged), j.Grown, j.Indexed, j.Removed,
			entries(j.Entries), term.Size(j.BytesRead), took.Round(time.Millisecond))
		fmt.Fprintf(e.Out, "  index %s, %s", term.HomePath(j.Index), term.Size(j.IndexSize))
		if j.Malformed > 0 {
			fmt.Fprintf(e.Out, "; %s skipped as unreadable", term.Plural(j.Malformed, "line"))
		}
		fmt.Fprintln(e.Out)
	}
	return nil
}

// searchOptions are the flags and arguments of `xdev search`.
type searchOptions struct {
	indexFlags
	db           *dbFlags
	thinking     bool
	subagents    bool
	cwd          string
	here         bool
	since, until string
	role         string
	tool         string
	model        string
	sessionArg   string
	limit        int
	newest       bool
	sessionsOnly bool
	asJSON       bool
	args         []string
}

func (o *searchOptions) define(fs *flag.FlagSet) {
	o.indexFlags.define(fs)
	o.db = addDBFlags(fs)
	fs.BoolVar(&o.thinking, "thinking", false, "search the model's thinking too")
	fs.BoolVar(&o.subagents, "subagents", false, "search subagent transcripts too")
	fs.StringVar(&o.cwd, "cwd", "", "only sessions of the project in this directory")
	fs.BoolVar(&o.here, "here", false, "only sessions of the current directory's project")
	fs.StringVar(&o.since, "since", "", "only entries from this time on: 7d, 12h, 2w, 2026-11-01")
	fs.StringVar(&o.until, "until", "", "only entries before this time (same forms)")
	fs.StringVar(&o.role, "role", "", "only hits of this role: user, assistant, tool, summary, custom, title")
	fs.StringVar(&o.tool, "tool", "", "only calls and results of this tool")
	fs.StringVar(&o.model, "model", "", "only assistant messages of a model whose name contains this")
	fs.StringVar(&o.sessionArg, "session", "", "only this SESSION")
	fs.IntVar(&o.limit, "limit", catalog.DefaultLimit, "show at most N hits")
	fs.BoolVar(&o.newest, "newest", false, "newest first, not most relevant first")
	fs.BoolVar(&o.sessionsOnly, "l", false, "print only the sessions with hits, every one (as grep -l)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *searchOptions) setArgs(args []string) { o.args = args }

// query builds the library's query from the flags.
func (o *searchOptions) query(e *env) (catalog.Query, error) {
	now := e.Now()
	q := catalog.Query{Text: strings.Join(o.args, " "), Thinking: o.thinking, Tool: o.tool, Model: o.model,
		Limit: o.limit, Newest: o.newest, Subagents: o.subagents}
	if strings.TrimSpace(q.Text) == "" {
		return q, usagef("want a QUERY: the words to find")
	}
	if o.limit <= 0 {
		return q, usagef("--limit wants a positive number")
	}
	if o.role != "" && !slices.Contains(catalog.Roles, o.role) {
		return q, usagef("--role %q: want %s", o.role, strings.Join(catalog.Roles, ", "))
	}
	q.Role = o.role
	switch {
	case o.here && o.cwd != "":
		return q, usagef("--here and --cwd both choose the project; give one")
	case o.here:
		wd, err := e.Getwd()
		if err != nil {
			return q, err
		}
		q.Cwd = wd
	case o.cwd != "":
		abs, err := filepath.Abs(o.cwd)
		if err != nil {
			return q, err
		}
		q.Cwd = abs
	}
	var err error
	if q.Since, err = parseWhen(o.since, now); err != nil {
		return q, usagef("--since: %v", err)
	}
	if q.Until, err = parseWhen(o.until, now); err != nil {
		return q, usagef("--until: %v", err)
	}
	if o.sessionArg != "" && !o.db.on() {
		p, err := o.sessionPath(e, o.sessionArg)
		if err != nil {
			return q, err
		}
		if q.Path, err = filepath.Abs(p); err != nil {
			return q, err
		}
	}
	return q, nil
}

// sessionPath is the file --session limits the search to: the file of
// its place's index that holds the session named (catalog.IndexedFile),
// which must be one of the harnesses searched.
func (o *searchOptions) sessionPath(e *env, arg string) (string, error) {
	c, ref, err := resolve(e, o.store, o.foreign, arg)
	if err != nil {
		return "", err
	}
	hs, err := c.Scope(o.from)
	if err != nil {
		return "", usagef("--from is %s, not %q", catalog.HarnessChoices(), o.from)
	}
	if o.withOmp {
		hs = append(hs, catalog.Omp)
	}
	if !slices.Contains(hs, ref.Harness) {
		if ref.Harness == catalog.File {
			return "", fmt.Errorf("%s is not a session of any place searched (%s)", arg, scopeNames(hs))
		}
		return "", fmt.Errorf("%s is a %s session, not one of %s, which this search reads (--from %s reads it)", arg, ref.Harness.Name(), scopeNames(hs), ref.Harness)
	}
	return c.IndexedFile(ref)
}

// scopeNames names the harnesses hs for a person: "every harness" for
// all of them.
func scopeNames(hs []catalog.Harness) string {
	if len(hs) >= len(catalog.Every) {
		return "every harness"
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name()
	}
	return strings.Join(names, ", ")
}

// parseWhen reads a --since or --until (package when).
func parseWhen(s string, now time.Time) (time.Time, error) { return when.Parse(s, now) }

// searchHitJSON is one hit in `xdev search --json`.
type searchHitJSON struct {
	SessionID      string   `json:"sessionId"`
	Path           string   `json:"path"`
	Harness        string   `json:"harness"`
	Title          string   `json:"title"`
	FirstMessage   string   `json:"firstMessage,omitempty"`
	Cwd            string   `json:"cwd"`
	EntryID        string   `json:"entryId"`
	Line           int      `json:"line"`
	Role           string   `json:"role"`
	Tool           string   `json:"tool,omitempty"`
	Model          string   `json:"model,omitempty"`
	Timestamp      jsonTime `json:"timestamp"`
	Snippet        string   `json:"snippet"`
	Highlights     [][2]int `json:"highlights"`
	OnActiveBranch bool     `json:"onActiveBranch"`
	InContext      bool     `json:"inContext"`
	AlsoIn         []string `json:"alsoIn"`
	Subagent       bool     `json:"subagent,omitzero"`
}

func (o *searchOptions) run(e *env) error {
	q, err := o.query(e)
	if err != nil {
		return err
	}
	ctx, cancel := interruptible()
	defer cancel()
	if o.db.on() {
		return o.runDB(e, ctx, q)
	}
	ix, _, err := o.openFresh(e, ctx)
	defer ix.Close()
	if err != nil {
		return err
	}
	if o.nothing != "" && !o.asJSON {
		fmt.Fprintln(e.ErrOut, o.nothing)
		return nil
	}
	if o.sessionsOnly {
		q.PathsOnly = !o.asJSON
		return o.printSessions(e, ctx, ix, q)
	}
	hits, err := ix.Search(ctx, q)
	if errors.Is(err, catalog.ErrQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	return o.printHits(e, hits, q)
}

// printHits prints the hits: JSON, tab-separated lines on a pipe, or
// grouped by session for a person.
func (o *searchOptions) printHits(e *env, hits []catalog.Hit, q catalog.Query) error {
	if o.asJSON {
		out := make([]searchHitJSON, 0, len(hits))
		for _, h := range hits {
			j := searchHitJSON{SessionID: h.SessionID, Path: h.Path, Harness: h.Harness, Title: h.Title, FirstMessage: h.FirstMessage, Cwd: h.Cwd,
				EntryID: session.DisplayID(h.EntryID), Line: h.Line, Role: h.Role, Tool: h.Tool, Model: h.Model,
				Timestamp: jsonTime(h.Timestamp), Snippet: h.Snippet, Highlights: h.Highlights,
				OnActiveBranch: h.OnActiveBranch, InContext: h.InContext, AlsoIn: h.AlsoIn, Subagent: h.Subagent}
			if j.Highlights == nil {
				j.Highlights = [][2]int{}
			}
			if j.AlsoIn == nil {
				j.AlsoIn = []string{}
			}
			out = append(out, j)
		}
		return writeJSON(e, out)
	}
	if !e.IsTTY {
		t := &term.Table{IO: e.IOStreams}
		for _, h := range hits {
			ts := ""
			if !h.Timestamp.IsZero() {
				ts = session.FormatTime(h.Timestamp)
			}
			t.Add(h.SessionID, session.DisplayID(h.EntryID), h.Role, ts, h.Path,
				strconv.Itoa(h.Line), hitState(h), h.Snippet)
		}
		t.Print()
		return nil
	}
	if len(hits) == 0 {
		fmt.Fprintf(e.ErrOut, "No matches for %s.\n", strconv.Quote(q.Text))
		return nil
	}
	printHits(e, hits)
	return nil
}

// sessionJSON is one session in `xdev search -l --json`.
type sessionJSON struct {
	SessionID string   `json:"sessionId"`
	Path      string   `json:"path"`
	Harness   string   `json:"harness"`
	Title     string   `json:"title"`
	Cwd       string   `json:"cwd"`
	Modified  jsonTime `json:"modified"`
	Hits      int      `json:"hits"`
	Subagent  bool     `json:"subagent,omitzero"`
}

// printSessions prints every session with a hit, newest first: its path
// (for a script, as grep -l), or with --json what a hit says of its
// session and how many entries matched.
func (o *searchOptions) printSessions(e *env, ctx context.Context, ix *catalog.Indexes, q catalog.Query) error {
	all, err := ix.Sessions(ctx, q)
	if errors.Is(err, catalog.ErrQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if o.asJSON {
		out := make([]sessionJSON, 0, len(all))
		for _, s := range all {
			out = append(out, sessionJSON{SessionID: s.SessionID, Path: s.Path, Harness: s.Harness, Title: s.Title,
				Cwd: s.Cwd, Modified: jsonTime(s.Modified), Hits: s.Hits, Subagent: s.Subagent})
		}
		return writeJSON(e, out)
	}
	if len(all) == 0 && e.IsTTY {
		fmt.Fprintf(e.ErrOut, "No matches for %s.\n", strconv.Quote(q.Text))
	}
	// One write a buffer, not a line: a common word lists every session.
	w := bufio.NewWriterSize(e.Out, 64<<10)
	for _, s := range all {
		w.WriteString(s.Path)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// hitState says whether a hit is still in what the model sees: "context",
// "compacted" (summarized away) or "abandoned" (off the active branch).
func hitState(h catalog.Hit) string {
	switch {
	case !h.OnActiveBranch:
		return "abandoned"
	case !h.InContext:
		return "compacted"
	}
	return "context"
}

// printHits prints hits for a person: grouped by session in the order of
// each session's best hit, the matches in bold.
func printHits(e *env, hits []catalog.Hit) {
	w := e.RawOut // escapes are ours; the text is escaped below
	bold, dim, off := "\033[1m", "\033[2m", "\033[0m"
	if e.NoColor {
		bold, dim, off = "", "", ""
	}
	var order []string
	groups := map[string][]catalog.Hit{}
	for _, h := range hits {
		if _, ok := groups[h.Path]; !ok {
			order = append(order, h.Path)
		}
		groups[h.Path] = append(groups[h.Path], h)
	}
	now := e.Now()
	for i, p := range order {
		g := groups[p]
		h := g[0]
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := orUntitled(h.Title)
		if h.Title == "" && h.FirstMessage != "" {
			title = "“" + term.OneLine(h.FirstMessage) + "”" // as the list names it
		}
		if h.Subagent {
			title = "↳ " + title
		}
		fmt.Fprintf(w, "%s%s%s  %s%s · %s · %s%s\n", bold, term.Escape(term.Truncate(title, 60)), off, dim,
			term.Escape(term.HomePath(h.Cwd)), term.Ago(h.Modified, now), term.Escape(shortSession(h)), off)
		for _, h := range g {
			var note []string
			switch hitState(h) {
			case "abandoned":
				note = append(note, "on an abandoned branch")
			case "compacted":
				note = append(note, "before a compaction: not in the context")
			}
			if n := len(h.AlsoIn); n > 0 {
				note = append(note, "also in "+term.Plural(n, "fork"))
			}
			id := session.DisplayID(h.EntryID)
			if id == "" {
				id = "title"
			}
			role := h.Role
			if h.Tool != "" {
				role += " " + h.Tool
			}
			fmt.Fprintf(w, "  %-8s %s%-10s%s %s", term.Escape(id), dim, term.Escape(term.Truncate(role, 18)), off,
				highlight(h.Snippet, h.Highlights, bold, off))
			if len(note) > 0 {
				fmt.Fprintf(w, " %s(%s)%s", dim, strings.Join(note, "; "), off)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\n%sxdev show SESSION --at ENTRY shows the conversation around a hit.%s\n", dim, off)
}

// shortSession names a hit's session as show accepts it back.
func shortSession(h catalog.Hit) string {
	if len(h.SessionID) >= 8 {
		return h.SessionID[:8]
	}
	return filepath.Base(h.Path)
}

// highlight escapes a snippet for a terminal and marks its matches.
func highlight(s string, marks [][2]int, on, off string) string {
	var b strings.Builder
	last := 0
	for _, m := range marks {
		if m[0] < last || m[1] > len(s) {
			continue
		}
		b.WriteString(term.Escape(s[last:m[0]]))
		b.WriteString(on + term.Escape(s[m[0]:m[1]]) + off)
		last = m[1]
	}
	b.WriteString(term.Escape(s[last:]))
	return b.String()
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
