package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// TestUsageChangedIsWalked: a server told which files changed since its
// last ledger (UsageOptions.Changed, as its watcher names them) gives,
// round after round of random histories, the groups of a ledger built
// anew with no cache, in every view and in the status, whether it read
// the files named alone or walked: omp sessions that grow, new ones (in
// a project new or not, of no calls or some), forks and branches,
// sessions removed, a project's directory removed (its files named, or
// only the directory, as a rename away shows it), lockfiles and temp
// files come and gone, files that are no sessions; and Claude Code and
// Codex sessions going on beside them (their files named alone too,
// where a recount may take them).
func TestUsageChangedIsWalked(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	aged := time.Now().Add(-time.Hour)
	told, walked, recounted, patched, toldForeign := 0, 0, 0, 0, 0
	// As many seeds under the race detector: a few are needed for every
	// way to come up, and a seed takes a tenth of a second.
	for seed := range uint64(max(testscale.N(6, 20), 6)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, c, tmp := newUsageWorld(t, seed, 91)
			roots := map[string]Harness{w.dataDir: Xdev, w.claudeDir: Claude, w.codexDR: Codex}
			opts := UsageOptions{Harnesses: hs, Cache: filepath.Join(tmp, "cache"), Vouching: true}
			ageSessionsTo(tmp, aged)
			before := filesUnder(roots)
			first, _, err := c.UsageGroups(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			kept := map[usage.View]usage.Report{}
			for _, v := range []usage.View{usage.Daily, usage.ByModel, usage.ByProject, usage.ByHarness} {
				kept[v] = usage.NewReport(first, usage.ReportOptions{View: v, Location: time.UTC})
			}
			for round := range 12 {
				renamed := false // a directory moved away: its files are not named
				kinds := 14
				if w.r.IntN(2) == 0 {
					kinds = 10 // the data dir's alone
				}
				for range 1 + w.r.IntN(3) {
					switch k := w.r.IntN(kinds); {
					case k < 5:
						w.growOmp()
					case k == 5:
						w.omp = append(w.omp, w.newOmp("/w/p", w.r.IntN(3)))
					case k == 6:
						w.seq++
						w.omp = append(w.omp, w.newOmp(fmt.Sprintf("/w/new%d", w.seq), 1+w.r.IntN(2)))
					case k == 7 && len(w.omp) > 2:
						at := w.r.IntN(len(w.omp))
						os.Remove(w.omp[at])
						w.omp = append(w.omp[:at], w.omp[at+1:]...)
					case k == 8 && len(w.omp) > 2:
						// A project's directory removed, or moved away.
						dir := filepath.Dir(w.omp[w.r.IntN(len(w.omp))])
						if w.r.IntN(2) == 0 {
							os.RemoveAll(dir)
						} else {
							os.Rename(dir, filepath.Join(tmp, fmt.Sprintf("away%d", round)))
							renamed = true
						}
						var kept []string
						for _, p := range w.omp {
							if filepath.Dir(p) != dir {
								kept = append(kept, p)
							}
						}
						w.omp = kept
					case k == 9 && len(w.omp) > 0:
						// What comes and goes beside the sessions: a lockfile, a
						// temp file renamed away, a file that is no session.
						dir := filepath.Dir(w.omp[w.r.IntN(len(w.omp))])
						for _, name := range []string{".x.jsonl.lock", ".x.jsonl.xdev-1-1.tmp"} {
							p := filepath.Join(dir, name)
							os.WriteFile(p, []byte("{}\n"), 0o600)
							os.Remove(p)
						}
						os.WriteFile(filepath.Join(dir, fmt.Sprintf("notes%d.txt", round)), []byte("x"), 0o600)
					case k == 10:
						w.only = []int{7} // a Claude Code session goes on
						w.step()
					case k == 11:
						w.growCodex()
					default:
						w.only = nil // a new session of any harness, a resume, a fork
						w.step()
					}
				}
				w.only = nil
				w.flush()
				ageSessionsTo(tmp, aged)
				after := filesUnder(roots)
				opts.Changed = changedFiles(before, after, roots, renamed)
				before = after
				foreignChanged := len(opts.Changed[Claude])+len(opts.Changed[Codex]) > 0
				// A server keeping reports patches them with the sessions
				// counted again, where it may (UsageRecounts); else it is
				// given the groups.
				var got []usage.Group
				var st UsageStats
				rs, rst, patch := c.UsageRecounts(context.Background(), opts)
				if patch && w.r.IntN(3) > 0 {
					st = rst
					var was, now []usage.Group
					for _, r := range rs {
						was, now = append(was, r.Was...), append(now, r.Now...)
					}
					for v, r := range kept {
						kept[v] = r.Patch(usage.ReportOptions{View: v, Location: time.UTC}, was, now)
					}
					patched++
				} else {
					if patch {
						// What it counted again is in the groups kept: the
						// server that did not patch takes them whole.
						opts.Changed = map[Harness][]string{}
					}
					if got, st, err = c.UsageGroups(context.Background(), opts); err != nil {
						t.Fatal(err)
					}
					for v := range kept {
						kept[v] = usage.NewReport(got, usage.ReportOptions{View: v, Location: time.UTC})
					}
				}
				if len(st.Walked) == 0 {
					told++
					if foreignChanged && st.Recounted > 0 {
						toldForeign++
					}
					if st.Recounted > 0 {
						recounted++
					}
				} else {
					walked++
				}
				l, wst, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs})
				if err != nil {
					t.Fatal(err)
				}
				want, err := l.Groups(nil)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("round %d (changed %v; walked %v, recounted %d)", round, opts.Changed, st.Walked, st.Recounted)
				if st.Sessions != wst.Sessions || st.Skipped != wst.Skipped {
					t.Errorf("%s: %d sessions, %d skipped; want %d, %d", what, st.Sessions, st.Skipped, wst.Sessions, wst.Skipped)
				}
				for v, r := range kept {
					// A patched cost may differ in its last bits, and two
					// rows of one cost then come in either order.
					if g, w := sortedLines(reportText(r)), sortedLines(reportLines(want, v)); g != w {
						t.Fatalf("%s, %v view kept:\n%s\nwant (a ledger anew):\n%s", what, v, g, w)
					}
				}
				for _, v := range []usage.View{usage.Daily, usage.BySession, usage.ByModel, usage.ByProject, usage.ByHarness} {
					if got == nil {
						break
					}
					if g, w := reportLines(got, v), reportLines(want, v); g != w {
						t.Fatalf("%s, %v view:\n%s\nwant (a ledger anew):\n%s", what, v, g, w)
					}
				}
				q := StatusQuery{Paths: []string{w.claude[w.r.IntN(len(w.claude))].path}}
				since := w.now.Add(-48 * time.Hour)
				opts.Changed = map[Harness][]string{} // nothing since
				status, st, err := c.UsageStatus(context.Background(), opts, since, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Walked) > 0 {
					t.Errorf("%s: walked %v where nothing changed", what, st.Walked)
				}
				ms := float64(since.UnixMilli())
				if g, w := statusLine(status, q, ms), statusLine(usage.NewStatus(want, ms), q, ms); g != w {
					t.Fatalf("%s: status:\n%s\nwant:\n%s", what, g, w)
				}
				// The cache holds every session as the server vouches it
				// does: a ledger from it alone reads no file.
				u := usagecache.Open(c.UsageCacheFile(opts.Cache, hs))
				for _, p := range w.omp {
					fi, err := os.Stat(p)
					if err != nil {
						t.Fatal(err)
					}
					if e, ok := u.Old[string(Xdev)+" "+p]; !ok || e.Stamp.Size != fi.Size() {
						t.Fatalf("%s: the usage cache holds %+v (%v) of %s, of %d bytes", what, e.Stamp, ok, p, fi.Size())
					}
				}
			}
		})
	}
	t.Logf("%d rounds read the files named alone (%d counted again, %d of them of Claude Code or Codex; %d patched reports), %d walked", told, recounted, toldForeign, patched, walked)
	if recounted == 0 || walked == 0 || patched == 0 || toldForeign == 0 {
		t.Errorf("%d rounds counted again from the files named, %d patched, %d walked: want some of each", recounted, patched, walked)
	}
}

// A fileState is what filesUnder saw of a path.
type fileState struct {
	dir          bool
	size, mtime  int64
	ino, harness uint64
}

// filesUnder is every file and directory under roots, by path.
func filesUnder(roots map[string]Harness) map[string]fileState {
	out := map[string]fileState{}
	for root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			st := fileState{dir: d.IsDir(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			if st.dir {
				st.size, st.mtime = 0, 0 // a directory's change is its files'
			}
			out[p] = st
			return nil
		})
	}
	return out
}

// changedFiles are the paths a watcher names between two looks at the
// roots, by the harness whose root holds them: each file made, changed
// or gone, each directory made or gone; but where renamed, those under a
// directory gone (moved away, which names the directory alone).
func changedFiles(before, after map[string]fileState, roots map[string]Harness, renamed bool) map[Harness][]string {
	var paths []string
	for p, a := range after {
		if b, ok := before[p]; !ok || b != a {
			paths = append(paths, p)
		}
	}
	var goneDirs []string
	for p, b := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
			if b.dir {
				goneDirs = append(goneDirs, p)
			}
		}
	}
	out := map[Harness][]string{}
	for _, p := range paths {
		if renamed && isUnderAny(p, goneDirs) {
			continue
		}
		for root, h := range roots {
			if strings.HasPrefix(p, root+string(filepath.Separator)) {
				out[h] = append(out[h], p)
			}
		}
	}
	return out
}

// isUnderAny reports whether path lies under one of dirs.
func isUnderAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if IsUnder(path, d) {
			return true
		}
	}
	return false
}

// sortedLines is text's lines, sorted.
func sortedLines(text string) string {
	lines := strings.Split(text, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
