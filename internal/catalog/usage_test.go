package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// usageWorld writes sessions of several harnesses in temp dirs, each
// model call it makes once, copied as the harnesses copy them, and keeps
// the truth: how many calls were made and their tokens.
type usageWorld struct {
	t                  *testing.T
	r                  *rand.Rand
	dataDir            string
	claudeDir, codexDR string
	calls              int
	tokens             usage.Tokens
	now                time.Time
	seq                int

	claude []claudeFile
	codex  []codexFile
	omp    []string

	only           []int // the kinds of step to take, when set
	wroteC, wroteX int   // how many of claude and codex are on disk
}

// flush writes the sessions not yet on disk.
func (w *usageWorld) flush() {
	for _, f := range w.claude[w.wroteC:] {
		w.write(f.path, f.lines)
	}
	for _, f := range w.codex[w.wroteX:] {
		w.write(f.path, f.lines)
	}
	w.wroteC, w.wroteX = len(w.claude), len(w.codex)
}

type claudeFile struct {
	path, id string
	lines    []string
}

type codexFile struct {
	path, id string
	lines    []string
	total    [3]float64 // the running total: input (with cached), cached, output
}

func (w *usageWorld) tick() string {
	w.now = w.now.Add(time.Duration(1+w.r.IntN(600)) * time.Second)
	return w.now.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (w *usageWorld) made(in, out, cr, cw float64) {
	w.calls++
	w.tokens.Add(usage.Tokens{Input: in, Output: out, CacheRead: cr, CacheWrite: cw})
}

func line(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// claudeResponses appends n responses to f, each streamed as 1 to 3 lines
// of one message id and request id, the last with the final usage.
func (w *usageWorld) claudeResponses(f *claudeFile, n int, sidechain bool, sessionID string) {
	for range n {
		w.seq++
		f.lines = append(f.lines, line(map[string]any{"type": "user", "sessionId": sessionID, "isSidechain": sidechain, "cwd": "/w/p",
			"uuid": fmt.Sprintf("u%d", w.seq), "timestamp": w.tick(), "message": map[string]any{"role": "user", "content": "go on"}}))
		in, out, cr, cw := float64(1+w.r.IntN(50)), float64(10+w.r.IntN(500)), float64(w.r.IntN(5000)), float64(w.r.IntN(900))
		parts := 1 + w.r.IntN(3)
		for k := range parts {
			o := out
			if k < parts-1 {
				o = float64(k + 1) // a streamed line's partial count
			}
			f.lines = append(f.lines, line(map[string]any{"type": "assistant", "sessionId": sessionID, "isSidechain": sidechain, "cwd": "/w/p",
				"uuid": fmt.Sprintf("a%d-%d", w.seq, k), "timestamp": w.tick(), "requestId": fmt.Sprintf("req_%d", w.seq),
				"message": map[string]any{"id": fmt.Sprintf("msg_%d", w.seq), "role": "assistant", "model": "claude-sonnet-4-20250514",
					"content": []any{map[string]any{"type": "text", "text": "done"}},
					"usage":   map[string]any{"input_tokens": in, "output_tokens": o, "cache_read_input_tokens": cr, "cache_creation_input_tokens": cw}}}))
		}
		w.made(in, out, cr, cw)
	}
}

// codexCalls appends n calls to f, each token_count event repeated 1 to
// 3 times, as Codex repeats them.
func (w *usageWorld) codexCalls(f *codexFile, n int) {
	for range n {
		in, cached, out := float64(100+w.r.IntN(5000)), 0.0, float64(1+w.r.IntN(400))
		cached = float64(w.r.IntN(int(in)))
		f.total[0] += in
		f.total[1] += cached
		f.total[2] += out
		w.made(in-cached, out, cached, 0)
		ts := w.tick()
		f.lines = append(f.lines, line(map[string]any{"timestamp": ts, "type": "turn_context", "payload": map[string]any{"model": "gpt-5.3-codex", "cwd": "/w/p"}}))
		for range 1 + w.r.IntN(3) {
			f.lines = append(f.lines, line(map[string]any{"timestamp": ts, "type": "event_msg", "payload": map[string]any{"type": "token_count",
				"info": map[string]any{"total_token_usage": map[string]any{"input_tokens": f.total[0], "cached_input_tokens": f.total[1],
					"output_tokens": f.total[2], "reasoning_output_tokens": 0, "total_tokens": f.total[0] + f.total[2]}}}}))
		}
	}
}

func (w *usageWorld) write(path string, lines []string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *usageWorld) ompCalls(s *session.Store, n int) {
	w.t.Helper()
	for range n {
		in, out := float64(1+w.r.IntN(3000)), float64(1+w.r.IntN(300))
		if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("go"), Timestamp: w.now.UnixMilli()}); err != nil {
			w.t.Fatal(err)
		}
		w.tick()
		_, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), API: "anthropic-messages",
			Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: ai.StopEnd, Timestamp: w.now.UnixMilli(),
			Usage: &ai.Usage{Input: int64(in), Output: int64(out), TotalTokens: int64(in + out)}})
		if err != nil {
			w.t.Fatal(err)
		}
		w.made(in, out, 0, 0)
	}
}

// step does one random thing a user does: a new session of a harness,
// a resume or a subagent of a Claude Code one, a fork of a Codex one, a
// fork or branch of an omp one.
func (w *usageWorld) step() {
	t := w.t
	k := w.r.IntN(7)
	if w.only != nil {
		k = w.only[w.r.IntN(len(w.only))]
	}
	switch {
	case k == 0 || len(w.claude) == 0:
		id := fmt.Sprintf("c%07d-0000-4000-8000-%012d", len(w.claude), w.r.IntN(1e9))
		f := claudeFile{path: filepath.Join(w.claudeDir, "projects", "-w-p", id+".jsonl"), id: id}
		w.claudeResponses(&f, 1+w.r.IntN(4), false, id)
		w.claude = append(w.claude, f)
	case k == 1:
		// A resume: a new file that begins with a copy of an earlier
		// session's lines (as Claude Code's --resume writes it).
		src := w.claude[w.r.IntN(len(w.claude))]
		id := fmt.Sprintf("r%07d-0000-4000-8000-%012d", len(w.claude), w.r.IntN(1e9))
		f := claudeFile{path: filepath.Join(w.claudeDir, "projects", "-w-p", id+".jsonl"), id: id}
		for _, l := range src.lines {
			f.lines = append(f.lines, strings.ReplaceAll(l, src.id, id))
		}
		w.claudeResponses(&f, 1+w.r.IntN(3), false, id)
		w.claude = append(w.claude, f)
	case k == 2:
		// A subagent: its own transcript, sidechain records of the
		// parent's session id.
		parent := w.claude[w.r.IntN(len(w.claude))]
		f := claudeFile{path: filepath.Join(w.claudeDir, "projects", "-w-p", fmt.Sprintf("agent-%d.jsonl", w.seq)), id: fmt.Sprintf("agent-%d", w.seq)}
		w.claudeResponses(&f, 1+w.r.IntN(2), true, parent.id)
		w.claude = append(w.claude, f)
	case k == 7 && w.wroteC > 0:
		// A session going on: lines appended to its file on disk.
		f := &w.claude[w.r.IntN(w.wroteC)]
		if _, err := os.Stat(f.path); err != nil || strings.HasPrefix(f.id, "agent-") {
			return // deleted, or a subagent's
		}
		n := len(f.lines)
		w.claudeResponses(f, 1+w.r.IntN(3), false, f.id)
		file, err := os.OpenFile(f.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		file.WriteString(strings.Join(f.lines[n:], "\n") + "\n")
		file.Close()
	case k == 3 || len(w.codex) == 0:
		id := fmt.Sprintf("019d%04x-aaaa-7bbb-8ccc-%012x", len(w.codex), w.r.IntN(1e9))
		ts := w.tick()
		f := codexFile{path: filepath.Join(w.codexDR, "sessions/2026/03/01", "rollout-2026-03-01T10-00-00-"+id+".jsonl"), id: id}
		f.lines = append(f.lines, line(map[string]any{"timestamp": ts, "type": "session_meta", "payload": map[string]any{"id": id, "timestamp": ts, "cwd": "/w/p"}}))
		w.codexCalls(&f, 1+w.r.IntN(4))
		w.codex = append(w.codex, f)
	case k == 4:
		// A fork: the parent's history replayed, stamped before the
		// fork's own time, the running total going on from the parent's.
		parent := w.codex[w.r.IntN(len(w.codex))]
		id := fmt.Sprintf("019d%04x-aaaa-7bbb-8ccc-%012x", len(w.codex), w.r.IntN(1e9))
		ts := w.tick()
		f := codexFile{path: filepath.Join(w.codexDR, "sessions/2026/03/02", "rollout-2026-03-02T10-00-00-"+id+".jsonl"), id: id, total: parent.total}
		f.lines = append(f.lines, line(map[string]any{"timestamp": ts, "type": "session_meta",
			"payload": map[string]any{"id": id, "forked_from_id": parent.id, "timestamp": ts, "cwd": "/w/p"}}))
		f.lines = append(f.lines, parent.lines[1:]...)
		w.codexCalls(&f, 1+w.r.IntN(3))
		w.codex = append(w.codex, f)
	case k == 5 || len(w.omp) == 0:
		path, _, err := session.NewSessionPath(w.dataDir, "/w/p")
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Create(path, session.NewOptions{Cwd: "/w/p"})
		if err != nil {
			t.Fatal(err)
		}
		w.ompCalls(s, 1+w.r.IntN(4))
		s.Close()
		w.omp = append(w.omp, path)
	default:
		src := w.omp[w.r.IntN(len(w.omp))]
		var s *session.Store
		var err error
		if w.r.IntN(2) == 0 {
			s, err = session.ForkSessionInto(src, w.dataDir, "")
		} else {
			x, _ := session.OpenIndex(src, nil)
			leaf := x.ID(w.r.IntN(x.Len()))
			x.Close()
			s, err = session.ForkBranchInto(src, w.dataDir, leaf)
		}
		if err != nil {
			t.Fatal(err)
		}
		w.ompCalls(s, w.r.IntN(3))
		w.omp = append(w.omp, s.Path())
		s.Close()
	}
}

// TestUsageCountsOnce: over random histories of Claude Code sessions
// (streamed lines, resumes that copy earlier lines, subagents), Codex
// rollouts (repeated events, forks that replay their parent's) and omp
// sessions (forks, branches), and imports of Claude Code sessions into
// the data dir, the ledger counts every call made once: as many calls,
// and the same tokens, as were made. A report by session puts no
// subagent's calls in a row of their own.
func TestUsageCountsOnce(t *testing.T) {
	defer usagecache.SaveAlways()() // every change is written, so that every run after the first reads the cache
	var smaller atomic.Int64        // runs whose ledger of recent sessions left some out
	defer func() {
		if smaller.Load() == 0 {
			t.Error("no ledger of recent sessions left a session out")
		}
	}()
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, c, tmp := newUsageWorld(t, seed, 26)
			// Imports of some Claude Code sessions: their calls are the
			// source's. One whose source is then deleted counts instead.
			var deleted string
			for k, f := range w.claude {
				if strings.HasPrefix(f.id, "agent-") || w.r.IntN(3) != 0 {
					continue
				}
				ref, err := c.Resolve(f.path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Import(ref, ImportOptions{}); err != nil {
					t.Fatal(err)
				}
				if deleted == "" && k == len(w.claude)-1 && !strings.HasPrefix(f.id, "r") {
					deleted = f.path // nothing copies it: its calls live on in the import alone
				}
			}
			if deleted != "" {
				os.Remove(deleted)
			}
			for run := range 6 { // the second from the cache; the third after resumes, forks and appends; the fifth after appends
				if run == 4 {
					w.only = []int{7}
					for range 2 {
						w.step()
					}
				}
				if run == 2 {
					// Files changed within a second are never trusted
					// to the cache: make the earlier ones older.
					old := time.Now().Add(-time.Hour)
					filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
							os.Chtimes(p, old, old)
						}
						return nil
					})
					w.only = []int{1, 2, 4, 6, 7, 7}
					for range 1 + w.r.IntN(4) {
						w.step()
					}
					w.flush()
				}
				l, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: []Harness{Xdev, Claude, Codex}, Cache: filepath.Join(tmp, "cache")})
				if err != nil {
					t.Fatal(err)
				}
				groups, err := l.Groups(usage.Prices())
				if err != nil {
					t.Fatal(err)
				}
				var got usage.Tokens
				n := 0
				for _, g := range groups {
					got.Add(g.Tokens)
					n += g.Calls
					if g.Rollup.Subagent {
						t.Errorf("a call of subagent %s is in a row of its own", g.Rollup.Path)
					}
				}
				if n != w.calls || !sameTokens(got, w.tokens) {
					per := map[string]int{}
					for _, g := range groups {
						per[filepath.Base(g.Session.Path)] += g.Calls
					}
					exact, _ := l.Calls()
					for _, c := range exact {
						per[filepath.Base(c.Session.Path)] -= 1
					}
					for k, v := range per {
						if v != 0 {
							t.Logf("%s: %+d", k, v)
							for _, x := range l.Sessions() {
								if filepath.Base(x.Path) == k || strings.Contains(x.Parent, k) {
									t.Logf("  %s %s id %s parent %s import %v calls %d", x.Harness, filepath.Base(x.Path), x.ID, x.Parent, x.ImportOf, len(x.Calls))
								}
							}
						}
					}
					t.Fatalf("run %d: the ledger counts %d calls, %+v; %d were made, %+v", run, n, got, w.calls, w.tokens)
				}
				calls, err := l.Calls()
				if err != nil {
					t.Fatal(err)
				}
				if len(calls) != w.calls {
					t.Fatalf("run %d: Calls counts %d calls; %d were made", run, len(calls), w.calls)
				}
				if run < 2 {
					continue
				}
				// A ledger of the sessions written in the last half
				// hour (the rest were made an hour old) counts each of
				// those as the whole ledger does.
				recent, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: []Harness{Xdev, Claude, Codex},
					Cache: filepath.Join(tmp, "cache"), ModifiedSince: time.Now().Add(-30 * time.Minute)})
				if err != nil {
					t.Fatal(err)
				}
				rgroups, err := recent.Groups(nil)
				if err != nil {
					t.Fatal(err)
				}
				bySession := func(gs []usage.Group) map[string]usage.Tokens {
					m := map[string]usage.Tokens{}
					for _, g := range gs {
						t := m[g.Rollup.Path]
						t.Add(g.Tokens)
						m[g.Rollup.Path] = t
					}
					return m
				}
				whole, part := bySession(groups), bySession(rgroups)
				for _, s := range recent.Sessions() {
					fi, err := os.Stat(s.Path)
					if err != nil || fi.ModTime().Before(time.Now().Add(-30*time.Minute)) || s.Subagent {
						continue
					}
					if whole[s.Path] != part[s.Path] {
						t.Errorf("run %d: %s counts %+v in a ledger of recent sessions, %+v in the whole", run, filepath.Base(s.Path), part[s.Path], whole[s.Path])
					}
				}
				if len(recent.Sessions()) < len(l.Sessions()) {
					smaller.Add(1)
				}
			}
		})
	}
}

// newUsageWorld is a usageWorld of seed (and stream) in a temp dir, with
// a history of 6 to 25 steps written, and a catalog of its places.
func newUsageWorld(t *testing.T, seed, stream uint64) (w *usageWorld, c *Catalog, tmp string) {
	t.Helper()
	tmp = t.TempDir()
	w = &usageWorld{t: t, r: rand.New(rand.NewPCG(seed, stream)), dataDir: filepath.Join(tmp, "agent"),
		claudeDir: filepath.Join(tmp, "claude"), codexDR: filepath.Join(tmp, "codex"),
		now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	for range 6 + w.r.IntN(20) {
		w.step()
	}
	w.flush()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	c, err := New(Config{DataDir: w.dataDir, Explicit: true, Roots: map[Harness]string{Claude: w.claudeDir, Codex: w.codexDR,
		Pi: filepath.Join(tmp, "pi"), Copilot: filepath.Join(tmp, "none"), Gemini: filepath.Join(tmp, "none"), Opencode: filepath.Join(tmp, "none")}})
	if err != nil {
		t.Fatal(err)
	}
	return w, c, tmp
}

// sameTokens compares sums added in other orders (whole numbers all, so
// exactly, but for the float64 of a sum past 2⁵³).
func sameTokens(a, b usage.Tokens) bool { return a == b }
