package catalog

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// rowsDiffer says why two listings differ ("" when they do not): every
// field, errors by their text.
func rowsDiffer(got, want []Row) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d sessions, want %d", len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if (g.Err == nil) != (w.Err == nil) || g.Err != nil && g.Err.Error() != w.Err.Error() {
			return fmt.Sprintf("%s: error %v, want %v", w.Path, g.Err, w.Err)
		}
		g.Err, w.Err = nil, nil
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("session %d:\n got %+v\nwant %+v", k, g, w)
		}
	}
	return ""
}

// TestRelistKeepsAListing holds Relist to ListHarness over generated
// histories of a data dir: after each change (new sessions, appends,
// retitles, subagent transcripts, deletions, rewrites by rename, a file
// replaced by a FIFO or a symlink, files that are not sessions, new
// projects, session directories removed whole), the listing kept from
// the paths a watcher would name equals a whole listing, with and
// without subagents; and only a change a whole listing may be needed
// for (a directory made or removed) asks for one.
func TestRelistKeepsAListing(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the list cache's strings, kept in the rows, are part of what is checked
	relisted, whole := 0, 0
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 28))
		dataDir := filepath.Join(t.TempDir(), "agent")
		root := session.SessionsDir(dataDir)
		c, err := New(Config{DataDir: dataDir, Explicit: true})
		if err != nil {
			t.Fatal(err)
		}
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		touch := func(p string) {
			clock = clock.Add(time.Duration(rng.IntN(3)) * time.Second) // ties too: the path orders them
			os.Chtimes(p, clock, clock)
		}
		var live []string
		n := 0
		newSession := func(cwd string) string {
			n++
			p := filepath.Join(root, session.Slug(cwd), session.FileName(clock, fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", n)))
			s, err := session.Create(p, session.NewOptions{Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(fmt.Sprintf("task %d", n)), Timestamp: 1})
			s.Close()
			touch(p)
			live = append(live, p)
			return p
		}
		projects := []string{"/work/a", "/work/b"}
		for _, cwd := range projects {
			os.MkdirAll(filepath.Join(root, session.Slug(cwd)), 0o700)
			newSession(cwd)
		}
		pick := func() string { return live[rng.IntN(len(live))] }
		// Each step changes the tree and returns the paths a watcher names,
		// and whether a whole listing may be needed to see the change (a
		// directory made, or removed with sessions in it): otherwise
		// Relist must not ask for one.
		steps := []func() (changed []string, needsWhole bool){
			func() ([]string, bool) { return []string{newSession(projects[rng.IntN(len(projects))])}, false },
			func() ([]string, bool) {
				cwd := fmt.Sprintf("/work/new%d", n)
				projects = append(projects, cwd)
				p := newSession(cwd)
				return []string{filepath.Dir(p), p}, true
			},
			func() ([]string, bool) {
				p := pick()
				if s, err := session.Open(p, nil); err == nil {
					s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), StopReason: ai.StopEnd, Timestamp: 2})
					s.Close()
				}
				touch(p)
				return []string{p}, false
			},
			func() ([]string, bool) {
				p := pick()
				if s, err := session.Open(p, nil); err == nil {
					s.SetTitle(fmt.Sprintf("title %d", rng.IntN(100)), session.TitleManual)
					s.Close()
				}
				touch(p)
				return []string{p}, false
			},
			func() ([]string, bool) {
				// A subagent's transcript; the first one makes its directory.
				parent := pick()
				dir := strings.TrimSuffix(parent, ".jsonl")
				_, err := os.Stat(dir)
				made := err != nil
				os.MkdirAll(dir, 0o700)
				p := filepath.Join(dir, fmt.Sprintf("Task%d.jsonl", n))
				if s, err := session.Create(p, session.NewOptions{Cwd: "/work/a", ParentSession: parent}); err == nil {
					s.Close()
				}
				touch(p)
				if made {
					return []string{dir, p}, true
				}
				return []string{p}, false
			},
			func() ([]string, bool) {
				p := pick()
				os.Remove(p)
				return []string{p}, false
			},
			func() ([]string, bool) {
				// A session's directory removed whole (or renamed away): only
				// the directory is named.
				dir := strings.TrimSuffix(pick(), ".jsonl")
				if _, err := os.Stat(dir); err != nil {
					return nil, false
				}
				os.RemoveAll(dir)
				return []string{dir}, true
			},
			func() ([]string, bool) {
				p := pick()
				if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
					return nil, false // never a read of a FIFO an earlier step made
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return nil, false
				}
				tmp := p + ".tmp"
				os.WriteFile(tmp, append(b, `{"type":"label","id":"l1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"x"}`+"\n"...), 0o600)
				os.Rename(tmp, p)
				touch(p)
				return []string{tmp, p}, false
			},
			func() ([]string, bool) {
				p := pick()
				os.Remove(p)
				syscall.Mkfifo(p, 0o600)
				return []string{p}, false
			},
			func() ([]string, bool) {
				p := pick()
				os.Remove(p)
				os.Symlink("/etc/passwd", p)
				return []string{p}, false
			},
			func() ([]string, bool) {
				dir := filepath.Dir(pick())
				a := filepath.Join(dir, fmt.Sprintf("notes%d.jsonl", n))
				b := filepath.Join(dir, fmt.Sprintf("notes%d.txt", n))
				os.WriteFile(a, []byte(`{"hello":"world"}`+"\n"), 0o600)
				os.WriteFile(b, []byte("not a session\n"), 0o600)
				n++
				return []string{a, b}, false
			},
		}
		for _, opts := range []ListOptions{{Subagents: true}, {}} {
			prev, err := c.ListHarness(Xdev, opts)
			if err != nil {
				t.Fatal(err)
			}
			for step := range 30 {
				k := rng.IntN(len(steps))
				changed, needsWhole := steps[k]()
				want, err := c.ListHarness(Xdev, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := c.Relist(Xdev, prev, changed, opts)
				switch {
				case ok:
					if d := rowsDiffer(got, want); d != "" {
						t.Fatalf("seed %d step %d (kind %d, %+v): Relist(%q): %s", seed, step, k, opts, changed, d)
					}
					relisted++
				case !needsWhole:
					t.Errorf("seed %d step %d (kind %d): Relist(%q) asked for a whole listing", seed, step, k, changed)
				default:
					whole++
				}
				prev = want
			}
		}
	}
	t.Logf("%d changes relisted, %d whole", relisted, whole)
	if relisted < 1000 || whole < 100 {
		t.Errorf("%d changes relisted, %d whole: the histories do not cover both", relisted, whole)
	}
	if _, ok := (&Catalog{}).Relist(Claude, nil, nil, ListOptions{}); ok {
		t.Error("Relist of another harness's sessions did not ask for a whole listing")
	}
}
