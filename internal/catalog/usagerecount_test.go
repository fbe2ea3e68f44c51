package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/testscale"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// TestUsageKeptAcrossChanges: over random histories, round after round
// of sessions going on (Claude Code transcripts, Codex rollouts and omp
// sessions that grow, resumed ones and subagents' among them) and now
// and then a new session, a fork, a resume or a file gone, the groups a
// report takes (counted again where the sessions that changed were
// counted alone, else a ledger's) are in every view, and in the status a
// status line reads, those of a ledger built anew with no cache. Sessions
// are counted again in some rounds and not in others.
func TestUsageKeptAcrossChanges(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	aged := time.Now().Add(-time.Hour)
	recounted, built := 0, 0
	for seed := range uint64(testscale.N(8, 24)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, c, tmp := newUsageWorld(t, seed, 77)
			cache := filepath.Join(tmp, "cache")
			opts := UsageOptions{Harnesses: hs, Cache: cache}
			ageSessionsTo(tmp, aged)
			if _, _, err := c.UsageGroups(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			for round := range 10 {
				for range 1 + w.r.IntN(3) {
					switch k := w.r.IntN(10); {
					case k < 4:
						w.only = []int{7} // a Claude Code session goes on
						w.step()
					case k < 6:
						w.growCodex()
					case k < 8:
						w.growOmp()
					case k == 8 && len(w.claude) > 1:
						os.Remove(w.claude[w.r.IntN(len(w.claude))].path)
					default:
						w.only = nil // a new session, a resume, a subagent, a fork
						w.step()
					}
				}
				w.only = nil
				w.flush()
				ageSessionsTo(tmp, aged)
				got, st, err := c.UsageGroups(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				if st.Recounted > 0 {
					recounted++
				} else if !st.Counted {
					built++
				}
				l, wst, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs})
				if err != nil {
					t.Fatal(err)
				}
				want, err := l.Groups(nil)
				if err != nil {
					t.Fatal(err)
				}
				if st.Sessions != wst.Sessions || st.Skipped != wst.Skipped {
					t.Errorf("round %d (recounted %d): %d sessions, %d skipped; want %d, %d", round, st.Recounted, st.Sessions, st.Skipped, wst.Sessions, wst.Skipped)
				}
				for _, v := range []usage.View{usage.Daily, usage.BySession, usage.ByModel, usage.ByProject, usage.ByHarness} {
					if g, w := reportLines(got, v), reportLines(want, v); g != w {
						t.Fatalf("round %d (recounted %d), %v view:\n%s\nwant (a ledger anew):\n%s", round, st.Recounted, v, g, w)
					}
				}
				q := StatusQuery{Paths: []string{w.claude[w.r.IntN(len(w.claude))].path}}
				since := w.now.Add(-48 * time.Hour)
				status, _, err := c.UsageStatus(context.Background(), opts, since, q)
				if err != nil {
					t.Fatal(err)
				}
				ms := float64(since.UnixMilli())
				if g, w := statusLine(status, q, ms), statusLine(usage.NewStatus(want, ms), q, ms); g != w {
					t.Fatalf("round %d: status:\n%s\nwant:\n%s", round, g, w)
				}
			}
		})
	}
	t.Logf("%d rounds counted again, %d built a ledger", recounted, built)
	if recounted == 0 || built == 0 {
		t.Errorf("%d rounds counted again, %d built a ledger: want some of each", recounted, built)
	}
}

// TestRecountRefuses: a session that changed is counted again only where
// a ledger counted it alone and it only grew; a file rewritten in place
// (the same size), a session of another lineage now, or ledger files of
// other files build a ledger. Each gives the groups of a ledger anew.
func TestRecountRefuses(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	w, c, tmp := newUsageWorld(t, 3, 5)
	cache := filepath.Join(tmp, "cache")
	opts := UsageOptions{Harnesses: hs, Cache: cache}
	counted := usagecache.CountedPath(c.UsageCacheFile(cache, hs))
	aged := time.Now().Add(-time.Hour)
	check := func(what string, recount bool) {
		t.Helper()
		checkRecount(t, c, tmp, aged, opts, what, recount)
	}
	check("first", false)
	// An omp session of its own that grows: counted again.
	path := w.newOmp("/w/q", 2)
	check("a new session", true)
	w.growOmpAt(path, 1)
	check("grown", true)
	// Rewritten in place, as long as it was: a ledger.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"go"`, `"GO"`, 1)), 0o600)
	os.Chtimes(path, aged.Add(-time.Minute), aged.Add(-time.Minute)) // another stamp, as old
	check("rewritten in place", false)
	// Its ledger files of other files: a ledger.
	w.growOmpAt(path, 1)
	files := usagecache.LedgerFilesPath(counted)
	lf, err := usagecache.ReadLedgerFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	lf.Sum.N++
	usagecache.WriteLedgerFiles(files, lf)
	check("ledger files of other files", false)
	// A fork of it: its source is no longer alone, and grows: a ledger.
	fork, err := session.ForkSessionInto(path, w.dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	check("forked", false)
	w.growOmpAt(path, 1)
	check("a source grown", false)
	// A session of its own that holds a copy of another's calls (a fork
	// whose header names no parent) is counted apart; rewritten in
	// place, larger, with its parent named, it is another lineage: its
	// copies of its parent's calls are its parent's, which a ledger
	// counts once.
	src, err := session.ForkSessionInto(path, w.dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	copyPath := src.Path()
	src.Close()
	whole, _ := os.ReadFile(copyPath)
	parent := regexp.MustCompile(`,"parentSession":"[^"]*"`)
	if !parent.Match(whole) {
		t.Fatal("a fork names no parent")
	}
	os.WriteFile(copyPath, parent.ReplaceAll(whole, nil), 0o600)
	check("a copy of its own", false)
	f, err := os.OpenFile(copyPath, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(whole)
	f.Close()
	check("its parent named", false)
	// A Codex rollout that goes on as a fork of another (a session_meta
	// naming the session it was forked from, appended): another lineage.
	if len(w.codex) < 1 {
		t.Fatal("no rollout")
	}
	w.only = []int{3} // a rollout of its own
	w.step()
	w.flush()
	check("a new rollout", true)
	x := &w.codex[len(w.codex)-1]
	w.codexCalls(x, 1)
	w.write(x.path, x.lines) // grown, written again whole: the same inode, the same bytes first
	check("a rollout grown", true)
	n := len(x.lines)
	x.lines = append(x.lines, line(map[string]any{"timestamp": w.tick(), "type": "session_meta",
		"payload": map[string]any{"id": x.id, "forked_from_id": w.codex[0].id, "timestamp": w.tick(), "cwd": "/w/p"}}))
	w.codexCalls(x, 2)
	a, err := os.OpenFile(x.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString(strings.Join(x.lines[n:], "\n") + "\n")
	a.Close()
	check("a rollout forked on", false)
}

// checkRecount ages the sessions under tmp to at, takes the groups of a
// report with opts, and checks that it counted sessions again where
// recount says, and that its groups are by session those of a ledger
// built anew with no cache.
func checkRecount(t *testing.T, c *Catalog, tmp string, at time.Time, opts UsageOptions, what string, recount bool) {
	t.Helper()
	ageSessionsTo(tmp, at)
	got, st, err := c.UsageGroups(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if (st.Recounted > 0) != recount {
		t.Errorf("%s: recounted %d, want %v", what, st.Recounted, recount)
	}
	l, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: opts.Harnesses})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := l.Groups(nil)
	if g, w := reportLines(got, usage.BySession), reportLines(want, usage.BySession); g != w {
		t.Fatalf("%s:\n%s\nwant:\n%s", what, g, w)
	}
}

// ageSessionsTo makes every session file under dir written after at as
// old as at, each time the same: a file that did not change keeps its
// stamp (the one that grew is known by its size).
func ageSessionsTo(dir string, at time.Time) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(at) {
			os.Chtimes(p, at, at)
		}
		return nil
	})
}

// TestRecountClaudeReadAgain: a Claude Code transcript that grew is
// counted again, and so it is after a ledger read it again: the usage
// cache holds its calls as they were, and a session is not one that may
// share a call with another for holding its own calls again.
func TestRecountClaudeReadAgain(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	w, c, tmp := newUsageWorld(t, 11, 2)
	opts := UsageOptions{Harnesses: hs, Cache: filepath.Join(tmp, "cache")}
	aged := time.Now().Add(-time.Hour)
	run := func(what string, recount bool) {
		t.Helper()
		checkRecount(t, c, tmp, aged, opts, what, recount)
	}
	w.only = []int{0}
	w.step() // a transcript of its own, its responses streamed
	w.only = []int{3}
	w.step() // and a rollout
	w.flush()
	run("a new transcript", false)
	grow := func() {
		f := &w.claude[len(w.claude)-1]
		n := len(f.lines)
		w.claudeResponses(f, 2, false, f.id)
		a, err := os.OpenFile(f.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.WriteString(strings.Join(f.lines[n:], "\n") + "\n")
		a.Close()
	}
	grow()
	run("grown", true)
	grow()
	// The rollout gone: a ledger, which reads the transcript again.
	if err := os.Remove(w.codex[len(w.codex)-1].path); err != nil {
		t.Fatal(err)
	}
	run("grown, beside a rollout gone", false)
	grow()
	run("grown again", true)
}

// growCodex appends calls to a Codex rollout on disk.
func (w *usageWorld) growCodex() {
	if w.wroteX == 0 {
		return
	}
	f := &w.codex[w.r.IntN(w.wroteX)]
	if _, err := os.Stat(f.path); err != nil {
		return
	}
	n := len(f.lines)
	w.codexCalls(f, 1+w.r.IntN(2))
	file, err := os.OpenFile(f.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	file.WriteString(strings.Join(f.lines[n:], "\n") + "\n")
	file.Close()
}

// growOmp appends calls to an omp session.
func (w *usageWorld) growOmp() {
	if len(w.omp) == 0 {
		return
	}
	w.growOmpAt(w.omp[w.r.IntN(len(w.omp))], 1+w.r.IntN(2))
}

// growOmpAt appends n calls to the omp session at path.
func (w *usageWorld) growOmpAt(path string, n int) {
	s, err := session.Open(path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.ompCalls(s, n)
	s.Close()
}

// newOmp writes an omp session of n calls in the data dir, of the
// project cwd, and returns its path.
func (w *usageWorld) newOmp(cwd string, n int) string {
	path, _, err := session.NewSessionPath(w.dataDir, cwd)
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := session.Create(path, session.NewOptions{Cwd: cwd})
	if err != nil {
		w.t.Fatal(err)
	}
	w.ompCalls(s, n)
	s.Close()
	return path
}

// TestRecountVouching: a server counts again too, where the groups are a
// server's, and puts the sessions it read again in the usage cache,
// which it vouches for holding every session as it is now; a terminal's
// groups (whose cache need not hold every session) it does not. A file
// that is no session of its harness (a rollout its listing leaves out),
// of which the cache holds nothing, is no reason not to.
func TestRecountVouching(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	w, c, tmp := newUsageWorld(t, 5, 9)
	cache := filepath.Join(tmp, "cache")
	junk := filepath.Join(w.codexDR, "sessions/2026/03/01", "rollout-2026-03-01T10-00-00-junk.jsonl")
	if err := os.WriteFile(junk, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	aged := time.Now().Add(-time.Hour)
	run := func(what string, vouching, recount bool) {
		t.Helper()
		checkRecount(t, c, tmp, aged, UsageOptions{Harnesses: hs, Cache: cache, Vouching: vouching, NoLive: true}, what, recount)
	}
	path := w.newOmp("/w/q", 2)
	grow := func() { w.growOmpAt(path, 1) }
	run("a terminal's ledger", false, false)
	grow()
	run("a server, on a terminal's groups", true, false)
	grow()
	run("a server, on its own", true, true)
	// The cache holds the session as it is now, as a ledger of a process
	// the server vouched to would read it with no walk.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	u := usagecache.Open(c.UsageCacheFile(cache, hs))
	if e, ok := u.Old[string(Xdev)+" "+path]; !ok || e.Stamp.Size != fi.Size() {
		t.Errorf("the usage cache holds %+v (%v) of a file of %d bytes", e.Stamp, ok, fi.Size())
	}
	counted := usagecache.CountedPath(c.UsageCacheFile(cache, hs))
	if k, err := usagecache.ReadCountedStatus(counted, StatusQuery{}); err != nil || k.Server != os.Getpid() {
		t.Errorf("the groups counted again are the server's %d: %v", k.Server, err)
	}
	grow()
	run("a terminal, on a server's groups", false, true)
}

// TestRecountNew: a session new since the groups were counted is counted
// into them where nothing links it to a session counted (its own
// transcript, rollout or omp session, one of no calls yet, which then
// grows); one linked to a session counted, to another new one or holding
// a copy of a call counted (a resume, a subagent, a fork, a branch, an
// import, a transcript of a counted session's id), or too many at once,
// builds a ledger. Each gives the groups of a ledger anew.
func TestRecountNew(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	w, c, tmp := newUsageWorld(t, 5, 9)
	opts := UsageOptions{Harnesses: hs, Cache: filepath.Join(tmp, "cache")}
	aged := time.Now().Add(-time.Hour)
	check := func(what string, recount bool) {
		t.Helper()
		checkRecount(t, c, tmp, aged, opts, what, recount)
	}
	step := func(k int) {
		w.only = []int{k}
		w.step()
		w.only = nil
		w.flush()
	}
	newClaude := func(name, id string, subagent bool, parent string) {
		f := claudeFile{path: filepath.Join(w.claudeDir, "projects", "-w-p", name+".jsonl"), id: id}
		w.claudeResponses(&f, 1+w.r.IntN(3), subagent, parent)
		w.claude = append(w.claude, f)
	}
	check("first", false)
	step(0)
	check("a new transcript", true)
	step(3)
	check("a new rollout", true)
	step(5)
	check("a new omp session", true)
	empty := w.newOmp("/w/e", 0)
	check("a new omp session of no calls", true)
	w.growOmpAt(empty, 2)
	check("it grown", true)
	step(1)
	check("a resume", false)
	step(2)
	check("a subagent", false)
	step(4)
	check("a rollout forked", false)
	step(6)
	check("an omp fork or branch", false)
	ref, err := c.Resolve(w.claude[0].path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Import(ref, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("an import", false)
	// Claude Code names a session by its file's name.
	dup := strings.Replace(w.claude[0].path, filepath.Join("projects", "-w-p"), filepath.Join("projects", "-w-q"), 1)
	os.MkdirAll(filepath.Dir(dup), 0o700)
	newClaude("../-w-q/"+w.claude[0].id, w.claude[0].id, false, w.claude[0].id)
	w.flush()
	if _, err := os.Stat(dup); err != nil {
		t.Fatal(err)
	}
	check("a transcript of a counted session's id", false)
	// A new transcript and its subagent's, listed before it or after.
	for _, id := range []string{"p0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"} {
		newClaude(id, id, false, id)
		newClaude("agent-new-"+id[:1], "agent-new-"+id[:1], true, id)
		w.flush()
		check("a new transcript and its subagent, "+id[:1], false)
	}
	// A subagent's transcript of a session not there is counted alone;
	// that session's, come later, is of its lineage.
	orphan := "b0000000-0000-4000-8000-000000000003"
	newClaude("agent-orphan", "agent-orphan", true, orphan)
	w.flush()
	check("a subagent's transcript of a session not there", true)
	newClaude(orphan, orphan, false, orphan)
	w.flush()
	check("that session's transcript", false)
	for range maxRecount + 1 {
		step(3)
	}
	check("too many new", false)
	step(0)
	step(3)
	step(5)
	check("three new", true)
}
