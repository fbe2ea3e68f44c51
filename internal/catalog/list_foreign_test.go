package catalog

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRelistForeignKeepsAListing holds Relist to ListHarness over
// generated histories of a Claude Code and a Codex dir: after each change
// (new transcripts and rollouts, in new projects and days too, appends,
// titles, subagents' beside and nested, rollouts archived or of no
// session_meta, removals, a FIFO or a symlink in a transcript's place,
// files that are no transcript), the listing kept from the paths a
// watcher would name (a directory made names its files) equals a whole
// listing, with and without subagents; a change of what the listing reads
// besides (history.jsonl, session_index.jsonl) or a directory removed
// asks for a whole one, and nothing else does.
func TestRelistForeignKeepsAListing(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	relisted, whole := 0, 0
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 41))
		tmp := t.TempDir()
		claude, codex := filepath.Join(tmp, "claude"), filepath.Join(tmp, "codex")
		t.Setenv("HOME", filepath.Join(tmp, "home"))
		c, err := New(Config{DataDir: filepath.Join(tmp, "agent"), Explicit: true, Roots: map[Harness]string{Claude: claude, Codex: codex}})
		if err != nil {
			t.Fatal(err)
		}
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		n := 0
		write := func(p string, lines ...string) {
			if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
				return // never an open of a FIFO an earlier step made
			}
			os.MkdirAll(filepath.Dir(p), 0o700)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(strings.Join(lines, "\n") + "\n")
			f.Close()
			clock = clock.Add(time.Duration(rng.IntN(3)) * time.Second) // ties too
			os.Chtimes(p, clock, clock)
		}
		var transcripts, rollouts []string
		ts := func() string { return clock.Format("2006-01-02T15:04:05.000Z") }
		claudeLine := func(id, text string) string {
			return fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/w/p","uuid":"u%d","timestamp":%q,"message":{"role":"user","content":%q}}`, id, n, ts(), text)
		}
		newTranscript := func(project string) string {
			n++
			id := fmt.Sprintf("c%07d-0000-4000-8000-000000000000", n)
			p := filepath.Join(claude, "projects", project, id+".jsonl")
			write(p, claudeLine(id, fmt.Sprint("task ", n)))
			transcripts = append(transcripts, p)
			return p
		}
		newRollout := func(day string, meta bool) string {
			n++
			id := fmt.Sprintf("019d%04x-aaaa-7bbb-8ccc-%012x", n, n)
			p := filepath.Join(codex, "sessions", "2026", "03", day, "rollout-2026-03-01T10-00-00-"+id+".jsonl")
			first := fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":"/w/p"}}`, ts(), id, ts())
			if !meta {
				first = fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`, ts())
			}
			write(p, first, fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"task %d"}}`, ts(), n))
			rollouts = append(rollouts, p)
			return p
		}
		newTranscript("-w-p")
		newRollout("01", true)
		pick := func(ps []string) string { return ps[rng.IntN(len(ps))] }
		type step func() (h Harness, changed []string, needsWhole bool)
		steps := []step{
			func() (Harness, []string, bool) { return Claude, []string{newTranscript("-w-p")}, false },
			func() (Harness, []string, bool) { // a new project: its directory's files named
				return Claude, []string{newTranscript(fmt.Sprintf("-w-new%d", n))}, false
			},
			func() (Harness, []string, bool) {
				p := pick(transcripts)
				id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
				line := claudeLine(id, "more")
				if rng.IntN(2) == 0 {
					line = fmt.Sprintf(`{"type":"custom-title","customTitle":"title %d","sessionId":%q}`, rng.IntN(100), id)
				}
				write(p, line)
				return Claude, []string{p}, false
			},
			func() (Harness, []string, bool) { // a subagent's, beside or nested
				p := pick(transcripts)
				dir := filepath.Dir(p)
				if filepath.Base(dir) == "subagents" {
					return Claude, nil, false
				}
				n++
				sub := filepath.Join(dir, fmt.Sprintf("agent-%d.jsonl", n))
				if rng.IntN(2) == 0 {
					sub = filepath.Join(strings.TrimSuffix(p, ".jsonl"), "subagents", fmt.Sprintf("agent-%d.jsonl", n))
				}
				write(sub, claudeLine(strings.TrimSuffix(filepath.Base(p), ".jsonl"), "sub task"))
				transcripts = append(transcripts, sub)
				return Claude, []string{sub}, false
			},
			func() (Harness, []string, bool) {
				p := pick(transcripts)
				os.Remove(p)
				return Claude, []string{p}, false
			},
			func() (Harness, []string, bool) {
				p := pick(transcripts)
				os.Remove(p)
				if rng.IntN(2) == 0 {
					syscall.Mkfifo(p, 0o600)
				} else {
					os.Symlink("/etc/passwd", p)
				}
				return Claude, []string{p}, false
			},
			func() (Harness, []string, bool) { // no transcripts
				dir := filepath.Dir(pick(transcripts))
				a, b := filepath.Join(dir, fmt.Sprintf("notes%d.txt", n)), filepath.Join(claude, "projects", fmt.Sprintf("loose%d.jsonl", n))
				write(a, "not a transcript")
				write(b, claudeLine("loose", "beside the projects"))
				n++
				return Claude, []string{a, b}, false
			},
			func() (Harness, []string, bool) {
				p := filepath.Join(claude, "history.jsonl")
				write(p, fmt.Sprintf(`{"display":"typed %d","timestamp":%d,"sessionId":%q,"project":"/w/h"}`, n, clock.UnixMilli(),
					strings.TrimSuffix(filepath.Base(pick(transcripts)), ".jsonl")))
				return Claude, []string{p}, true
			},
			func() (Harness, []string, bool) { // a session's directory removed whole
				p := pick(transcripts)
				dir := strings.TrimSuffix(p, ".jsonl")
				if _, err := os.Stat(dir); err != nil {
					return Claude, nil, false
				}
				os.RemoveAll(dir)
				return Claude, []string{dir}, true
			},
			func() (Harness, []string, bool) { return Codex, []string{newRollout("01", rng.IntN(4) != 0)}, false },
			func() (Harness, []string, bool) {
				return Codex, []string{newRollout(fmt.Sprintf("%02d", 2+rng.IntN(20)), true)}, false
			},
			func() (Harness, []string, bool) {
				p := pick(rollouts)
				write(p, fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"agent_message","message":"done"}}`, ts()))
				return Codex, []string{p}, false
			},
			func() (Harness, []string, bool) { // archived: gone from one place, made in another
				p := pick(rollouts)
				q := filepath.Join(codex, "archived_sessions", filepath.Base(p))
				os.MkdirAll(filepath.Dir(q), 0o700)
				if os.Rename(p, q) != nil {
					return Codex, nil, false
				}
				rollouts = append(rollouts, q)
				return Codex, []string{p, q}, false
			},
			func() (Harness, []string, bool) {
				p := pick(rollouts)
				os.Remove(p)
				return Codex, []string{p}, false
			},
			func() (Harness, []string, bool) {
				p := filepath.Join(codex, "session_index.jsonl")
				id := strings.TrimSuffix(filepath.Base(pick(rollouts)), ".jsonl")
				id = id[len(id)-36:]
				write(p, fmt.Sprintf(`{"id":%q,"thread_name":"named %d","updated_at":%q}`, id, n, ts()))
				return Codex, []string{p}, true
			},
			func() (Harness, []string, bool) { // a day's directory removed whole
				p := pick(rollouts)
				dir := filepath.Dir(p)
				os.RemoveAll(dir)
				return Codex, []string{dir}, true
			},
		}
		byPath := func(rows []Row) []Row {
			rows = slices.Clone(rows)
			slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Path, b.Path) })
			return rows
		}
		for _, opts := range []ListOptions{{Subagents: true}, {}} {
			prev := map[Harness][]Row{}
			for _, h := range []Harness{Claude, Codex} {
				if prev[h], err = c.ListHarness(h, opts); err != nil {
					t.Fatal(err)
				}
			}
			for step := range 40 {
				k := rng.IntN(len(steps))
				h, changed, needsWhole := steps[k]()
				want, err := c.ListHarness(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := c.Relist(h, prev[h], changed, opts)
				switch {
				case ok:
					if d := rowsDiffer(byPath(got), byPath(want)); d != "" {
						t.Fatalf("seed %d step %d (kind %d, %+v): Relist(%q): %s", seed, step, k, opts, changed, d)
					}
					if needsWhole {
						t.Fatalf("seed %d step %d (kind %d): Relist(%q) took a change only a whole listing can see", seed, step, k, changed)
					}
					relisted++
				case !needsWhole:
					t.Fatalf("seed %d step %d (kind %d, %+v): Relist(%q) asked for a whole listing", seed, step, k, opts, changed)
				default:
					whole++
				}
				prev[h] = want
			}
		}
	}
	t.Logf("%d relisted, %d whole", relisted, whole)
}
