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

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/term"
)

// storeFlags are the flags that choose the data dir.
type storeFlags struct {
	dataDir string
	omp     bool
	// destination: the data dir is where the command writes (fork,
	// import), not where it looks. The session named is found anywhere,
	// and the data dir need not exist yet.
	destination bool
}

func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	f := &storeFlags{}
	fs.StringVar(&f.dataDir, "data-dir", "", "data dir (default $XDEV_DATA_DIR or ~/.xdev/agent)")
	fs.BoolVar(&f.omp, "omp", false, "read omp's data dir ($PI_CODING_AGENT_DIR or ~/.omp/agent)")
	return f
}

// addDestinationFlags are the store flags of a command that writes a new
// session into the data dir: they say where it goes.
func addDestinationFlags(fs *flag.FlagSet) *storeFlags {
	f := &storeFlags{destination: true}
	fs.StringVar(&f.dataDir, "data-dir", "", "the data dir to write into, made if need be (default $XDEV_DATA_DIR or ~/.xdev/agent)")
	fs.BoolVar(&f.omp, "omp", false, "write into omp's data dir ($PI_CODING_AGENT_DIR or ~/.omp/agent)")
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

// explicit reports whether a flag chose the data dir to read: a session
// not found there is not looked for elsewhere. A destination is never
// that.
func (f *storeFlags) explicit() bool { return !f.destination && (f.dataDir != "" || f.omp) }

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
		h := catalog.Xdev
		if f.omp {
			h = catalog.Omp
		}
		return "", fmt.Errorf("no sessions: %s does not exist (%s)%s", sessions, elsewhereHint(h), otherHarnessesHere())
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("no sessions: %s is not a directory", sessions)
	}
	return dir, nil
}

// lookedIn names the places of the harnesses hs, a line each, and says
// of each that is not on this machine that it is not there: what a
// command that found no sessions tells a person.
func lookedIn(c *catalog.Catalog, hs []catalog.Harness) string {
	var b strings.Builder
	b.WriteString("Looked in:")
	for _, h := range hs {
		dir, here := c.Where(h)
		if dir == "" {
			continue
		}
		state := ""
		if !here {
			state = " (not there)"
		}
		fmt.Fprintf(&b, "\n  %-12s %s%s", h.Name(), term.HomePath(dir), state)
	}
	return b.String()
}

// notHere is the error of a command asked for the sessions of harness h
// alone, where h has none: where xdev looked, how to point it elsewhere,
// and which other harnesses' sessions are here.
func notHere(c *catalog.Catalog, h catalog.Harness) error {
	dir, _ := c.Where(h)
	return fmt.Errorf("no sessions: %s does not exist (%s)%s", dir, elsewhereHint(h), otherHarnessesHere())
}

// elsewhereHint says how to point xdev at harness h's sessions elsewhere.
func elsewhereHint(h catalog.Harness) string {
	switch h {
	case catalog.Xdev:
		return "--data-dir or $XDEV_DATA_DIR chooses another; --omp reads omp's"
	case catalog.Omp:
		return "$PI_CODING_AGENT_DIR chooses omp's agent dir"
	}
	flag, _ := h.RootFlag()
	return "--" + flag + " chooses another"
}

// otherHarnessesHere says which other harnesses keep sessions on this
// machine, and that xdev reads them: a person who named a data dir that
// is not there may have meant those.
func otherHarnessesHere() string {
	c, err := catalog.New(catalog.Config{})
	if err != nil {
		return ""
	}
	var here []string
	for _, h := range catalog.Foreign {
		if root := c.Root(h); root != "" {
			if _, err := os.Stat(root); err == nil {
				here = append(here, fmt.Sprintf("%s in %s", h.Name(), term.HomePath(root)))
			}
		}
	}
	if len(here) == 0 {
		return ""
	}
	return fmt.Sprintf(".\nThis machine has sessions of %s, which xdev reads unless --data-dir, --omp or --from narrows it to one harness",
		strings.Join(here, ", "))
}

// dataOut is where a command prints data that is not JSON (a Markdown
// export, entries as stored): byte for byte on a pipe or into a file, but
// escaped like any text for a person when stdout is a terminal.
func (e *env) dataOut() io.Writer {
	if e.IsTTY {
		return e.Out
	}
	return e.RawOut
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
	w := bufio.NewWriter(e.RawOut)
	err := json.MarshalWrite(w, v, jsontext.Multiline(true), jsontext.WithIndent("  "),
		jsontext.AllowInvalidUTF8(true), json.Deterministic(true))
	if err != nil {
		return err
	}
	w.WriteByte('\n')
	return w.Flush()
}

// writeJSONArray writes n values, item(0) to item(n-1), as writeJSON
// writes a slice of them, byte for byte, one value at a time: a listing of
// 25,000 sessions holds neither a second copy of every row nor its 16 MB
// of JSON.
func writeJSONArray[T any](e *env, n int, item func(i int) T) error {
	w := bufio.NewWriter(e.RawOut)
	enc := jsontext.NewEncoder(w, jsontext.Multiline(true), jsontext.WithIndent("  "), jsontext.AllowInvalidUTF8(true))
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for i := range n {
		if err := json.MarshalEncode(enc, item(i), json.Deterministic(true)); err != nil {
			return err
		}
	}
	if err := enc.WriteToken(jsontext.EndArray); err != nil {
		return err
	}
	return w.Flush()
}

// errProblems makes the exit code 3 after problems were printed.
var errProblems = exitCodeError{code: exitProblems}
