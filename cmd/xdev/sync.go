package main

import (
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
)

var syncCommand = &command{
	name: "sync", args: "[--db URL] [--pull [SESSION...]] [--raw] [--omp-table [--omp-root DIR]] [--json]",
	summary: "Push the data dir's sessions to PostgreSQL, or pull them from it",
	example: `  export XDEV_DATABASE_URL=postgres://me@db.example.com/team
  xdev sync                      push what changed since the last sync, secrets masked
  xdev sync --raw                push the files' bytes as they are (your own backup)
  xdev sync --omp                push omp's data dir too
  xdev sync --pull               write every stored session into the data dir
  xdev sync --pull 01a11069      one session
  xdev sync --omp-table --omp-root ~/.omp/agent/sessions   into omp's own SQL table`,
	options: func() options { return &syncOptions{} },
}

// syncOptions are the flags and arguments of `xdev sync`.
type syncOptions struct {
	store   *storeFlags
	db      *dbFlags
	pull    bool
	raw     bool
	origin  string
	ompRoot string
	asJSON  bool
	args    []string
}

func (o *syncOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.db = addDBFlags(fs)
	fs.BoolVar(&o.pull, "pull", false, "write sessions from the database into the data dir (all, or each SESSION)")
	fs.BoolVar(&o.raw, "raw", false, "push the files' bytes as they are, secrets unmasked (for a store only you read)")
	fs.StringVar(&o.origin, "origin", "", "name this machine's pushes (default: host name and data dir)")
	fs.StringVar(&o.ompRoot, "omp-root", "", "with --omp-table: key the rows under this directory instead of the files' absolute paths")
	fs.BoolVar(&o.asJSON, "json", false, "print what was done as JSON")
}

func (o *syncOptions) setArgs(args []string) { o.args = args }

// syncJSON is `xdev sync --json`.
type syncJSON struct {
	Database string             `json:"database"`
	DataDirs []string           `json:"dataDirs"`
	Push     *catalog.PushStats `json:"push,omitempty"`
	Pull     *catalog.PullStats `json:"pull,omitempty"`
	Failed   []failedJSON       `json:"failed"`
	Error    string             `json:"error,omitempty"` // why the sync stopped, if it did
}

type failedJSON struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func (o *syncOptions) run(e *env) error {
	if len(o.args) > 0 && !o.pull {
		return usagef("SESSION names what --pull writes; a push sends every changed session")
	}
	if o.raw && o.pull {
		return usagef("--raw says how a push stores sessions; a pull writes what was stored")
	}
	if o.ompRoot != "" && !o.db.ompTable {
		return usagef("--omp-root keys rows of omp's table; it goes with --omp-table")
	}
	if o.db.ompTable && o.pull && len(o.args) > 0 {
		return usagef("with --omp-table, --pull writes every row under the root; name no SESSION")
	}
	dirs, err := o.dirs()
	if err != nil {
		return err
	}
	ctx, cancel := interruptible()
	defer cancel()
	out := syncJSON{DataDirs: dirs, Failed: []failedJSON{}}
	// A sync that stops still says, with --json, what it did and why it
	// stopped (the error also goes to stderr).
	stopped := func(err error) error {
		if o.asJSON {
			out.Error = err.Error()
			writeJSON(e, out)
		}
		return err
	}
	db, err := o.db.openForSync(e, ctx)
	if err != nil {
		return stopped(err)
	}
	defer db.Close()
	prog := &term.Progress{IO: e.IOStreams, What: "syncing"}
	out.Database = db.URL()
	var failed []catalog.FileError
	if o.pull {
		st, err := db.Pull(ctx, dirs[0], catalog.SyncOptions{OmpRoot: o.ompRoot, Sessions: o.args, Progress: prog.Update})
		prog.Done()
		out.Pull = &st
		if err != nil {
			return stopped(err)
		}
		failed = st.Failed
	} else {
		var st catalog.PushStats
		for _, dir := range dirs {
			origin := o.origin
			if origin != "" && len(dirs) > 1 {
				origin += ":" + dir
			}
			one, err := db.Push(ctx, dir, catalog.SyncOptions{Origin: origin, OmpRoot: o.ompRoot, Raw: o.raw, Progress: prog.Update})
			st.Add(one)
			if err != nil {
				prog.Done()
				out.Push = &st
				return stopped(err)
			}
		}
		prog.Done()
		out.Push = &st
		failed = st.Failed
	}
	for _, f := range failed {
		out.Failed = append(out.Failed, failedJSON{f.Path, f.Reason()})
	}
	if o.asJSON {
		if err := writeJSON(e, out); err != nil {
			return err
		}
	} else {
		for _, f := range failed {
			fmt.Fprintf(e.ErrOut, "%s: not synced: %s\n", f.Path, f.Reason())
		}
		if out.Push != nil {
			printPush(e, db.URL(), out.Push)
		} else {
			printPull(e, dirs[0], out.Pull)
		}
	}
	if len(failed) > 0 {
		return exitCodeError{code: exitError}
	}
	return nil
}

// dirs are the data dirs a sync reads or writes: the one the flags
// choose; for a push with --omp alone, xdev's (when it has sessions) and
// omp's.
func (o *syncOptions) dirs() ([]string, error) {
	if o.pull {
		dir, err := o.store.dir()
		return []string{dir}, err
	}
	if o.store.omp && o.store.dataDir == "" {
		var dirs []string
		if mine, err := (&storeFlags{}).existingDir(); err == nil {
			dirs = append(dirs, mine)
		}
		omp, err := o.store.existingDir()
		return append(dirs, omp), err
	}
	dir, err := o.store.existingDir()
	return []string{dir}, err
}

func printPush(e *env, url string, st *catalog.PushStats) {
	changed := st.New + st.Appended + st.Revised + st.Retitled + st.Blobs
	if changed == 0 {
		fmt.Fprintf(e.Out, "Up to date: %s in %s.", term.Plural(st.Files, "session file"), url)
	} else {
		blobs := ""
		if st.Blobs > 0 {
			blobs = ", " + term.Plural(st.Blobs, "image blob")
		}
		fmt.Fprintf(e.Out, "Pushed %d new, %d grown, %d rewritten (new revisions), %d retitled: %s%s, %s to %s.",
			st.New, st.Appended, st.Revised, st.Retitled, term.Plural(int(st.Lines), "line"), blobs, term.Size(st.Bytes), url)
	}
	if st.Masked > 0 {
		fmt.Fprintf(e.Out, " %s masked (xdev secrets lists them; --raw pushes them as they are).", term.Plural(st.Masked, "secret"))
	}
	if st.Behind > 0 {
		fmt.Fprintf(e.Out, " %s behind the database (xdev sync --pull brings them).", term.Plural(st.Behind, "file"))
	}
	fmt.Fprintln(e.Out)
}

func printPull(e *env, dir string, st *catalog.PullStats) {
	fmt.Fprintf(e.Out, "Pulled into %s: %d new, %d grown, %d retitled, %d up to date", dir, st.Written, st.Appended, st.Retitled, st.UpToDate)
	if st.Blobs > 0 {
		fmt.Fprintf(e.Out, ", %s", term.Plural(st.Blobs, "image blob"))
	}
	if st.Conflicts > 0 {
		fmt.Fprintf(e.Out, "; %s went another way here, left alone (xdev sync pushes them as new revisions)", term.Plural(st.Conflicts, "file"))
	}
	fmt.Fprintln(e.Out, ".")
}
