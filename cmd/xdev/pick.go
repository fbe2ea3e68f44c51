package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/pick"
	"github.com/xdev/xdev/internal/term"
)

var pickCommand = &command{
	name: "pick", namesSessions: true, freeText: true, args: "[--print] [--first] [--from HARNESS] [QUERY]",
	summary: "Find a session of any harness as you type, and resume it where it was made",
	example: `  xdev pick                      every harness's sessions, this project's first; Enter resumes
  xdev                           the same, on a terminal
  xdev pick refactor             start with a query; /word searches what was said
  xdev pick --print              print the command instead (eval "$(xdev pick --print)" in a shell function)
  xdev pick --print --first parser   a script: the resume command of the best match, no screen`,
	options: func() options { return &pickOptions{} },
}

// pickOptions are the flags and arguments of `xdev pick`.
type pickOptions struct {
	store   *storeFlags
	sources *sourceFlags
	from    string
	print   bool
	first   bool
	args    []string
	// bin is the xdev run for a key's work; "" for this process's own.
	bin string
}

func (o *pickOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.StringVar(&o.from, "from", "", "whose sessions (default: every harness's here): "+catalog.HarnessChoices())
	fs.BoolVar(&o.print, "print", false, "print the resume command instead of running it (the picker is drawn on the terminal)")
	fs.BoolVar(&o.first, "first", false, "no picker: take the first session the query matches (with --print; what --print QUERY does where there is no terminal)")
}

func (o *pickOptions) setArgs(args []string) { o.args = args }

// errNoTTY is pick's error for --print where there is no controlling
// terminal to draw on.
var errNoTTY = fmt.Errorf("%w, and there is no controlling terminal", errNoTerminal)

// errNoTerminal is pick's error where there is no terminal to draw on.
var errNoTerminal = errors.New("the picker needs a terminal: stdout is not one " +
	"(in a script, 'xdev pick --print QUERY' prints the command that resumes the best match)")

func (o *pickOptions) run(e *env) error {
	if o.first && !o.print {
		return usagef("--first takes a session without showing the picker: give --print too, to print its command")
	}
	in, out, err := o.terminal(e)
	if errors.Is(err, errNoTTY) && len(o.args) > 0 {
		o.first = true // a script's --print QUERY: the best match, no screen
	} else if err != nil {
		return err
	}
	if out != nil {
		defer out.Close()
	}
	trace := func(string) {}
	if path := os.Getenv("XDEV_PICK_TRACE"); path != "" {
		trace = traceTo(path)
	}
	trace("start")
	// What colours the terminal takes, found while the sessions are read:
	// colorprofile reads the terminfo database (17 ms), which the
	// picker's first frame would otherwise wait for.
	profile := make(chan colorprofile.Profile, 1)
	if out != nil {
		go func() { profile <- colorprofile.Detect(out, os.Environ()) }()
	}
	// A catalog that lists anew each time, as a server's: one that kept
	// its listings (ListOnce) would hold 25,000 sessions' twice over.
	cfg, err := o.sources.config(e, o.store)
	if err != nil {
		return err
	}
	c, err := catalog.New(cfg)
	if err != nil {
		return err
	}
	hs, err := c.Scope(o.from)
	if err != nil {
		return usagef("--from is %s, not %q", catalog.HarnessChoices(), o.from)
	}
	searchPlaces, err := c.PlacesIn(hs)
	if err != nil {
		return err
	}
	cwd, _ := e.Getwd()
	places := c.Places(hs)
	src := pick.CatalogSource(c, places, searchPlaces)
	defer src.Close()
	opts := pick.Options{Source: src, Cwd: cwd, Query: strings.Join(o.args, " "), Now: e.Now,
		Pager: o.pager, Fork: o.sub("fork"), Export: o.export}
	if o.first {
		row, ok, err := pick.First(opts) // listed now: no snapshot
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no session matches %q", opts.Query)
		}
		return o.resume(e, row)
	}
	// The last listing's rows at once (a screen's worth before the first
	// frame, the rest after it), and this one's kept for the next.
	snap := catalog.SnapshotFile(places)
	if sr, err := catalog.OpenSnapshot(snap); err == nil {
		opts.Rows, _ = sr.Next()
		opts.MoreRows = func(add func([]catalog.Row)) {
			defer sr.Close()
			for {
				rows, err := sr.Next()
				if err != nil {
					return
				}
				add(rows)
			}
		}
	}
	trace("snapshot")
	opts.Listed = func(rows []catalog.Row) { catalog.WriteSnapshot(snap, rows) }
	opts.Trace = trace
	m := pick.New(opts)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithColorProfile(<-profile))
	if _, err := p.Run(); err != nil {
		return fmt.Errorf("the picker: %w", err)
	}
	row, ok := m.Chosen()
	if !ok {
		return nil
	}
	return o.resume(e, row)
}

// terminal is where the picker is drawn and read from: stdout and stdin
// when stdout is a terminal; with --print, whose stdout a shell reads,
// the controlling terminal (the caller closes out); none with --first.
func (o *pickOptions) terminal(e *env) (in, out *os.File, err error) {
	switch {
	case o.first:
		return nil, nil, nil
	case e.IsTTY:
		// Duplicated, so that closing it leaves stdout open.
		fd, err := syscall.Dup(int(os.Stdout.Fd()))
		if err != nil {
			return nil, nil, err
		}
		return os.Stdin, os.NewFile(uintptr(fd), "stdout"), nil
	case o.print:
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, nil, errNoTTY
		}
		return tty, tty, nil
	}
	return nil, nil, errNoTerminal
}

// resume resumes the session of row in the harness that made it, in its
// directory (the process becomes the harness's), or prints the command.
func (o *pickOptions) resume(e *env, row catalog.Row) error {
	x := catalog.ResumeOf(row)
	if x.Argv == nil {
		return fmt.Errorf("%s: no command resumes it: %s", term.HomePath(row.Path), x.Why)
	}
	if o.print {
		_, err := fmt.Fprintln(e.Out, x.Shell())
		return err
	}
	bin, err := exec.LookPath(x.Argv[0])
	if err != nil {
		return fmt.Errorf("%s is not installed here (not on $PATH); the command that resumes it: %s", x.Argv[0], x.Shell())
	}
	if x.Dir != "" {
		if err := os.Chdir(x.Dir); err != nil {
			return fmt.Errorf("the session's directory: %w; the command that resumes it: %s", err, x.Shell())
		}
	}
	e.Flush()
	return syscall.Exec(bin, x.Argv, os.Environ())
}

// self is this program, run again for a key's work (show, fork,
// export), so that it is done by the command's own rules.
func (o *pickOptions) self(args ...string) *exec.Cmd {
	bin := o.bin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			bin = os.Args[0]
		}
	}
	if o.store.dataDir != "" {
		args = append([]string{args[0], "--data-dir", o.store.dataDir}, args[1:]...)
	} else if o.store.omp {
		args = append([]string{args[0], "--omp"}, args[1:]...)
	}
	return exec.Command(bin, args...)
}

// pager shows a session whole, as `xdev show` prints it, in $PAGER
// (else less).
func (o *pickOptions) pager(row catalog.Row) *exec.Cmd {
	show := o.self("show", "--", row.Path)
	pager := os.Getenv("PAGER")
	if pager == "" {
		pager = "less -R"
	}
	words := make([]string, len(show.Args))
	for k, w := range show.Args {
		words[k] = catalog.ShellQuote(w)
	}
	words[0] = catalog.ShellQuote(show.Path)
	return exec.Command("/bin/sh", "-c", strings.Join(words, " ")+" | "+pager)
}

// sub is a key's work done by another xdev command on the session: what
// it printed is what the picker tells.
func (o *pickOptions) sub(name string, args ...string) func(context.Context, catalog.Row) (string, error) {
	return func(ctx context.Context, row catalog.Row) (string, error) {
		cmd := o.self(append(append([]string{name}, args...), "--", row.Path)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && len(ee.Stderr) > 0 {
				return "", errors.New(strings.TrimSpace(string(ee.Stderr)))
			}
			return "", err
		}
		return name + ": " + term.OneLine(string(out)), nil
	}
}

// export writes the session as Markdown into the current directory, a
// new file named by its id: a file of that name there already is the
// user's, and is left as it is (the next name is taken).
func (o *pickOptions) export(ctx context.Context, row catalog.Row) (string, error) {
	id := row.ID
	if len(id) > 8 {
		id = id[:8]
	}
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(row.Path), filepath.Ext(row.Path))
	}
	file := "xdev-" + id + ".md"
	for n := 2; ; n++ {
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if n > 999 {
			return "", fmt.Errorf("%s and 998 more names are taken here", file)
		}
		file = fmt.Sprintf("xdev-%s-%d.md", id, n)
	}
	if _, err := o.sub("export", "-o", file)(ctx, row); err != nil {
		return "", err
	}
	return "exported to " + file, nil
}

// stdinIsTerminal reports whether the command's stdin is a terminal
// (keys come from a person).
func stdinIsTerminal(e *env) bool {
	f, ok := e.In.(*os.File)
	return ok && term.IsTerminal(f)
}

// traceTo is a picker's Trace that appends each event to the file at
// path, with the time (unix ns): how bench-ceiling.sh times the first
// screen (XDEV_PICK_TRACE).
func traceTo(path string) func(string) {
	return func(event string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		fmt.Fprintf(f, "%s %d\n", event, time.Now().UnixNano())
		f.Close()
	}
}
