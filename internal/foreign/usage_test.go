package foreign

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/usage"
)

// usageOf writes lines as a session of harness and reads its calls.
func usageOf(t testing.TB, harness, lines string) usage.Session {
	t.Helper()
	return usageIn(t, t.TempDir(), harness, lines)
}

// usageIn is usageOf in dir.
func usageIn(t testing.TB, dir, harness, lines string) usage.Session {
	t.Helper()
	path := filepath.Join(dir, "s.jsonl")
	if harness == HarnessCopilot {
		path = filepath.Join(dir, "session-state/0aaa/events.jsonl")
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(harness, dir)
	if err != nil {
		t.Fatal(err)
	}
	u, err := Usage(src, Session{Harness: harness, Path: path, ID: "own"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUsageBadInput: what each reader makes of bad usage: a counter that
// is a string, negative, too large for a float or a fraction of nothing
// counts 0 and is counted as malformed; a torn or junk line is skipped
// and counted; a record without a model gets "unknown" (no price, said
// so), never a panic, a NaN or a negative count.
func TestUsageBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, harness, lines string
		calls, malformed     int
		skipped              int
		in, out              float64
	}{
		{"claude strings and negatives", HarnessClaude,
			`{"type":"assistant","message":{"id":"m","model":"claude-sonnet-4-5","usage":{"input_tokens":"12","output_tokens":-5,"cache_read_input_tokens":1e999,"cache_creation_input_tokens":7}}}` + "\n",
			1, 3, 0, 0, 0},
		{"claude torn line and junk", HarnessClaude,
			"junk\n" + `{"type":"assistant","message":{"model":"m","usage":{"input_tokens":3,"output_tokens":4}}}` + "\n" + `{"type":"assistant","mess`,
			1, 0, 2, 3, 4},
		{"claude no model, no usage object, synthetic", HarnessClaude,
			`{"type":"assistant","message":{"usage":{"input_tokens":3}}}` + "\n" +
				`{"type":"assistant","message":{"model":"x","usage":"lots"}}` + "\n" +
				`{"type":"assistant","message":{"model":"<synthetic>","usage":{"input_tokens":9}}}` + "\n",
			1, 0, 0, 3, 0},
		{"codex strings and a total that goes down", HarnessCodex,
			`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":"100","output_tokens":5}}}}` + "\n" +
				`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":50,"cached_input_tokens":10,"output_tokens":2}}}}` + "\n" +
				`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-1,"output_tokens":3}}}}` + "\n",
			3, 2, 0, 40, 10},
		{"codex info null, repeated events", HarnessCodex,
			`{"type":"event_msg","payload":{"type":"token_count","info":null}}` + "\n" +
				strings.Repeat(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"output_tokens":1}}}}`+"\n", 5),
			1, 0, 0, 10, 1},
		{"copilot bad metrics", HarnessCopilot,
			`{"type":"session.shutdown","data":{"modelMetrics":{"m":{"usage":{"inputTokens":"x","outputTokens":2}},"n":7,"o":{"usage":[]}}}}` + "\n",
			1, 1, 0, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := usageOf(t, tc.harness, tc.lines)
			malformed := 0
			var tok usage.Tokens
			for _, c := range u.Calls {
				malformed += c.MalformedUsageCounters
				tok.Add(c.Tokens)
				if c.Model.ID() == "" {
					t.Errorf("a call without a model name: %+v", c)
				}
			}
			if len(u.Calls) != tc.calls || malformed != tc.malformed || u.Skipped != tc.skipped || tok.Input != tc.in || tok.Output != tc.out {
				t.Errorf("%d calls, %d malformed, %d skipped, %v in, %v out; want %d, %d, %d, %v, %v: %+v",
					len(u.Calls), malformed, u.Skipped, tok.Input, tok.Output, tc.calls, tc.malformed, tc.skipped, tc.in, tc.out, u.Calls)
			}
		})
	}
}

// FuzzUsage: any file, read as a Claude Code transcript, a Codex rollout
// or a Copilot CLI event log, gives calls whose every count is a finite
// number at least 0, or an error; never a panic.
func FuzzUsage(f *testing.F) {
	for _, name := range []string{"claude/handmade.jsonl", "codex/handmade.jsonl", "codex/fork.jsonl"} {
		if data, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(data, uint8(0))
		}
	}
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1e308,"cached_input_tokens":-1e308}}}}`), uint8(1))
	f.Add([]byte(`{"type":"session.shutdown","data":{"modelMetrics":{"m":{"usage":{"inputTokens":1e308,"cacheReadTokens":1e308}}}}}`), uint8(2))
	harnesses := []string{HarnessClaude, HarnessCodex, HarnessCopilot}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		h := harnesses[int(which)%len(harnesses)]
		u := usageIn(t, dir, h, string(data))
		// The one-pass scans read what decoding every line reads
		// (usage_scan_test.go).
		switch path := filepath.Join(dir, "s.jsonl"); h {
		case HarnessClaude:
			got, want := usage.Session{Path: path, ID: "own"}, usage.Session{Path: path, ID: "own"}
			if err := claudeCalls(&got); err != nil {
				t.Fatal(err)
			}
			claudeByValues(t, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read in one pass\n%+v\nread whole\n%+v", got, want)
			}
		case HarnessCodex:
			got, want := usage.Session{Path: path}, usage.Session{Path: path}
			if err := codexCalls(&got); err != nil {
				t.Fatal(err)
			}
			var c codexCallReader
			skipped, err := eachRecord(path, func(rec record) error { c.record(&want, rec.v); return nil })
			if err != nil {
				t.Fatal(err)
			}
			want.Skipped = skipped
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read in one pass\n%+v\nevery line decoded\n%+v", got, want)
			}
		}
		for _, c := range u.Calls {
			for _, n := range []float64{c.Tokens.Input, c.Tokens.Output, c.Tokens.CacheRead, c.Tokens.CacheWrite, c.Tokens.CacheWrite1h, c.Tokens.Reasoning, c.Total, c.Time} {
				if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 && n != c.Time {
					t.Fatalf("a count of %v: %+v", n, c)
				}
			}
		}
	})
}
