package main

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestParseOptions parses command lines into each command's options
// without running the command: flags before and after arguments, the
// store flags, and a wrong flag as a usage error.
func TestParseOptions(t *testing.T) {
	e := newEnv(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, false, 80)
	tests := []struct {
		c    *command
		args []string
		want options
	}{
		{listCommand, []string{"--all", "--limit", "5", "--json"},
			&listOptions{all: true, limit: 5, asJSON: true}},
		{showCommand, []string{"abc", "--tree", "--full"}, &showOptions{tree: true, full: true, around: 3, args: []string{"abc"}}},
		{showCommand, []string{"abc", "--at", "e1", "--around", "5"}, &showOptions{at: "e1", around: 5, args: []string{"abc"}}},
		{exportCommand, []string{"--format", "html", "-o", "x.html", "s1"},
			&exportOptions{format: "html", out: "x.html", args: []string{"s1"}}},
		{forkCommand, []string{"--at", "1a2b3c4d", "--title", "T", "s1"}, &forkOptions{at: "1a2b3c4d", title: "T", args: []string{"s1"}}},
		{verifyCommand, []string{"--repair", "a", "b"}, &verifyOptions{repair: true, args: []string{"a", "b"}}},
		{titleCommand, []string{"f.jsonl", "New title", "--auto"}, &titleOptions{auto: true, args: []string{"f.jsonl", "New title"}}},
		{contextCommand, []string{"--json", "f.jsonl"}, &contextOptions{asJSON: true, args: []string{"f.jsonl"}}},
		{blobsCommand, []string{"--delete", "--omp"}, &blobsOptions{del: true}},
		// "--" ends the flags: what follows is an argument, a flag's name
		// or not.
		{retitleCommand, []string{"s1", "--", "-dash title"}, &retitleOptions{args: []string{"s1", "-dash title"}}},
		{retitleCommand, []string{"--", "--json", "--data-dir"}, &retitleOptions{args: []string{"--json", "--data-dir"}}},
		{exportCommand, []string{"-o", "x.md", "--", "-s1"}, &exportOptions{out: "x.md", args: []string{"-s1"}}},
		// A flag's value may be "--" or look like a flag.
		{forkCommand, []string{"--title", "--", "s1"}, &forkOptions{title: "--", args: []string{"s1"}}},
		{forkCommand, []string{"--title=-x", "s1"}, &forkOptions{title: "-x", args: []string{"s1"}}},
		{forkCommand, []string{"--title", "-x", "s1", "--json"}, &forkOptions{title: "-x", asJSON: true, args: []string{"s1"}}},
		// A word holding white space is never a flag.
		{retitleCommand, []string{"s1", "-dash title"}, &retitleOptions{args: []string{"s1", "-dash title"}}},
		// In free text, a word of one dash that names no flag is an
		// argument (a query's excluded word); one that names a flag is
		// the flag.
		{searchCommand, []string{"pars*", "-test", "--role", "user", "-l"},
			&searchOptions{args: []string{"pars*", "-test"}, role: "user", sessionsOnly: true, limit: 20}},
		{searchCommand, []string{"--", "-l", "--json"}, &searchOptions{args: []string{"-l", "--json"}, limit: 20}},
		{retitleCommand, []string{"s1", "-wip"}, &retitleOptions{args: []string{"s1", "-wip"}}},
	}
	for _, tt := range tests {
		o, err := parseOptions(e, tt.c, tt.args)
		if err != nil {
			t.Errorf("%s %q: %v", tt.c.name, tt.args, err)
			continue
		}
		// The store, source and database flags are pointers, checked apart below:
		// compare the rest.
		for _, name := range []string{"store", "sources", "db", "foreign"} {
			if f := reflect.ValueOf(o).Elem().FieldByName(name); f.IsValid() {
				reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
			}
		}
		if !reflect.DeepEqual(o, tt.want) {
			t.Errorf("%s %q:\n got %+v\nwant %+v", tt.c.name, tt.args, o, tt.want)
		}
	}
	if o, _ := parseOptions(e, blobsCommand, []string{"--omp"}); !o.(*blobsOptions).store.omp {
		t.Error("--omp not parsed into the store flags")
	}
	if o, _ := parseOptions(e, syncCommand, []string{"--db", "postgres://h/d", "--omp-table", "--pull", "s1"}); o == nil ||
		o.(*syncOptions).db.url != "postgres://h/d" || !o.(*syncOptions).db.ompTable || !o.(*syncOptions).pull {
		t.Error("sync's flags not parsed")
	}
	var ue usageError
	for _, bad := range []struct {
		c    *command
		args []string
	}{
		{listCommand, []string{"--bogus"}},
		{showCommand, []string{"-bogus", "s1"}},   // SESSION is no free text: a typo stays an error
		{searchCommand, []string{"x", "--bogus"}}, // two dashes are a flag's, in free text too
		{forkCommand, []string{"s1", "--title"}},  // a value is missing
	} {
		if _, err := parseOptions(e, bad.c, bad.args); !errors.As(err, &ue) {
			t.Errorf("%s %q: err = %v, want a usage error", bad.c.name, bad.args, err)
		}
	}
	for _, g := range commandGroups {
		for _, c := range g.commands {
			if lookup(c.name) != c || c.options == nil {
				t.Errorf("command %q is not in the table as itself", c.name)
			}
		}
	}
}

// TestHelpExamplesParse parses every example of every command's help as
// the command would (issue 22: search's own `'pars*' -test` example
// stopped at "flag provided but not defined"): the command line of an
// example is what follows "xdev NAME" up to a pipe, a redirect or the two
// spaces before its comment, words split as a shell splits them.
func TestHelpExamplesParse(t *testing.T) {
	e := newEnv(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, false, 80)
	n := 0
	for _, g := range commandGroups {
		for _, c := range g.commands {
			for line := range strings.Lines(c.example) {
				_, rest, ok := strings.Cut(line, "xdev "+c.name)
				if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\n' {
					continue
				}
				if i := strings.Index(rest, "  "); i >= 0 && strings.TrimSpace(rest[:i]) != "" || i == 0 {
					rest = rest[:max(i, 0)]
				}
				if i := strings.IndexAny(rest, "|>"); i >= 0 {
					rest = rest[:i]
				}
				args := shellWords(t, rest)
				if _, err := parseOptions(e, c, args); err != nil {
					t.Errorf("xdev help %s: the example %q: %v", c.name, strings.TrimSpace(line), err)
				}
				n++
			}
		}
	}
	if n < 40 {
		t.Errorf("parsed %d examples; the help has more", n)
	}
}

// shellWords splits s as sh does words: blanks separate them, quotes
// group them, $VAR stands for a word.
func shellWords(t *testing.T, s string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("an unclosed quote in %q", s)
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// TestEnvOwnsTheWorld: a command's working directory is its env's, not
// the process's: `list` with no --all lists the project the env says it
// is in (the samples' /home/dev/proj), and none from elsewhere.
func TestEnvOwnsTheWorld(t *testing.T) {
	t.Setenv("HOME", "/home/dev") // the samples' project directory is named from inside it
	for _, tc := range []struct {
		wd   string
		want bool
	}{{"/home/dev/proj", true}, {"/nowhere", false}} {
		var out, errb bytes.Buffer
		e := newEnv(strings.NewReader(""), &out, &errb, false, 80)
		e.Getwd = func() (string, error) { return tc.wd, nil }
		if code := run(e, []string{"list", "--data-dir", "../../internal/session/testdata/omp"}); code != 0 {
			t.Fatalf("list in %s: exit %d: %s", tc.wd, code, errb.String())
		}
		if got := strings.Contains(out.String(), "Counting files"); got != tc.want {
			t.Errorf("list in %s lists the samples: %v, want %v:\n%s", tc.wd, got, tc.want, out.String())
		}
	}
}

// TestCommandsGoThroughTheCatalog: the commands parse, call and render;
// where sessions live, and how a place is read, is the catalog's. No
// command file imports the packages under it that know one place each.
func TestCommandsGoThroughTheCatalog(t *testing.T) {
	below := []string{"internal/pgstore", "internal/foreign", "internal/search"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range below {
				if strings.HasSuffix(path, "/"+b) {
					t.Errorf("%s imports %s: reach it through internal/catalog", name, path)
				}
			}
		}
	}
}
