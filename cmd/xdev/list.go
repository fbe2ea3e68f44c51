package main

import (
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
	name: "list", args: "[--all] [--subagents] [--cwd DIR] [--from HARNESS | --db URL] [--limit N] [--json]",
	summary: "List sessions, newest first (this directory's, or --all)",
	example: `  xdev list                      sessions of the current directory
  xdev list --db $XDEV_DATABASE_URL --all   the sessions a team synced (see xdev sync)
  xdev list --all --limit 20     the 20 most recent of every project
  xdev list --omp --all          omp's sessions
  xdev list --from claude --all  Claude Code's (also codex, pi, copilot, gemini, opencode, omp, xdev, all)
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
	fs.StringVar(&o.from, "from", "", "whose sessions (default xdev): "+harnessChoices())
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
	from := []string{"xdev"}
	switch {
	case o.db.on() && (o.from != "" || o.store.explicit()):
		return usagef("--db lists the database's sessions; --from, --data-dir and --omp choose local ones")
	case o.db.on():
		from = []string{"db"}
	case o.from == "all":
		if o.store.explicit() {
			return usagef("--from all lists every harness's sessions; --data-dir and --omp choose one")
		}
		from = harnesses
	case o.from != "" && !slices.Contains(harnesses, o.from):
		return usagef("--from is %s, not %q", harnessChoices(), o.from)
	case o.from == "omp" && o.store.dataDir != "":
		return usagef("--from omp and --data-dir both choose the data dir; give one")
	case o.from != "":
		from = []string{o.from}
	case o.store.omp:
		from = []string{"omp"}
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
	var good, bad []catalog.Row
	failed := false
	for _, h := range from {
		var rows []catalog.Row
		var err error
		switch h {
		case "db":
			ctx, cancel := interruptible()
			rows, err = dbListRows(e, ctx, o.db, cwd, o.subagents)
			cancel()
		case "xdev", "omp":
			store := *o.store
			store.omp = h == "omp"
			rows, err = o.listStore(&store, h, cwd, len(from) > 1)
		default:
			rows, err = o.listForeign(e, h, cwd)
		}
		if err != nil && len(from) > 1 && h != "xdev" && h != "db" {
			// One harness that cannot be read (a damaged opencode
			// database) does not hide the others': it is said, and
			// the listing fails at the end.
			fmt.Fprintf(e.ErrOut, "xdev list: %s: %v\n", h, err)
			failed = true
			continue
		}
		if err != nil {
			return err
		}
		// The good rows are kept in place (10,000 of them are not copied
		// again), the few bad ones aside.
		n := 0
		for _, r := range rows {
			if r.Err != nil {
				bad = append(bad, r)
			} else {
				rows[n] = r
				n++
			}
		}
		if good == nil {
			good = rows[:n]
		} else {
			good = append(good, rows[:n]...)
		}
	}
	if len(from) > 1 {
		slices.SortStableFunc(good, func(a, b catalog.Row) int { return b.Modified.Compare(a.Modified) })
	}
	if o.limit > 0 && len(good) > o.limit {
		good = good[:o.limit]
	}
	if o.asJSON {
		return writeJSON(e, append(listRows(good), listRows(bad)...))
	}
	if len(good) == 0 {
		// Said on stderr, on a terminal or not: stdout stays empty for a
		// script, and a person learns where xdev looked.
		fmt.Fprintln(e.ErrOut, o.nothingListed(e, from, cwd))
	}
	if len(good) > 0 || !e.IsTTY {
		// A table with no rows is only its header: on a terminal the
		// hint says it all; piped, no sessions is no lines.
		o.printTable(e, good, len(from) > 1 || from[0] != "xdev" && from[0] != "db")
	}
	if len(bad) > 0 {
		fmt.Fprintf(e.ErrOut, "%s not listed: not sessions or unreadable (xdev list --json, or xdev verify, says why)\n", term.Plural(len(bad), "file"))
	}
	if failed {
		return errProblems
	}
	return nil
}

// nothingListed says that no session was found, where xdev looked, and
// how to look further.
func (o *listOptions) nothingListed(e *env, from []string, cwd string) string {
	where := "for " + term.HomePath(cwd)
	if o.all {
		where = "in any project"
	}
	var looked []string
	if c, err := o.sources.catalog(e, o.store); err == nil {
		for _, h := range from {
			switch dir := ""; catalog.Harness(h) {
			case catalog.Xdev, catalog.Omp:
				store := *o.store
				store.omp = h == "omp"
				if d, err := store.dir(); err == nil {
					dir = session.SessionsDir(d)
				}
				looked = append(looked, fmt.Sprintf("%s (%s)", catalog.Harness(h).Name(), term.HomePath(dir)))
			default:
				if dir = c.Root(catalog.Harness(h)); dir != "" {
					looked = append(looked, fmt.Sprintf("%s (%s)", catalog.Harness(h).Name(), term.HomePath(dir)))
				}
			}
		}
	}
	msg := fmt.Sprintf("No sessions %s in %s.", where, strings.Join(looked, ", "))
	switch {
	case !o.all && len(from) < len(harnesses):
		msg += " --all lists every project's; --from all every harness's."
	case !o.all:
		msg += " --all lists every project's."
	case len(from) < len(harnesses):
		msg += " --from all lists every harness's."
	default:
		msg += " --data-dir and --claude-dir, --codex-dir, … point xdev at directories elsewhere."
	}
	return msg
}

// listStore lists an omp-format data dir's sessions. A missing data dir is
// an error unless other harnesses are listed too (lenient).
func (o *listOptions) listStore(store *storeFlags, harness, cwd string, lenient bool) ([]catalog.Row, error) {
	dir, err := store.existingDir()
	if err != nil {
		if lenient {
			return nil, nil
		}
		return nil, err
	}
	return catalog.ListDataDir(catalog.Harness(harness), dir, catalog.ListOptions{Subagents: o.subagents, Cwd: cwd})
}

// listForeign lists another harness's sessions; one not installed lists
// nothing. Without --all, only those whose cwd is cwd.
func (o *listOptions) listForeign(e *env, harness, cwd string) ([]catalog.Row, error) {
	c, err := o.sources.catalog(e, o.store)
	if err != nil {
		return nil, err
	}
	return c.List(catalog.Harness(harness), catalog.ListOptions{Subagents: o.subagents, Cwd: cwd})
}

// listRows renders catalog rows as `xdev list --json` has them.
func listRows(rows []catalog.Row) []listJSON {
	out := make([]listJSON, 0, len(rows))
	for _, r := range rows {
		j := listJSON{Harness: string(r.Harness), ID: r.ID, Title: r.Title, TitleSource: r.TitleSource, ShortSummary: r.ShortSummary,
			Status: string(r.Status), Cwd: r.Cwd, Path: r.Path, Created: jsonTime(r.Created), Modified: jsonTime(r.Modified),
			Size: r.Size, ParentSession: r.ParentSession, Subagent: r.Subagent, Version: r.Version, FirstMessage: r.FirstMessage}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		out = append(out, j)
	}
	return out
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
