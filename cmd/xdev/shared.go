package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/session"
)

// storeFlags are the flags that choose the data dir.
type storeFlags struct {
	dataDir string
	omp     bool
}

func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	f := &storeFlags{}
	fs.StringVar(&f.dataDir, "data-dir", "", "data dir (default $XDEV_DATA_DIR or ~/.xdev/agent)")
	fs.BoolVar(&f.omp, "omp", false, "read omp's data dir ($PI_CODING_AGENT_DIR or ~/.omp/agent)")
	return f
}

// dir returns the data dir the flags choose.
func (f *storeFlags) dir() (string, error) {
	switch {
	case f.dataDir != "" && f.omp:
		return "", usagef("--data-dir and --omp both choose the data dir; give one")
	case f.dataDir != "":
		return filepath.Abs(f.dataDir)
	case f.omp:
		return ompDataDir()
	}
	return session.DefaultDataDir()
}

// existingDir returns the data dir the flags choose, failing when it has
// no sessions directory: every command that reads a data dir says so the
// same way (exit 1), rather than listing nothing.
func (f *storeFlags) existingDir() (string, error) {
	dir, err := f.dir()
	if err != nil {
		return "", err
	}
	sessions := session.SessionsDir(dir)
	fi, err := os.Stat(sessions)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		hint := "--data-dir or $XDEV_DATA_DIR chooses another; --omp reads omp's"
		if f.omp {
			hint = "$PI_CODING_AGENT_DIR chooses omp's agent dir"
		}
		return "", fmt.Errorf("no sessions: %s does not exist (%s)", sessions, hint)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("no sessions: %s is not a directory", sessions)
	}
	return dir, nil
}

// ompDataDir is omp's agent dir: $PI_CODING_AGENT_DIR, else ~/.omp/agent.
func ompDataDir() (string, error) {
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Abs(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".omp", "agent"), nil
}

// resolve finds the session a SESSION argument names: a path, else an id
// or file-name prefix in the data dir (this directory's project first).
func (f *storeFlags) resolve(arg string) (string, error) {
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		return arg, nil
	}
	dir, err := f.existingDir()
	if err != nil {
		return "", err
	}
	cwd, _ := os.Getwd()
	info, err := session.Resolve(dir, cwd, arg)
	if err != nil {
		return "", err
	}
	return info.Path, nil
}

// writeJSON prints v as indented JSON, as every --json does.
func writeJSON(w io.Writer, v any) error {
	return json.MarshalWrite(w, v, jsontext.Multiline(true), jsontext.WithIndent("  "),
		jsontext.AllowInvalidUTF8(true), json.Deterministic(true))
}

// table prints rows for a person (aligned columns under a header) on a
// terminal, and for a script (tab-separated, no header) otherwise, as the
// GitHub CLI does.
type table struct {
	e      *env
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) print() {
	if !t.e.tty {
		for _, r := range t.rows {
			fmt.Fprintln(t.e.stdout, strings.Join(r, "\t"))
		}
		return
	}
	tw := tabwriter.NewWriter(t.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// ago says how long ago t was, the way a person reads it.
func ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day") + " ago"
	}
	return t.Local().Format("Jan 2, 2006")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// size formats a byte count for a person.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// truncate cuts s to n runes for a table cell.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// progress reports long work on stderr when stdout is a terminal.
type progress struct {
	e     *env
	what  string
	last  time.Time
	shown bool
}

func (p *progress) update(done, total int) {
	if !p.e.tty || (time.Since(p.last) < 100*time.Millisecond && done != total) {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.e.stderr, "\r%s %d/%d…", p.what, done, total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}

// errProblems makes the exit code 3 after problems were printed.
var errProblems = exitCodeError{code: exitProblems}
