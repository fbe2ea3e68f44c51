package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/xdev/xdev/internal/session"
)

var listCommand = &command{
	name: "list", args: "[--all] [--subagents] [--cwd DIR] [--limit N] [--json]",
	summary: "List sessions, newest first (this directory's, or --all)",
	example: `  xdev list                      sessions of the current directory
  xdev list --all --limit 20     the 20 most recent of every project
  xdev list --omp --all          omp's sessions
  xdev list --json | jq -r '.[0].path'`,
	options: func() options { return &listOptions{} },
}

// listJSON is one session in `xdev list --json`. title is what omp's
// picker shows: the stored title (titleSource says where it came from),
// else the last compaction's shortSummary (also in shortSummary).
type listJSON struct {
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
	all       bool
	subagents bool
	cwd       string
	limit     int
	asJSON    bool
	args      []string
}

func (o *listOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	fs.BoolVar(&o.all, "all", false, "every project's sessions, not only this directory's")
	fs.BoolVar(&o.subagents, "subagents", false, "include subagent transcripts")
	fs.StringVar(&o.cwd, "cwd", "", "list this directory's sessions (default: the current one)")
	fs.IntVar(&o.limit, "limit", 0, "show at most N sessions")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *listOptions) setArgs(args []string) { o.args = args }

func (o *listOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	dir, err := o.store.existingDir()
	if err != nil {
		return err
	}
	opts := &session.ListOptions{Subagents: o.subagents, Status: true}
	if !o.all {
		if opts.Cwd = o.cwd; opts.Cwd == "" {
			if opts.Cwd, err = os.Getwd(); err != nil {
				return err
			}
		}
	}
	infos, err := session.List(dir, opts)
	if err != nil {
		return err
	}
	var good, bad []session.SessionInfo
	for _, i := range infos {
		if i.Err != nil {
			bad = append(bad, i)
		} else {
			good = append(good, i)
		}
	}
	if o.limit > 0 && len(good) > o.limit {
		good = good[:o.limit]
	}
	if o.asJSON {
		out := make([]listJSON, 0, len(infos))
		for _, i := range append(good, bad...) {
			j := listJSON{ID: i.ID, Title: i.ListTitle(), ShortSummary: i.ShortSummary, Status: string(i.Status),
				Cwd: i.Cwd, Path: i.Path, Created: jsonTime(i.Created), Modified: jsonTime(i.Modified), Size: i.Size,
				ParentSession: i.ParentSession, Subagent: i.Subagent, Version: i.Version, FirstMessage: i.FirstMessage}
			if j.Title == i.Title {
				j.TitleSource = i.TitleSource.String()
			}
			if i.Err != nil {
				j.Error = i.Err.Error()
			}
			out = append(out, j)
		}
		return writeJSON(e, out)
	}
	if len(good) == 0 && e.tty {
		where := "for " + opts.Cwd
		if o.all {
			where = "in " + session.SessionsDir(dir)
		}
		fmt.Fprintf(e.stderr, "No sessions %s. Try --all, or --omp for omp's.\n", where)
	}
	t := &table{e: e, header: []string{"ID", "TITLE", "STATUS", "UPDATED", "SIZE"}, flex: []bool{false, true, false, false, false}}
	if o.all {
		t.header = append(t.header, "DIRECTORY")
		t.flex = append(t.flex, true)
	}
	ids := make([]string, len(good))
	for k, i := range good {
		ids[k] = i.ID
	}
	short := shortIDs(ids)
	now := time.Now()
	for k, i := range good {
		title := i.ListTitle()
		if title == "" && i.FirstMessage != "" && e.tty {
			title = "“" + oneLine(i.FirstMessage) + "”"
		}
		if i.Subagent {
			title = "↳ " + title
		}
		if e.tty {
			row := []string{short[k], oneLine(orDash(title)), string(i.Status), ago(i.Modified, now), size(i.Size)}
			if o.all {
				row = append(row, homePath(i.Cwd))
			}
			t.add(row...)
		} else {
			t.add(i.ID, title, string(i.Status), session.FormatTime(i.Modified), fmt.Sprint(i.Size), i.Cwd, i.Path)
		}
	}
	t.print()
	if len(bad) > 0 {
		fmt.Fprintf(e.stderr, "%s not listed: not sessions or unreadable (xdev list --json, or xdev verify, says why)\n", plural(len(bad), "file"))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortIDs returns the shortest prefix of each id, 8 characters at least,
// that no other id shares: what `xdev show` accepts back.
func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		n := min(8, len(id))
		for ; n < len(id); n++ {
			unique := true
			for j, other := range ids {
				if j != i && len(other) >= n && other[:n] == id[:n] {
					unique = false
					break
				}
			}
			if unique {
				break
			}
		}
		out[i] = id[:n]
	}
	return out
}
