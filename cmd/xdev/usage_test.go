package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

// usageFixtures lays out the real fixtures of every harness in a temp
// dir as each harness keeps them, points xdev at them (and at empty data
// dirs, a fresh cache and home) and returns the environment ccusage
// reads the same copies by.
func usageFixtures(t *testing.T) (ccusageEnv []string) {
	t.Helper()
	real := realfixtures.Dir(t)
	tmp := t.TempDir()
	cp := func(src, dst string) {
		t.Helper()
		if err := os.CopyFS(dst, os.DirFS(filepath.Join(real, src))); err != nil {
			t.Fatal(err)
		}
	}
	cp("claude", filepath.Join(tmp, "claude/projects"))
	cp("codex", filepath.Join(tmp, "codex/sessions"))
	cp("copilot", filepath.Join(tmp, "copilot"))
	cp("gemini", filepath.Join(tmp, "gemini-home/.gemini"))
	cp("opencode-sqlite", filepath.Join(tmp, "xdg/opencode"))
	cp("qwen", filepath.Join(tmp, "qwen"))
	cp("kimi", filepath.Join(tmp, "kimi"))
	// Goose's one real database records no tokens (schema 5, no model):
	// a hand-made one of a newer schema, which names each session's model
	// as ccusage reads it.
	newer, err := os.ReadFile("../../internal/foreign/testdata/goose/newer.sql")
	if err != nil {
		t.Fatal(err)
	}
	gooseDB := filepath.Join(tmp, "goose/data/sessions/sessions.db")
	os.MkdirAll(filepath.Dir(gooseDB), 0o700)
	if c, err := sqlite3.Open(gooseDB); err != nil {
		t.Fatal(err)
	} else if err := c.Exec(string(newer)); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	// Qwen's one real chat has no cached or thinking tokens: a hand-made
	// one of Qwen's records (internal/foreign) has them.
	hand, err := os.ReadFile("../../internal/foreign/testdata/qwen/handmade.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(tmp, "qwen/projects/-work-hand-qwen/chats"), 0o700)
	os.WriteFile(filepath.Join(tmp, "qwen/projects/-work-hand-qwen/chats/5e55a0de-hand-4000-8000-000000000001.jsonl"), hand, 0o600)
	for k, v := range map[string]string{
		"HOME": filepath.Join(tmp, "home"), "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
		"XDEV_DATA_DIR": filepath.Join(tmp, "agent"), "PI_CODING_AGENT_DIR": filepath.Join(tmp, "omp"),
		"CLAUDE_CONFIG_DIR": filepath.Join(tmp, "claude"), "CODEX_HOME": filepath.Join(tmp, "codex"),
		"COPILOT_HOME": filepath.Join(tmp, "copilot"), "GEMINI_CLI_HOME": filepath.Join(tmp, "gemini-home"),
		"XDG_DATA_HOME": filepath.Join(tmp, "xdg"), "QWEN_HOME": filepath.Join(tmp, "qwen"), "QWEN_RUNTIME_DIR": "",
		"KIMI_SHARE_DIR": filepath.Join(tmp, "kimi"), "GOOSE_PATH_ROOT": filepath.Join(tmp, "goose"),
	} {
		t.Setenv(k, v)
	}
	return []string{"CLAUDE_CONFIG_DIR=" + filepath.Join(tmp, "claude"), "CODEX_HOME=" + filepath.Join(tmp, "codex"),
		"COPILOT_HOME=" + filepath.Join(tmp, "copilot"), "GEMINI_DATA_DIR=" + filepath.Join(tmp, "gemini-home/.gemini"),
		"OPENCODE_DATA_DIR=" + filepath.Join(tmp, "xdg/opencode"), "QWEN_DATA_DIR=" + filepath.Join(tmp, "qwen"),
		"KIMI_DATA_DIR=" + filepath.Join(tmp, "kimi"), "GOOSE_PATH_ROOT=" + filepath.Join(tmp, "goose")}
}

// usageRow is a report row as both programs print it.
type usageRow struct {
	In, Out, CacheWrite, CacheRead, Total, Cost float64
}

func (r usageRow) String() string {
	return fmt.Sprintf("in %.0f out %.0f cw %.0f cr %.0f total %.0f $%.9f", r.In, r.Out, r.CacheWrite, r.CacheRead, r.Total, r.Cost)
}

// usageRows reads the rows of a usage report in ccusage's JSON (any of
// its per-harness shapes, or xdev's), keyed by date or session id.
func usageRows(t *testing.T, b []byte) map[string]usageRow {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := map[string]usageRow{}
	for name, raw := range doc {
		if name == "totals" {
			continue
		}
		var rows []map[string]any
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			num := func(k string) float64 { f, _ := r[k].(float64); return f }
			key, _ := r["sessionId"].(string)
			if key == "" {
				key, _ = r["date"].(string)
			}
			if key == "" {
				key, _ = r["period"].(string)
			}
			cost := num("totalCost") + num("costUSD")
			out[key] = usageRow{num("inputTokens"), num("outputTokens"), num("cacheCreationTokens"), num("cacheReadTokens"), num("totalTokens"), cost}
		}
	}
	return out
}

// TestUsageMatchesCcusage: on the real fixtures of every harness ccusage
// 20.0.24 reads (Claude Code, Codex, Copilot CLI, Gemini CLI, opencode,
// Qwen Code, Kimi CLI; Goose's on a hand-made database of a newer schema,
// the real one recording no tokens),
// `xdev usage daily` and `session` give ccusage's tokens and cost, day by
// day and session by session, but where xdev counts otherwise on
// purpose (docs/usage.md), each difference checked for what it is:
//
//   - Claude Code subagent transcripts (agent-*.jsonl): ccusage lists each
//     as a session; xdev adds its calls to the session that spawned it.
//   - Gemini CLI: ccusage's outputTokens leave out the thinking tokens that
//     its totalTokens and its cost count; xdev's output holds them.
//   - Qwen Code: ccusage's inputTokens count the prompt whole, the cached
//     tokens too (which it counts again as cache reads, and in its
//     total), and its outputTokens leave out the thinking; xdev's input
//     leaves the cached tokens out and its output holds the thinking, as
//     for Gemini. ccusage prices Qwen's models at LiteLLM's rates; Qwen
//     records no cost and the catalog's resellers disagree, so xdev
//     leaves them unpriced.
//   - Kimi CLI: ccusage leaves out a subagent's calls (its StatusUpdate
//     events, wrapped in SubagentEvent); xdev counts them in the session
//     that spawned it. No file names Kimi's model: ccusage calls it
//     kimi-for-coding and prices it so; xdev leaves it unpriced.
//   - Goose: ccusage reads only the sessions that name their model
//     (model_config_json, newer schemas); xdev lists the others too, as
//     unpriced calls of an unknown model, left out here.
//   - Copilot CLI, a resumed session's two session.shutdown events:
//     ccusage takes the larger of each counter over the two; xdev adds
//     the two runs (each shutdown holds its own run's tokens: the second's
//     cache writes are fewer than the first's, which a running total
//     cannot be).
func TestUsageMatchesCcusage(t *testing.T) {
	env := usageFixtures(t)
	const resumed = "3fb12c66-34de-4800-88bd-cdc369a4b9e0"
	for _, h := range []string{"claude", "codex", "copilot", "gemini", "opencode", "qwen", "kimi", "goose"} {
		for _, view := range []string{"daily", "session"} {
			t.Run(h+"/"+view, func(t *testing.T) {
				theirs := usageRows(t, omptest.RunCcusage(t, env, h, view, "--offline", "-z", "UTC", "--json"))
				out, errOut, code := xdev(t, "", "usage", view, "--from", h, "-z", "UTC", "--json")
				if code != 0 {
					t.Fatalf("xdev usage: exit %d: %s", code, errOut)
				}
				ours := usageRows(t, []byte(out))
				if h == "goose" {
					// The session that names no model, which ccusage skips.
					if view == "session" {
						delete(ours, "20260111_1")
					} else {
						delete(ours, "2026-01-11")
					}
				}
				if h == "codex" && view == "session" {
					// ccusage names a rollout by its path under sessions/.
					named := map[string]usageRow{}
					for k, v := range theirs {
						named[k[len(k)-36:]] = v
					}
					theirs = named
				}
				if h == "claude" && view == "session" {
					// A subagent's transcript, in its parent session.
					for k, v := range theirs {
						if strings.HasPrefix(k, "agent-") {
							parent := "5c0375b4-57a5-4f26-b12d-d022ee4e51b7" // both fixtures' sessionId
							p := theirs[parent]
							p.In, p.Out, p.CacheWrite, p.CacheRead, p.Total, p.Cost = p.In+v.In, p.Out+v.Out, p.CacheWrite+v.CacheWrite,
								p.CacheRead+v.CacheRead, p.Total+v.Total, p.Cost+v.Cost
							theirs[parent] = p
							delete(theirs, k)
						}
					}
				}
				if len(ours) != len(theirs) {
					t.Errorf("%d rows, ccusage %d:\nours %v\ntheirs %v", len(ours), len(theirs), ours, theirs)
				}
				for k, want := range theirs {
					got, ok := ours[k]
					if !ok {
						t.Errorf("%s: no row; ccusage has %v", k, want)
						continue
					}
					if h == "kimi" {
						sub := kimiSubagentTokens(t, k)
						want.In, want.Out, want.CacheRead, want.CacheWrite = want.In+sub.In, want.Out+sub.Out, want.CacheRead+sub.CacheRead, want.CacheWrite+sub.CacheWrite
						want.Total, want.Cost = want.Total+sub.In+sub.Out+sub.CacheRead+sub.CacheWrite, 0
					}
					if h == "qwen" {
						want.In, want.Total, want.Cost = want.In-want.CacheRead, want.Total-want.CacheRead, 0
					}
					if h == "gemini" || h == "qwen" {
						want.Out = want.Total - want.In - want.CacheRead - want.CacheWrite // thinking, counted as output
					}
					if h == "copilot" && (k == resumed || view == "daily" && k == "2026-06-27") {
						if got.CacheWrite <= want.CacheWrite || got.Total <= want.Total {
							t.Errorf("%s: %v; ccusage's larger-of-each %v should be below the two runs' sum", k, got, want)
						}
						continue
					}
					if !closeRows(got, want) {
						t.Errorf("%s:\n got %v\nwant %v (ccusage)", k, got, want)
					}
				}
			})
		}
	}
}

// kimiSubagentTokens sums the token usage of the subagents' StatusUpdate
// events in the wire.jsonl of the Kimi session named key (a session id,
// or a day: every session's that day), read apart from xdev's reader.
func kimiSubagentTokens(t *testing.T, key string) usageRow {
	t.Helper()
	var sum usageRow
	wires, _ := filepath.Glob(filepath.Join(os.Getenv("KIMI_SHARE_DIR"), "sessions", "*", "*", "wire.jsonl"))
	for _, w := range wires {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var rec struct {
				Timestamp float64
				Message   struct {
					Type    string
					Payload struct {
						Event struct {
							Type    string
							Payload struct {
								TokenUsage *struct {
									InputOther         float64 `json:"input_other"`
									Output             float64
									InputCacheRead     float64 `json:"input_cache_read"`
									InputCacheCreation float64 `json:"input_cache_creation"`
								} `json:"token_usage"`
							}
						}
					}
				}
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Message.Type != "SubagentEvent" || rec.Message.Payload.Event.Type != "StatusUpdate" {
				continue
			}
			day := time.UnixMilli(int64(rec.Timestamp * 1000)).UTC().Format("2006-01-02")
			if u := rec.Message.Payload.Event.Payload.TokenUsage; u != nil && (filepath.Base(filepath.Dir(w)) == key || day == key) {
				sum.In, sum.Out, sum.CacheRead, sum.CacheWrite = sum.In+u.InputOther, sum.Out+u.Output, sum.CacheRead+u.InputCacheRead, sum.CacheWrite+u.InputCacheCreation
			}
		}
	}
	return sum
}

// closeRows reports whether two rows hold the same tokens, and costs
// equal to a part in 10⁹ (the sums are added in other orders).
func closeRows(a, b usageRow) bool {
	return a.In == b.In && a.Out == b.Out && a.CacheWrite == b.CacheWrite && a.CacheRead == b.CacheRead && a.Total == b.Total &&
		math.Abs(a.Cost-b.Cost) <= 1e-9*math.Max(1, math.Abs(b.Cost))
}

// TestUsageForkCountsOnce: the hand-made case where ccusage counts twice.
// A session of 3 calls and a fork of it (which copies the 3, ids and
// all) in pi's sessions dir: ccusage's pi report counts 6 calls' tokens,
// xdev's 3, as it does for the same files in the data dir.
func TestUsageForkCountsOnce(t *testing.T) {
	usageFixtures(t)
	agent := os.Getenv("XDEV_DATA_DIR")
	path, _, err := session.NewSessionPath(agent, "/w")
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(path, session.NewOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for k := range int64(3) {
		time.Sleep(2 * time.Millisecond) // entries of distinct times, as a real session's (ccusage takes one time and usage for one call)
		s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("go"), Timestamp: 1790000000000 + k*1000})
		if _, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), API: "anthropic-messages",
			Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: ai.StopEnd, Timestamp: 1790000000001 + k*1000,
			Usage: &ai.Usage{Input: 1000, Output: 100, TotalTokens: 1100}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	fork, err := session.ForkSessionInto(path, agent, "")
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	// The same two files as pi keeps them: without the title slot.
	pi := filepath.Join(os.Getenv("HOME"), ".pi/agent")
	for _, f := range []string{path, fork.Path()} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(pi, "sessions/--w--", filepath.Base(f))
		os.MkdirAll(filepath.Dir(dst), 0o700)
		if err := os.WriteFile(dst, b[strings.IndexByte(string(b), '\n')+1:], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	theirs := usageRows(t, omptest.RunCcusage(t, []string{"PI_AGENT_DIR=" + pi}, "pi", "daily", "--offline", "-z", "UTC", "--json"))
	for _, r := range theirs {
		if r.In != 6000 {
			t.Errorf("ccusage counts %v input tokens of the fork and its source; 6000 (twice) was the case shown", r.In)
		}
	}
	for _, from := range []string{"pi", "xdev"} {
		out, errOut, code := xdev(t, "", "usage", "--from", from, "-z", "UTC", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for k, r := range usageRows(t, []byte(out)) {
			if r.In != 3000 || r.Out != 300 {
				t.Errorf("--from %s, %s: %v; the 3 calls were 3000 in, 300 out", from, k, r)
			}
		}
	}
}

// TestUsageMatchesCcusageGenerated: on a generated Claude Code dir (the
// benchmarks' corpus, small: streamed responses, a tenth of the sessions
// resumed into files that copy another's lines), xdev's daily report is
// ccusage's, day by day, tokens and cost; and so again from xdev's cache.
func TestUsageMatchesCcusageGenerated(t *testing.T) {
	usageFixtures(t)
	claude := filepath.Join(t.TempDir(), "claude")
	if err := corpus.WriteClaude(claude, 300, 7); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	theirs := usageRows(t, omptest.RunCcusage(t, []string{"CLAUDE_CONFIG_DIR=" + claude}, "claude", "daily", "--offline", "-z", "UTC", "--json"))
	for run := range 2 {
		out, errOut, code := xdev(t, "", "usage", "--from", "claude", "-z", "UTC", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		ours := usageRows(t, []byte(out))
		if len(ours) != len(theirs) || len(ours) < 2 {
			t.Fatalf("run %d: %d days, ccusage %d", run, len(ours), len(theirs))
		}
		for day, want := range theirs {
			if got := ours[day]; !closeRows(got, want) {
				t.Errorf("run %d, %s:\n got %v\nwant %v (ccusage)", run, day, got, want)
			}
		}
	}
}

// TestUsageAgentProgress: Claude Code copies each turn of a subagent into
// its parent's transcript as it runs (progress records of type
// agent_progress, a streamed response in several); the subagent's own
// transcript may hold all of those turns, some, or be gone. Whatever it
// holds, each call is counted once: from the subagent's transcript where
// it is there, from the progress records where it is not. 40 draws of
// which calls the subagent's transcript keeps and which are streamed.
func TestUsageAgentProgress(t *testing.T) {
	const sid = "b1111111-0000-4000-8000-000000000001"
	r := rand.New(rand.NewPCG(18, 38))
	line := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	assistant := func(id string, in, out int, ts string, sidechain bool) map[string]any {
		return map[string]any{"parentUuid": nil, "isSidechain": sidechain, "cwd": "/work/ap", "sessionId": sid, "version": "2.1.30",
			"type": "assistant", "uuid": "u-" + id + ts, "timestamp": ts, "requestId": "req_" + id,
			"message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001",
				"content": []any{map[string]any{"type": "text", "text": "ok"}},
				"usage":   map[string]any{"input_tokens": in, "output_tokens": out, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}
	}
	for draw := range 40 {
		home := t.TempDir()
		claude := filepath.Join(home, ".claude")
		t.Setenv("HOME", home)
		t.Setenv("CLAUDE_CONFIG_DIR", claude)
		t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
		t.Setenv("XDEV_DATA_DIR", filepath.Join(home, "agent"))
		dir := filepath.Join(claude, "projects", "-work-ap")
		os.MkdirAll(filepath.Join(dir, sid, "subagents"), 0o700)
		parent := []string{line(map[string]any{"parentUuid": nil, "isSidechain": false, "cwd": "/work/ap", "sessionId": sid,
			"type": "user", "uuid": "u0", "timestamp": "2026-11-20T10:00:00.000Z", "message": map[string]any{"role": "user", "content": "go"}})}
		parent = append(parent, line(assistant("msg_parent", 1000, 100, "2026-11-20T10:00:01.000Z", false)))
		var sub []string
		n := 1 + r.IntN(6)
		wantIn, wantOut := 1000, 100
		for k := 1; k <= n; k++ {
			id := fmt.Sprintf("msg_sub%d", k)
			in, out := 100*k, 10*k
			wantIn, wantOut = wantIn+in, wantOut+out
			ts := fmt.Sprintf("2026-11-20T10:0%d:00.000Z", k)
			final := assistant(id, in, out, ts, true)
			if r.IntN(2) == 0 { // streamed: an earlier line of the response, fewer tokens
				early := assistant(id, in, 1, ts, true)
				parent = append(parent, line(map[string]any{"type": "progress", "sessionId": sid, "cwd": "/work/ap", "timestamp": ts,
					"uuid": "p0-" + id, "data": map[string]any{"type": "agent_progress", "agentId": "a6047be", "message": early}}))
			}
			parent = append(parent, line(map[string]any{"type": "progress", "sessionId": sid, "cwd": "/work/ap", "timestamp": ts,
				"uuid": "p-" + id, "parentToolUseID": "toolu_1", "data": map[string]any{"type": "agent_progress", "agentId": "a6047be", "message": final}}))
			if r.IntN(2) == 0 {
				sub = append(sub, line(final))
			}
		}
		os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(strings.Join(parent, "\n")+"\n"), 0o600)
		if len(sub) > 0 {
			os.WriteFile(filepath.Join(dir, sid, "subagents", "agent-a6047be.jsonl"), []byte(strings.Join(sub, "\n")+"\n"), 0o600)
		}
		out, errOut, code := xdev(t, "", "usage", "--from", "claude", "-z", "UTC", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got struct {
			Totals struct {
				InputTokens, OutputTokens float64
				Calls                     int
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Totals.InputTokens != float64(wantIn) || got.Totals.OutputTokens != float64(wantOut) || got.Totals.Calls != n+1 {
			t.Errorf("draw %d (%d subagent calls, %d kept in its transcript): %+v; want %d calls, %d in, %d out",
				draw, n, len(sub), got.Totals, n+1, wantIn, wantOut)
		}
	}
}
