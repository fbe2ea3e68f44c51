package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
)

// fakeSource is a harness's source holding the sessions it is given.
type fakeSource struct {
	harness, root string
	sessions      []foreign.Session
}

func (f fakeSource) Harness() string { return f.harness }
func (f fakeSource) Root() string    { return f.root }
func (f fakeSource) Usage(s foreign.Session) (usage.Session, error) {
	return usage.Session{Harness: f.harness, Path: s.Path, ID: s.ID}, nil
}
func (f fakeSource) List(subagents bool) ([]foreign.Session, error) {
	var out []foreign.Session
	for _, s := range f.sessions {
		if subagents || !s.Subagent {
			out = append(out, s)
		}
	}
	return out, nil
}
func (f fakeSource) At(path string) (foreign.Session, error) {
	for _, s := range f.sessions {
		if s.Path == path {
			return s, nil
		}
	}
	return foreign.Session{}, os.ErrNotExist
}
func (f fakeSource) Stream(foreign.Session, foreign.Purpose) foreign.Stream { return nil }

// TestResolve holds Resolve to the rule of the package comment, one case
// per rule and per way it can go wrong, with a fake source for each other
// harness.
func TestResolve(t *testing.T) {
	dataDir := t.TempDir()
	mk := func(id, cwd string) string {
		path, _, err := session.NewSessionPath(dataDir, cwd)
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Create(path, session.NewOptions{Cwd: cwd, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		return path
	}
	here := mk("01aa0000-0000-7000-8000-000000000001", "/work/here")
	mk("01ab0000-0000-7000-8000-000000000002", "/work/there")
	mk("01ad0000-0000-7000-8000-000000000004", "/work/here")
	mk("01ae0000-0000-7000-8000-000000000005", "/work/there")
	claude := fakeSource{"claude", "/fake/claude", []foreign.Session{
		{Harness: "claude", ID: "1af7fc5e-8455-4414-9ccd-011d40f70b2a", Path: "/fake/claude/projects/p/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"},
		{Harness: "claude", ID: "agent-7", Path: "/fake/claude/projects/p/agent-7.jsonl", Subagent: true},
		{Harness: "claude", ID: "bad", Path: "/fake/claude/projects/p/bad.jsonl", Err: errors.New("not a session")},
	}}
	codex := fakeSource{"codex", "/fake/codex", []foreign.Session{
		{Harness: "codex", ID: "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", Path: "/fake/codex/sessions/2026/02/23/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"},
		{Harness: "codex", ID: "1af70000-0000-7000-8000-000000000009", Path: "/fake/codex/sessions/2026/02/24/rollout-2026-02-24T10-00-00-1af70000-0000-7000-8000-000000000009.jsonl"},
	}}
	pi := fakeSource{"pi", "/fake/pi", nil}
	newCatalog := func(explicit bool) *Catalog {
		c, err := New(Config{DataDir: dataDir, Explicit: explicit, Cwd: "/work/here",
			Sources: map[Harness]foreign.Source{Claude: claude, Codex: codex, Pi: pi}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var amb *AmbiguousError
	var sessAmb *session.AmbiguousError
	for _, tc := range []struct {
		name     string
		arg      string
		explicit bool
		harness  Harness
		id       string
		err      func(error) bool
	}{
		{name: "empty", arg: "", err: func(err error) bool { return errors.Is(err, ErrEmptyArgument) }},
		{name: "data dir id", arg: "01aa0000-0000-7000-8000-000000000001", harness: Xdev, id: "01aa0000-0000-7000-8000-000000000001"},
		{name: "data dir prefix", arg: "01ab", harness: Xdev, id: "01ab0000-0000-7000-8000-000000000002"},
		{name: "data dir file name", arg: filepath.Base(here), harness: Xdev, id: "01aa0000-0000-7000-8000-000000000001"},
		{name: "data dir prefix of several here", arg: "01a", err: func(err error) bool { return errors.As(err, &sessAmb) }},
		{name: "data dir prefix in another project", arg: "01ae", harness: Xdev, id: "01ae0000-0000-7000-8000-000000000005"},
		{name: "path", arg: here, harness: Xdev, id: "01aa0000-0000-7000-8000-000000000001"},
		{name: "a directory", arg: dataDir + "/", err: func(err error) bool { return err != nil }},
		{name: "foreign exact id beats another's prefix", arg: "1af7fc5e-8455-4414-9ccd-011d40f70b2a", harness: Claude, id: "1af7fc5e-8455-4414-9ccd-011d40f70b2a"},
		{name: "foreign prefix of two harnesses'", arg: "1af7", err: func(err error) bool { return errors.As(err, &amb) && len(amb.Matches) == 2 }},
		{name: "foreign file name", arg: "rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl", harness: Codex, id: "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"},
		{name: "foreign file name prefix", arg: "rollout-2026-02-23", harness: Codex, id: "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"},
		{name: "foreign file name of several", arg: "rollout-", err: func(err error) bool { return errors.As(err, &amb) }},
		{name: "a subagent", arg: "agent-7", harness: Claude, id: "agent-7"},
		{name: "an unreadable file is no match", arg: "bad", err: func(err error) bool { return errors.Is(err, ErrNotFound) }},
		{name: "explicit data dir: no foreign", arg: "019c8a4c", explicit: true, err: func(err error) bool { return errors.Is(err, ErrNotFound) }},
		{name: "nothing", arg: "zzzz", err: func(err error) bool { return errors.Is(err, ErrNotFound) }},
	} {
		ref, err := newCatalog(tc.explicit).Resolve(tc.arg)
		switch {
		case tc.err != nil:
			if !tc.err(err) {
				t.Errorf("%s: Resolve(%q) = %+v, %v", tc.name, tc.arg, ref, err)
			}
		case err != nil:
			t.Errorf("%s: Resolve(%q): %v", tc.name, tc.arg, err)
		case ref.Harness != tc.harness || ref.ID != tc.id:
			t.Errorf("%s: Resolve(%q) = %s %s, want %s %s", tc.name, tc.arg, ref.Harness, ref.ID, tc.harness, tc.id)
		case tc.harness == Xdev && !ref.InDataDir, tc.harness != Xdev && ref.Foreign == nil:
			t.Errorf("%s: Resolve(%q) = %+v", tc.name, tc.arg, ref)
		}
	}
}

// TestOpenOmpFormat: a session in omp's format opens as it is, its path
// shown; Import refuses it.
func TestOpenOmpFormat(t *testing.T) {
	c, err := New(Config{DataDir: t.TempDir(), Sources: map[Harness]foreign.Source{Claude: fakeSource{}, Codex: fakeSource{}, Pi: fakeSource{}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := Ref{Harness: Xdev, Path: "/d/sessions/p/x.jsonl", InDataDir: true}
	r, err := c.Open(t.Context(), ref)
	if err != nil || r.Path != ref.Path || r.Shown != ref.Path || r.Converted {
		t.Errorf("Open = %+v, %v", r, err)
	}
	if _, err := c.Import(ref, ImportOptions{}); !errors.Is(err, ErrOmpFormat) {
		t.Errorf("Import of an omp-format session: %v", err)
	}
}

// TestListHarness: another harness's listing, by the catalog's rules: only
// this project's sessions when a cwd is given (a file that is not a
// session is listed wherever it lies, to be reported), subagents only when
// asked for, and a harness not on this machine lists nothing.
func TestListHarness(t *testing.T) {
	src := fakeSource{"claude", "/fake/claude", []foreign.Session{
		{Harness: "claude", ID: "a", Cwd: "/work/a", Path: "/fake/claude/projects/a/a.jsonl"},
		{Harness: "claude", ID: "b", Cwd: "/work/b", Path: "/fake/claude/projects/b/b.jsonl"},
		{Harness: "claude", ID: "sub", Cwd: "/work/a", Path: "/fake/claude/projects/a/a/subagents/agent-1.jsonl", Subagent: true},
		{Harness: "claude", ID: "bad", Path: "/fake/claude/projects/c/bad.jsonl", Err: errors.New("not a session")},
	}}
	c, err := New(Config{DataDir: t.TempDir(), Sources: map[Harness]foreign.Source{Claude: src, Codex: nil, Pi: fakeSource{}}})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(rows []Row) (out []string) {
		for _, r := range rows {
			if r.Harness != Claude {
				t.Errorf("row %s of harness %s", r.ID, r.Harness)
			}
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		opts ListOptions
		want string
	}{
		{ListOptions{}, "a b bad"},
		{ListOptions{Cwd: "/work/a"}, "a bad"},
		{ListOptions{Cwd: "/work/a", Subagents: true}, "a sub bad"},
		{ListOptions{Cwd: "/nowhere"}, "bad"},
	} {
		rows, err := c.ListHarness(Claude, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ids(rows), " "); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.opts, got, tc.want)
		}
	}
	if rows, err := c.ListHarness(Codex, ListOptions{}); err != nil || len(rows) != 0 {
		t.Errorf("a harness not here: %v, %v", rows, err)
	}
}
