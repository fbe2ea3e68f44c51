package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
		return session.OmpDataDir()
	}
	return session.DefaultDataDir()
}

// explicit reports whether a flag chose the data dir: a session not found
// there is not looked for elsewhere.
func (f *storeFlags) explicit() bool { return f.dataDir != "" || f.omp }

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

// resolve finds the session a SESSION argument names: a path, else an id
// or file-name prefix in the data dir (this directory's project first).
func (f *storeFlags) resolve(arg string) (string, error) {
	if session.SessionPath(arg) {
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

// dataOut is where a command prints data that is not JSON (a Markdown
// export, entries as stored): byte for byte on a pipe or into a file, but
// escaped like any text for a person when stdout is a terminal.
func (e *env) dataOut() io.Writer {
	if e.tty {
		return e.stdout
	}
	return e.rawOut
}

// jsonTime is a time in JSON output: RFC 3339 in UTC with milliseconds,
// the format of the timestamps in session files, for every time field of
// every command; null when unknown.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + session.FormatTime(time.Time(t)) + `"`), nil
}

// writeJSON prints v as indented JSON ending in a newline, as every
// --json does. It is data: control characters are JSON-escaped, not
// shown as terminal escapes.
func writeJSON(e *env, v any) error {
	w := bufio.NewWriter(e.rawOut)
	err := json.MarshalWrite(w, v, jsontext.Multiline(true), jsontext.WithIndent("  "),
		jsontext.AllowInvalidUTF8(true), json.Deterministic(true))
	if err != nil {
		return err
	}
	w.WriteByte('\n')
	return w.Flush()
}

// table prints rows for a person on a terminal: aligned columns under a
// header, fitted to the terminal's width by cutting the columns marked
// flexible (never the others, such as an id), measured in display columns
// (a CJK character or an emoji takes two). For a script (stdout not a
// terminal) it prints tab-separated lines without a header, as the GitHub
// CLI does. Cells are escaped either way: a tab or newline in a title
// cannot break a row.
type table struct {
	e      *env
	header []string
	flex   []bool // per column: may be cut to fit the width
	rows   [][]string
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = escapeString(c)
	}
	t.rows = append(t.rows, cells)
}

const columnGap = 2

// minFlexWidth is as narrow as a flexible column is cut.
const minFlexWidth = 12

func (t *table) print() {
	w := t.e.stdout
	if !t.e.tty {
		for _, r := range t.rows {
			fmt.Fprintln(w, strings.Join(r, "\t"))
		}
		return
	}
	widths := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	// Cut the widest flexible column, one column at a time, until the row
	// fits or every flexible column is at its minimum.
	total := func() int {
		n := columnGap * (len(widths) - 1)
		for _, x := range widths {
			n += x
		}
		return n
	}
	for over := total() - t.e.width; over > 0; over-- {
		widest := -1
		for i, f := range t.flex {
			if f && widths[i] > minFlexWidth && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	for _, r := range append([][]string{t.header}, t.rows...) {
		var line strings.Builder
		for i, c := range r {
			c = fitWidth(c, widths[i])
			if i < len(r)-1 {
				c = padWidth(c, widths[i]+columnGap)
			}
			line.WriteString(c)
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
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

// oneLine joins the lines of s into one, its runs of white space into one
// space: a message's start, as a table or tree shows it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate cuts s to one line of at most n display columns.
func truncate(s string, n int) string { return fitWidth(oneLine(s), n) }

// progress reports long work on stderr when stderr is a terminal.
type progress struct {
	e     *env
	what  string
	last  time.Time
	shown bool
}

func (p *progress) update(done, total int) {
	if !p.e.errTTY || (time.Since(p.last) < 100*time.Millisecond && done != total) {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.e.rawErr, "\r%s %d/%d…", p.what, done, total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.e.rawErr, "\r\033[K")
	}
}

// errProblems makes the exit code 3 after problems were printed.
var errProblems = exitCodeError{code: exitProblems}
