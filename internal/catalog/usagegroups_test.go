package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// TestUsageGroupsKept: over random histories (resumes, forks, subagents,
// imports, appends, deletions), run after run, the groups a report
// takes, kept from the last ledger where no file changed and a ledger's
// where one did, are in every view those of a ledger built anew with no
// cache, and so is the status a status line reads; and they are taken
// kept exactly where nothing changed and nothing was written too
// recently to be known by its stamp.
func TestUsageGroupsKept(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, c, tmp := newUsageWorld(t, seed, 31)
			cache := filepath.Join(tmp, "cache")
			age := func() { ageSessions(tmp) }
			steps := func() {
				for range 1 + w.r.IntN(3) {
					w.step()
				}
				w.flush()
			}
			for run, kept := range []bool{false, true, false, true, false, false, false, true, true} {
				switch run {
				case 0:
					age()
				case 2:
					steps()
					age()
				case 4:
					steps() // written a moment ago: not known by its stamp
				case 6:
					if len(w.claude) > 0 {
						os.Remove(w.claude[0].path) // gone: the sum is another
					}
					age()
				case 8:
					// Another price table or version is another file: this
					// one damaged is built again, and kept again.
					path := usagecache.CountedPath(c.UsageCacheFile(cache, hs))
					b, _ := os.ReadFile(path)
					b[len(b)/2] ^= 1
					os.WriteFile(path, b, 0o600)
					kept = false
				}
				got, st, err := c.UsageGroups(context.Background(), UsageOptions{Harnesses: hs, Cache: cache})
				if err != nil {
					t.Fatal(err)
				}
				if st.Counted != kept {
					t.Errorf("run %d: kept %v, want %v", run, st.Counted, kept)
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
					t.Errorf("run %d: %d sessions, %d skipped; want %d, %d", run, st.Sessions, st.Skipped, wst.Sessions, wst.Skipped)
				}
				for _, v := range []usage.View{usage.Daily, usage.BySession, usage.ByModel, usage.ByProject, usage.ByHarness} {
					g, w := reportLines(got, v), reportLines(want, v)
					if g != w {
						t.Fatalf("run %d, %v view:\n%s\nwant (a ledger anew):\n%s", run, v, g, w)
					}
					// The report of the groups read one at a time: kept
					// wherever the groups were (and after a ledger that
					// kept them).
					r, rst, err := c.UsageReport(context.Background(), UsageOptions{Harnesses: hs, Cache: cache}, usage.ReportOptions{View: v, Location: time.UTC})
					if err != nil {
						t.Fatal(err)
					}
					if g := reportText(r); g != w || st.Counted && !rst.Counted || rst.Sessions != wst.Sessions {
						t.Fatalf("run %d, %v view, kept %v (groups %v):\n%s\nwant (a ledger anew):\n%s", run, v, rst.Counted, st.Counted, g, w)
					}
				}
				// A status line's status: of a day ago (read alone where
				// kept), and of the world's day (before the kept status's
				// span: made from the groups), naming one session.
				for _, since := range []time.Time{time.Now().Add(-10 * time.Hour), w.now.Add(-48 * time.Hour)} {
					q := StatusQuery{}
					if len(w.omp) > 0 {
						q.Paths = []string{w.omp[w.r.IntN(len(w.omp))]}
					}
					status, _, err := c.UsageStatus(context.Background(), UsageOptions{Harnesses: hs, Cache: cache}, since, q)
					if err != nil {
						t.Fatal(err)
					}
					ms := float64(since.UnixMilli())
					if g, w := statusLine(status, q, ms), statusLine(usage.NewStatus(want, ms), q, ms); g != w {
						t.Fatalf("run %d: status since %v:\n%s\nwant:\n%s", run, since, g, w)
					}
				}
			}
		})
	}
}

// reportLines is a report of groups in view, as lines of text.
func reportLines(groups []usage.Group, v usage.View) string {
	return reportText(usage.NewReport(groups, usage.ReportOptions{View: v, Location: time.UTC}))
}

// reportText is a report as lines of text.
func reportText(r usage.Report) string {
	var b strings.Builder
	for _, row := range append(r.Rows, r.Total) {
		fmt.Fprintf(&b, "%s %d calls %.9g$ %d unpriced %+v %v first %v last %v", row.Key, row.Calls, row.Cost, row.Unpriced, row.Tokens, row.Harnesses, row.First, row.Last)
		for _, m := range row.Models {
			fmt.Fprintf(&b, " [%s %d calls %.9g$ %+v]", m.Model, m.Calls, m.Cost, m.Tokens)
		}
		if s := row.Session; s != nil {
			fmt.Fprintf(&b, " %s %s %s %q", s.Harness, s.ID, s.Project, s.Title)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// statusLine is what a status line takes of a status: the sum of the
// session q names (by path) and of the latest call's, and the recent
// groups' sum since since (Unix ms).
func statusLine(st usage.Status, q StatusQuery, since float64) string {
	var b strings.Builder
	if l := st.Latest(); l != nil {
		fmt.Fprintf(&b, "latest: %+v\n", l.Totals(usage.Auto))
	}
	for _, g := range st.Sessions {
		if len(q.Paths) > 0 && g.Rollup.Path == q.Paths[0] {
			fmt.Fprintf(&b, "named: %+v\n", g.Totals(usage.Auto))
		}
	}
	var recent usage.Totals
	n := 0
	for _, g := range st.Recent {
		if g.Last >= since {
			t := g.Totals(usage.Auto)
			recent.Cost += t.Cost
			recent.Calls += t.Calls
			n++
		}
	}
	fmt.Fprintf(&b, "recent: %d groups, %d calls, %.9g$\n", n, recent.Calls, recent.Cost)
	return b.String()
}

// TestUsageRolloutNotListed: a Codex rollout its listing leaves out (no
// session_meta: not a session omp lists), named by the usage walk from
// its file only, is no session of a ledger and nothing skipped, kept
// groups or not; one the listing keeps is read.
func TestUsageRolloutNotListed(t *testing.T) {
	w, c, tmp := newUsageWorld(t, 7, 41)
	hs := []Harness{Codex}
	before, bst, err := c.UsageGroups(context.Background(), UsageOptions{Harnesses: hs})
	if err != nil {
		t.Fatal(err)
	}
	w.write(filepath.Join(w.codexDR, "sessions/2026/03/03", "rollout-2026-03-03T10-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"),
		[]string{`{"timestamp":"2026-03-03T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}}`})
	cache := filepath.Join(tmp, "cache")
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(w.codexDR, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	for run := range 3 {
		after, st, err := c.UsageGroups(context.Background(), UsageOptions{Harnesses: hs, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions != bst.Sessions || st.Skipped != bst.Skipped || reportLines(after, usage.BySession) != reportLines(before, usage.BySession) {
			t.Fatalf("run %d: %d sessions, %d skipped; want %d, %d", run, st.Sessions, st.Skipped, bst.Sessions, bst.Skipped)
		}
		if st.Counted != (run > 0) {
			t.Errorf("run %d: kept %v", run, st.Counted)
		}
	}
}

// TestServerTakesKeptGroups: a server takes the groups a server's ledger
// kept (the cache whole) where nothing changed since, never those of a
// terminal's ledger (whose cache a server cannot vouch for); and builds
// the ledger again once a file changed.
func TestServerTakesKeptGroups(t *testing.T) {
	w, c, tmp := newUsageWorld(t, 11, 43)
	hs := []Harness{Xdev, Claude, Codex}
	cache := filepath.Join(tmp, "cache")
	age := func() { ageSessions(tmp) }
	age()
	server := UsageOptions{Harnesses: hs, Cache: cache, Vouching: true}
	terminal := UsageOptions{Harnesses: hs, Cache: cache, NoLive: true}
	for _, step := range []struct {
		what string
		opts UsageOptions
		kept bool
	}{
		{"a terminal's first", terminal, false},
		{"a server, on a terminal's groups", server, false},
		{"the server again", server, true},
		{"a terminal, on a server's groups", terminal, true},
		{"a server, after a change", server, false},
	} {
		if step.what == "a server, after a change" {
			w.step()
			w.flush()
			age()
		}
		got, st, err := c.UsageGroups(context.Background(), step.opts)
		if err != nil {
			t.Fatal(err)
		}
		if st.Counted != step.kept {
			t.Errorf("%s: kept %v, want %v", step.what, st.Counted, step.kept)
		}
		l, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := l.Groups(nil)
		if g, w := reportLines(got, usage.BySession), reportLines(want, usage.BySession); g != w {
			t.Fatalf("%s:\n%s\nwant\n%s", step.what, g, w)
		}
	}
}

// ageSessions makes every session file under dir an hour old, so that a
// ledger knows them by their stamps.
func ageSessions(dir string) {
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}
