package serve

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/fakeharness"
	"github.com/xdev/xdev/internal/session"
)

// TestLiveListingFollowsChanges holds a running server's listing, kept
// from the files the watcher names, to a whole listing of the same data
// dir after rounds of random changes: sessions made, appended to,
// retitled, deleted and rewritten by rename, subagents' transcripts, new
// projects, files that are not sessions. Most rounds must be kept
// without listing every project again.
func TestLiveListingFollowsChanges(t *testing.T) {
	p := newPlace(t)
	rng := rand.New(rand.NewPCG(34, 27))
	var live []string
	var stores []*session.Store
	add := func(cwd string) {
		path, s := p.newSession(t, cwd, "", fmt.Sprintf("task %d", len(live)), "done")
		live = append(live, path)
		stores = append(stores, s)
	}
	for k := range 20 {
		add(fmt.Sprintf("/w/p%d", k%3))
	}
	srv := p.serve(t)
	cat, err := catalog.New(catalog.Config{DataDir: p.data, Cwd: p.home, Roots: p.roots})
	if err != nil {
		t.Fatal(err)
	}
	changes := []func(){
		func() { add(fmt.Sprintf("/w/p%d", rng.IntN(3))) },
		func() { add(fmt.Sprintf("/w/new%d", rng.IntN(1000))) },
		func() {
			k := rng.IntN(len(live))
			if _, err := os.Stat(live[k]); err == nil {
				appendText(t, stores[k], rng.IntN(2) == 0, "more")
			}
		},
		func() {
			k := rng.IntN(len(live))
			if _, err := os.Stat(live[k]); err == nil {
				stores[k].SetTitle(fmt.Sprintf("Title %d", rng.IntN(100)), session.TitleManual)
			}
		},
		func() { os.Remove(live[rng.IntN(len(live))]) },
		func() {
			k := rng.IntN(len(live))
			b, err := os.ReadFile(live[k])
			if err != nil {
				return
			}
			tmp := live[k] + ".tmp"
			os.WriteFile(tmp, []byte(strings.Replace(string(b), "task", "rewritten task", 1)), 0o600)
			os.Rename(tmp, live[k])
		},
		func() {
			parent := live[rng.IntN(len(live))]
			dir := strings.TrimSuffix(parent, ".jsonl")
			os.MkdirAll(dir, 0o700)
			if s, err := session.Create(filepath.Join(dir, fmt.Sprintf("Task%d.jsonl", rng.IntN(1000))),
				session.NewOptions{Cwd: "/w/p0", ParentSession: parent}); err == nil {
				s.Close()
			}
		},
		func() {
			dir := filepath.Dir(live[rng.IntN(len(live))])
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("notes%d.jsonl", rng.IntN(1000))), []byte("{\"not\":\"a session\"}\n"), 0o600)
		},
	}
	for round := range 8 {
		for range 1 + rng.IntN(4) {
			changes[rng.IntN(len(changes))]()
		}
		want, err := cat.ListHarness(catalog.Xdev, catalog.ListOptions{Subagents: true})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := srv.listed(catalog.Xdev)
			d := listingDiffers(got, want)
			if d == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the server's listing is not a whole listing's after 15 s: %s", round, d)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("%d listings kept from the changed files alone", srv.relisted.Load())
	if n := srv.relisted.Load(); n < 4 {
		t.Errorf("%d of 8 rounds kept from the changed files alone", n)
	}
}

// listed is what the server lists of h's sessions now, by path.
func (s *Server) listed(h catalog.Harness) []catalog.Row {
	l := s.lib.Load()
	var out []catalog.Row
	for _, r := range slices.Concat(l.all(), l.bad) {
		if r.Harness == h {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b catalog.Row) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// listingDiffers says how got differs from the rows of want ("" when it
// does not), by path: what a page shows of each session.
func listingDiffers(got, want []catalog.Row) string {
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b catalog.Row) int { return strings.Compare(a.Path, b.Path) })
	if len(got) != len(want) {
		return fmt.Sprintf("%d sessions, want %d", len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if g.Path != w.Path || g.Title != w.Title || g.Status != w.Status || g.Size != w.Size || !g.Modified.Equal(w.Modified) ||
			g.ParentSession != w.ParentSession || g.Subagent != w.Subagent || (g.Err == nil) != (w.Err == nil) {
			return fmt.Sprintf("\n got %+v\nwant %+v", g, w)
		}
	}
	return ""
}

func paths(rows []catalog.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Path)
	}
	return out
}

// TestStartListsAgainWhatChanged: a server lists every harness as it is
// made (New), before its watches are set; once its first refresh is
// done it lists again only the harnesses whose files changed since the
// index last read them (a file written between the listing and the
// watches is seen by no watch): none where nothing changed, the data
// dir's alone where a session was written in between, which the list
// then shows.
func TestStartListsAgainWhatChanged(t *testing.T) {
	p := newPlace(t)
	p.newSession(t, "/w/a", "First", "hello", "there")
	p.serve(t).stop() // indexes every place
	quiet := p.serve(t)
	n := quiet.listedWhole.Load()
	quiet.stop()
	if n >= 2*int64(len(catalog.Every)) {
		t.Errorf("nothing changed: %d harnesses listed whole, every one twice", n)
	}
	var made string
	p.beforeRun = func(*Server) {
		made, _ = p.newSession(t, "/w/b", "Second", "written between", "the listing and the watches")
	}
	changed := p.serve(t)
	if got := changed.listedWhole.Load(); got != n+1 {
		t.Errorf("a session written between New and Run: %d harnesses listed whole, want %d (the data dir's again)", got, n+1)
	}
	if changed.lib.Load().atPath(made) == nil {
		t.Errorf("%s, written between New and Run, is not listed", made)
	}
}

// TestLiveListingFollowsOthers: a running server keeps the listing of
// Claude Code and Codex from the transcripts the watcher names (new ones,
// appended to, removed), as a whole listing has them, without listing
// either harness whole again.
func TestLiveListingFollowsOthers(t *testing.T) {
	p := newPlace(t)
	d := &fakeharness.Dirs{Claude: p.roots[catalog.Claude], Codex: p.roots[catalog.Codex], Clock: time.Now().Add(-time.Hour)}
	d.Step = func() time.Duration { return time.Second }
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		must(d.Transcript("-w-p", "first"))
		must(d.Rollout("01", true, "first"))
	}
	srv := p.serve(t)
	cat, err := catalog.New(catalog.Config{DataDir: p.data, Cwd: p.home, Roots: p.roots})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 8))
	changes := []func(){
		func() { must(d.Transcript("-w-p", "new")) },
		func() { must(d.Rollout("01", true, "new")) },
		func() {
			path := d.Transcripts[rng.IntN(len(d.Transcripts))]
			must("", d.Write(path, fakeharness.TitleLine(fakeharness.TranscriptID(path), fmt.Sprint("title ", rng.IntN(100)))))
		},
		func() {
			path := d.Rollouts[rng.IntN(len(d.Rollouts))]
			must("", d.Write(path, d.CodexEvent("agent_message", "done")))
		},
		func() { os.Remove(d.Transcripts[rng.IntN(len(d.Transcripts))]) },
	}
	deadline := time.Now().Add(30 * time.Second)
	for !srv.ready.Load() || srv.lib.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * settle)
	whole := srv.listedWhole.Load()
	for round := range 6 {
		for range 1 + rng.IntN(3) {
			changes[rng.IntN(len(changes))]()
		}
		for _, h := range []catalog.Harness{catalog.Claude, catalog.Codex} {
			want, err := cat.ListHarness(h, catalog.ListOptions{Subagents: true})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				d := listingDiffers(byPath(srv.listed(h)), byPath(want))
				if d == "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: the server's %s listing is not a whole listing's after 15 s: %s", round, h.Name(), d)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	if got := srv.listedWhole.Load(); got != whole {
		t.Errorf("%d harnesses listed whole again after the start; want none", got-whole)
	}
}

// byPath is rows by path: the order two listings of equal times differ
// in.
func byPath(rows []catalog.Row) []catalog.Row {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b catalog.Row) int { return strings.Compare(a.Path, b.Path) })
	return rows
}
