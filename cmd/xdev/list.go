package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/session"
)

var listCommand = &command{
	name: "list", namesSessions: true, args: "[--all] [--subagents] [--cwd DIR] [--from HARNESS | --db URL] [--limit N] [--json]",
	summary: "List every harness's sessions, newest first (this directory's, or --all)",
	example: `  xdev list                      sessions of the current directory, of every harness
  xdev list --db $XDEV_DATABASE_URL --all   the sessions a team synced (see xdev sync)
  xdev list --all --limit 20     the 20 most recent of every project
  xdev list --omp --all          omp's sessions
  xdev list --from claude --all  Claude Code's only (also codex, pi, copilot, gemini, opencode, omp, xdev)
  xdev list --json | jq -r '.[0].path'`,
	options: func() options { return &listOptions{} },
}

// listJSON is one session in `xdev list --json`. title is what omp's
// picker shows: the stored title (titleSource says where it came from),
// else the last compaction's shortSummary (also in shortSummary).
// harness says whose session it is: xdev, omp, claude, codex or pi.
type listJSON struct {
	Harness       string   `json:"harness"`
	ID            string   `json:"id"`
	Title         string   `json:"title"`
	TitleSource   string   `json:"titleSource"`
	ShortSummary  string   `json:"shortSummary,omitempty"`
	Status        string   `json:"status,omitempty"`
	Cwd           string   `json:"cwd"`
	Path          string   `json:"path"`
	Created       jsonTime `json:"created"`
	Modified      jsonTime `json:"modified"`
	Size          int64    `json:"size"`
	ParentSession string   `json:"parentSession,omitempty"`
	FirstMessage  string   `json:"firstMessage,omitempty"`
	Subagent      bool     `json:"subagent,omitzero"`
	Version       int      `json:"version,omitzero"`
	Error         string   `json:"error,omitempty"`
}

// listOptions are the flags and arguments of `xdev list`.
type listOptions struct {
	store     *storeFlags
	db        *dbFlags
	sources   *sourceFlags
	all       bool
	subagents bool
	cwd       string
	from      string
	limit     int
	asJSON    bool
	args      []string
}

func (o *listOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	o.db = addDBFlags(fs)
	fs.BoolVar(&o.all, "all", false, "every project's sessions, not only this directory's")
	fs.BoolVar(&o.subagents, "subagents", false, "include subagent transcripts")
	fs.StringVar(&o.cwd, "cwd", "", "list this directory's sessions (default: the current one)")
	fs.StringVar(&o.from, "from", "", "whose sessions (default: every harness's here): "+catalog.HarnessChoices())
	fs.Func("limit", "show at most N sessions", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("--limit wants a positive number")
		}
		o.limit = n
		return nil
	})
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *listOptions) setArgs(args []string) { o.args = args }

func (o *listOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	switch {
	case o.db.on() && (o.from != "" || o.store.explicit()):
		return usagef("--db lists the database's sessions; --from, --data-dir and --omp choose local ones")
	case o.from == "all" && o.store.explicit():
		return usagef("--from all lists every harness's sessions; --data-dir and --omp choose one")
	case o.from == "omp" && o.store.dataDir != "":
		return usagef("--from omp and --data-dir both choose the data dir; give one")
	}
	cwd := ""
	if !o.all {
		var err error
		if cwd = o.cwd; cwd == "" {
			if cwd, err = e.Getwd(); err != nil {
				return err
			}
		}
	}
	ctx, cancel := interruptible()
	defer cancel()
	places, nothing, err := o.places(e, ctx, cwd)
	if err != nil {
		return err
	}
	rows, failed := catalog.ListPlaces(ctx, places, catalog.ListOptions{Subagents: o.subagents, Cwd: cwd})
	for _, p := range places {
		if err := failed[p.Harness()]; err != nil && len(places) == 1 {
			return err
		} else if err != nil {
			// One harness that cannot be read (a damaged opencode
			// database) does not hide the others': it is said, and the
			// listing fails at the end.
			fmt.Fprintf(e.ErrOut, "xdev list: %s: %v\n", p.Harness(), err)
		}
	}
	good, bad := splitBad(rows)
	// Whose session each is, where the places here are more than one, or
	// the one is another harness's: a column that does not come and go
	// with the rows a listing happens to show. (A database's rows are
	// xdev's data dirs', synced.)
	var here []catalog.Place
	for _, p := range places {
		if _, ok := p.Where(); ok {
			here = append(here, p)
		}
	}
	withHarness := len(here) > 1 || len(here) == 1 && here[0].Harness() != catalog.Xdev && here[0].Harness() != catalog.DB
	if err := o.print(e, good, bad, withHarness, nothing); err != nil {
		return err
	}
	if len(failed) > 0 {
		return errProblems
	}
	return nil
}

// places are the places the flags choose to list: the database --db
// names, --from's harness, the data dir --data-dir or --omp chose, or
// every harness's; and what to say when they hold no session.
func (o *listOptions) places(e *env, ctx context.Context, cwd string) ([]catalog.Place, func() string, error) {
	if o.db.on() {
		db, err := o.db.open(e, ctx)
		if err != nil {
			return nil, nil, err
		}
		context.AfterFunc(ctx, db.Close)
		return []catalog.Place{db}, func() string { return "No sessions " + o.where(cwd) + " in the database." }, nil
	}
	c, err := o.sources.catalog(e, o.store)
	if err != nil {
		return nil, nil, err
	}
	hs, err := c.Scope(o.from)
	if err != nil {
		return nil, nil, usagef("--from is %s, not %q", catalog.HarnessChoices(), o.from)
	}
	if len(hs) == 1 {
		if _, here := c.Where(hs[0]); !here && o.from != "" {
			return nil, nil, notHere(c, hs[0])
		}
	}
	return c.Places(hs), func() string { return o.nothingListed(c, hs, cwd) }, nil
}

// splitBad keeps the rows that are sessions in place (10,000 of them are
// not copied again) and sets the few unreadable ones aside.
func splitBad(rows []catalog.Row) (good, bad []catalog.Row) {
	n := 0
	for _, r := range rows {
		if r.Err != nil {
			bad = append(bad, r)
		} else {
			rows[n] = r
			n++
		}
	}
	return rows[:n], bad
}

// print prints a listing: JSON, or a table and what a person should know
// (nothing listed says where xdev looked; files that are not sessions
// are counted).
func (o *listOptions) print(e *env, good, bad []catalog.Row, withHarness bool, nothing func() string) error {
	if o.limit > 0 && len(good) > o.limit {
		good = good[:o.limit]
	}
	if o.asJSON {
		rows := append(good, bad...)
		return writeJSONArray(e, len(rows), func(i int) listJSON { return listRow(rows[i]) })
	}
	if len(good) == 0 {
		// Said on stderr, on a terminal or not: stdout stays empty for a
		// script, and a person learns where xdev looked.
		fmt.Fprintln(e.ErrOut, nothing())
	}
	if len(good) > 0 || !e.IsTTY {
		// A table with no rows is only its header: on a terminal the
		// hint says it all; piped, no sessions is no lines.
		o.printTable(e, good, withHarness)
	}
	if len(bad) > 0 {
		fmt.Fprintf(e.ErrOut, "%s not listed: not sessions or unreadable (xdev list --json, or xdev verify, says why)\n", term.Plural(len(bad), "file"))
	}
	return nil
}

// where says which sessions a listing looked for: cwd's project's, or
// every project's.
func (o *listOptions) where(cwd string) string {
	if o.all {
		return "in any project"
	}
	return "for " + term.HomePath(cwd)
}

// nothingListed says that no session was found, where xdev looked, and
// how to look further.
func (o *listOptions) nothingListed(c *catalog.Catalog, hs []catalog.Harness, cwd string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "No sessions %s. %s\n", o.where(cwd), lookedIn(c, hs))
	switch {
	case !o.all && len(hs) < len(catalog.Every):
		b.WriteString("--all lists every project's; without --from, --data-dir and --omp, every harness's.")
	case !o.all:
		b.WriteString("--all lists every project's.")
	case len(hs) < len(catalog.Every):
		b.WriteString("Without --from, --data-dir and --omp, xdev lists every harness's.")
	default:
		b.WriteString("--data-dir and --claude-dir, --codex-dir, … point xdev at directories elsewhere.")
	}
	return b.String()
}

// listRows renders catalog rows as `xdev list --json` has them.
// listRow is one row of `xdev list --json`.
func listRow(r catalog.Row) listJSON {
	j := listJSON{Harness: string(r.Harness), ID: r.ID, Title: r.Title, TitleSource: r.TitleSource, ShortSummary: r.ShortSummary,
		Status: string(r.Status), Cwd: r.Cwd, Path: r.Path, Created: jsonTime(r.Created), Modified: jsonTime(r.Modified),
		Size: r.Size, ParentSession: r.ParentSession, Subagent: r.Subagent, Version: r.Version, FirstMessage: r.FirstMessage}
	if r.Err != nil {
		j.Error = r.Err.Error()
	}
	return j
}

func (o *listOptions) printTable(e *env, rows []catalog.Row, withHarness bool) {
	t := &term.Table{IO: e.IOStreams, Header: []string{"ID", "TITLE", "STATUS", "UPDATED", "SIZE"}, Flex: []bool{false, true, false, false, false}}
	if withHarness {
		t.Header = append([]string{"FROM"}, t.Header...)
		t.Flex = append([]bool{false}, t.Flex...)
	}
	if o.all {
		t.Header = append(t.Header, "DIRECTORY")
		t.Flex = append(t.Flex, true)
	}
	var short []string // only a terminal shows short ids
	if e.IsTTY {
		ids := make([]string, len(rows))
		for k, r := range rows {
			ids[k] = r.ID
		}
		short = shortIDs(ids)
	}
	now := e.Now()
	for k, r := range rows {
		title := r.Title
		if title == "" && r.FirstMessage != "" && e.IsTTY {
			title = "“" + term.OneLine(r.FirstMessage) + "”"
		}
		if r.Subagent {
			title = "↳ " + title
		}
		var row []string
		if withHarness {
			row = append(row, string(r.Harness))
		}
		if e.IsTTY {
			row = append(row, short[k], term.OneLine(orDash(title)), string(r.Status), term.Ago(r.Modified, now), term.Size(r.Size))
			if o.all {
				row = append(row, term.HomePath(r.Cwd))
			}
		} else {
			row = append(row, r.ID, title, string(r.Status), session.FormatTime(r.Modified), strconv.FormatInt(r.Size, 10), r.Cwd, r.Path)
		}
		t.Add(row...)
	}
	t.Print()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortIDs returns the shortest prefix of each id, 8 characters at least,
// that no other id shares (ASCII case folded, as a SESSION prefix is
// matched): what `xdev show` accepts back. In sorted order the ids that
// share most of an id's prefix are its neighbours, so the prefix is one
// longer than the longer of its common prefixes with them: O(n log n),
// where comparing every id with every other was quadratic (and UUIDv7 ids
// share their leading time digits, so the prefixes are long).
func shortIDs(ids []string) []string {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareFolded(ids[a], ids[b]) })
	out := make([]string, len(ids))
	for k, i := range order {
		id := ids[i]
		n := 0
		if k > 0 {
			n = commonFolded(id, ids[order[k-1]])
		}
		if k+1 < len(order) {
			n = max(n, commonFolded(id, ids[order[k+1]]))
		}
		out[i] = id[:min(max(n+1, 8), len(id))]
	}
	return out
}

// commonFolded is the length of the longest common prefix of a and b,
// ASCII case folded.
func commonFolded(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && lowerASCII(a[n]) == lowerASCII(b[n]) {
		n++
	}
	return n
}

// compareFolded orders strings byte by byte, ASCII case folded.
func compareFolded(a, b string) int {
	n := commonFolded(a, b)
	switch {
	case n < len(a) && n < len(b):
		return int(lowerASCII(a[n])) - int(lowerASCII(b[n]))
	default:
		return len(a) - len(b)
	}
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
