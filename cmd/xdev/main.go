// Command xdev finds, reads, forks, retitles, verifies and exports the
// session transcripts of coding agents: its own (omp's format) and every other harness's it reads.
//
// It is a thin shell over internal/session: every command parses its
// flags, calls the library and prints the result, as a table or, with
// --json, as JSON for scripts.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"unicode"

	"github.com/xdev/xdev/internal/term"
)

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitError    = 1 // the command failed
	exitUsage    = 2 // the command line was wrong
	exitProblems = 3 // verify found problems
)

// command is one `xdev <name>` subcommand.
type command struct {
	name    string
	args    string // synopsis after the name
	summary string
	example string
	// freeText: the arguments are text (a query, a title), so a word of
	// one dash that names no flag is an argument, not a mistake.
	freeText bool
	// namesSessions: its output names sessions by their paths and working
	// directories, which hold a key where a project was named by one: its
	// every line is masked (maskedLine), messages too.
	namesSessions bool
	// options makes the command's options: its flags and arguments, parsed
	// apart from running it (see parseOptions), as the GitHub CLI's
	// options structs are.
	options func() options
}

// options is what a command's options struct does: define its flags, take
// its positional arguments, and run.
type options interface {
	define(fs *flag.FlagSet)
	setArgs(args []string)
	run(e *env) error
}

// parseOptions parses a command line for c: flags before and after the
// arguments, --help printing the command's help.
func parseOptions(e *env, c *command, args []string) (options, error) {
	o := c.options()
	fs := c.flags(e)
	o.define(fs)
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return nil, err
	}
	o.setArgs(pos)
	return o, nil
}

// commandGroups is the command table, as `xdev help` lists it. It is
// static: a command is a variable (listCommand, …) the compiler checks,
// found by name only here.
var commandGroups = []struct {
	title    string
	commands []*command
}{
	{"Sessions", []*command{pickCommand, listCommand, showCommand, searchCommand, usageCommand, forkCommand, retitleCommand, verifyCommand, secretsCommand, exportCommand, blobsCommand, indexCommand, importCommand, syncCommand, serveCommand, mcpCommand}},
	{"Plumbing (for scripts)", []*command{contextCommand, newCommand, appendCommand, titleCommand, branchCommand}},
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for _, g := range commandGroups {
		for _, c := range g.commands {
			if c.name == name {
				return c
			}
		}
	}
	return nil
}

// env is what a command may touch: its streams, terminal facts, clock
// and working directory (term.IOStreams), nothing else of the process.
type env struct {
	*term.IOStreams
}

// newEnv returns the env of a command writing to out and errOut.
func newEnv(in io.Reader, out, errOut io.Writer, tty bool, width int) *env {
	return &env{term.New(in, out, errOut, tty, width)}
}

// usageError marks errors in the command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// exitCodeError carries a specific exit code with a message already printed.
type exitCodeError struct{ code int }

func (e exitCodeError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() { os.Exit(xdevMain()) }

// xdevMain is the whole command, main's body: the tests' re-executed
// binary runs it too (TestMain), so that what they measure of a process,
// its memory above all, is what the binary does.
func xdevMain() int {
	if os.Getenv("GOMEMLIMIT") == "" {
		// Every command is built to hold only what it works on, a few MiB
		// to a few tens; a soft limit makes the collector return garbage
		// before the heap doubles rather than after. A command that truly
		// needs more still gets it, without the collector running back to
		// back (guardMemoryLimit).
		policy := commandMemory
		switch {
		case len(os.Args) > 1 && os.Args[1] == "serve":
			policy = serverMemory
		case len(os.Args) == 1 || os.Args[1] == "pick":
			policy = pickMemory // xdev alone is the picker, on a terminal
		}
		memoryGuard = guardMemoryLimit(policy)
	}
	stop := startProfile()
	code := run(osEnv(), os.Args[1:])
	stop()
	return code
}

// memoryGuard is the process's soft memory limit's guard, nil where
// GOMEMLIMIT sets the limit (or in a test's process).
var memoryGuard *limitGuard

// osEnv is the env of the process: its standard streams and terminal.
func osEnv() *env { return &env{term.System()} }

func run(e *env, args []string) int {
	defer e.Flush()
	if len(args) == 0 && e.IsTTY && stdinIsTerminal(e) {
		args = []string{"pick"} // a person at a terminal: the picker
	}
	if len(args) == 0 {
		printHelp(e.ErrOut)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		if len(args) == 1 {
			printHelp(e.Out)
			return exitOK
		}
		c := lookup(args[1])
		if c == nil {
			fmt.Fprintf(e.ErrOut, "xdev help: unknown command %q\nRun 'xdev help' for the list.\n", args[1])
			return exitUsage
		}
		// The command prints its own help, flags and all.
		args = []string{args[1], "--help"}
	case "version", "--version", "-version":
		fmt.Fprintln(e.Out, versionString())
		return exitOK
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(e.ErrOut, "xdev: unknown command %q\nRun 'xdev help' for the list.\n", args[0])
		return exitUsage
	}
	if c.namesSessions {
		e.Filter(maskedLine)
	}
	o, err := parseOptions(e, c, args[1:])
	if err == nil {
		err = o.run(e)
	}
	var ue usageError
	var ce exitCodeError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ue):
		fmt.Fprintf(e.ErrOut, "xdev %s: %s\nUsage: xdev %s %s\nRun 'xdev %s --help' for more.\n", c.name, ue.msg, c.name, c.args, c.name)
		return exitUsage
	default:
		fmt.Fprintf(e.ErrOut, "xdev %s: %v\n", c.name, err)
		return exitError
	}
}

// versionString says which xdev this is: the module version and the VCS
// revision the binary was built from, as the Go toolchain recorded them.
func versionString() string {
	v := "(devel)"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "xdev " + v
	}
	if info.Main.Version != "" {
		v = info.Main.Version
	}
	var rev, when, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := "xdev " + v
	if rev != "" {
		out += fmt.Sprintf(" (%.12s %s%s)", rev, when, dirty)
	}
	return out + " " + info.GoVersion
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "xdev: work with coding agents' session transcripts, xdev's own and every other harness's.")
	fmt.Fprintln(w, "\nUsage: xdev <command> [flags] [args]")
	for _, group := range commandGroups {
		fmt.Fprintf(w, "\n%s:\n", group.title)
		for _, c := range group.commands {
			fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nA SESSION is an id or id prefix, a file name, or a path.")
	fmt.Fprintln(w, "Sessions are read from --data-dir, else $XDEV_DATA_DIR, else ~/.xdev/agent;")
	fmt.Fprintln(w, "--omp reads omp's instead ($PI_CODING_AGENT_DIR, else ~/.omp/agent).")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 failed, 2 bad command line, 3 verify found problems.")
	fmt.Fprintln(w, "\nRun 'xdev help <command>' or 'xdev <command> --help' for its flags and examples;")
	fmt.Fprintln(w, "'xdev --version' for the version.")
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage: xdev %s %s\n", c.summary, c.name, c.args)
	if fs != nil {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if c.example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.example)
	}
}

// flags returns the command's FlagSet. It prints nothing itself: parse
// prints the help on --help, and run the short usage on a bad flag.
func (c *command) flags(e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags (allowed before and after positional arguments) and
// returns the positional arguments. Everything after "--" is positional,
// as is a word that cannot be a flag (one holding white space, such as a
// title "-dash title"); in a command whose arguments are free text
// (c.freeText: a query, a title), so is a word of one dash that names no
// flag, such as a query's excluded word -test.
func (c *command) parse(e *env, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return append(pos, args[1:]...), nil
		}
		if !isFlagWord(a) || c.freeText && !strings.HasPrefix(a, "--") && fs.Lookup(flagName(a)) == nil {
			pos = append(pos, a)
			args = args[1:]
			continue
		}
		n := 1
		if f := fs.Lookup(flagName(a)); f != nil && !strings.Contains(a, "=") && !isBoolFlag(f) && len(args) > 1 {
			n = 2 // the flag and its value, whatever the value looks like
		}
		if err := fs.Parse(args[:n]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandHelp(e.Out, c, fs)
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = args[n:]
	}
	return pos, nil
}

// isFlagWord reports whether a may be a flag: a dash, then a name of no
// white space.
func isFlagWord(a string) bool {
	return len(a) > 1 && a[0] == '-' && !strings.ContainsFunc(a, unicode.IsSpace)
}

// flagName is the name of flag word a: without its dashes and value.
func flagName(a string) string {
	name := strings.TrimLeft(a, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
