package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/testscale"
)

// TestEveryHitNamesItsLine: on every harness's real fixtures (and the
// hand-made Claude Code 2.1 transcript with a compaction), a search for
// words drawn from their own text gives hits each of whose file and line
// holds the word: the line a person opens at the hit says what matched.
// (A hit in a Claude Code compaction's summary named the boundary's line
// before it, which does not hold the word.) opencode's sessions live in a
// database, where a line is no place: their hits are not checked.
func TestEveryHitNamesItsLine(t *testing.T) {
	usageFixtures(t)
	claude := os.Getenv("CLAUDE_CONFIG_DIR")
	v21 := filepath.Join(claude, "projects", "-work-v21")
	os.MkdirAll(v21, 0o700)
	b, err := os.ReadFile("../../internal/foreign/testdata/claude/v21-compacted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(v21, "c0ffee21-0000-4000-8000-000000000021.jsonl"), b, 0o600)
	pi := filepath.Join(os.Getenv("HOME"), ".pi", "agent", "sessions", "--pi--")
	os.MkdirAll(pi, 0o700)
	for _, f := range []string{"pi-v1-large-session.jsonl", "pi-v1-before-compaction.jsonl"} {
		copyFile(t, realfixtures.Path(t, f), filepath.Join(pi, "2025-12-09T00-00-00-000Z_"+f))
	}

	// Words of each harness's transcripts themselves, of every length and
	// frequency (Codex's published text is redacted to REDACTED_TEXT).
	wordRE := regexp.MustCompile(`[A-Za-z_]{5,}`)
	r := rand.New(rand.NewPCG(38, 12))
	seen := map[string]bool{}
	words := []string{"summary", "compacted", "context", "redacted_text"}
	drawFrom := func(text []byte, n int) {
		var all []string
		for _, w := range wordRE.FindAll(text, -1) {
			if k := strings.ToLower(string(w)); !seen[k] {
				seen[k] = true
				all = append(all, k)
			}
		}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		words = append(words, all[:min(len(all), n)]...)
	}
	real := realfixtures.Dir(t)
	for _, dir := range []string{"claude", "codex", "copilot", "gemini", "."} {
		var text []byte
		filepath.WalkDir(filepath.Join(real, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && dir == "." && p != real {
				return filepath.SkipDir // pi's files, at the top
			}
			if err == nil && d.Type().IsRegular() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
				if b, err := os.ReadFile(p); err == nil {
					text = append(text, b...)
				}
			}
			return nil
		})
		n := testscale.N(6, 60)
		if raceEnabled {
			n = min(n, 15) // a search a word, each minutes' worth under the detector: .ci/run draws 60 without it
		}
		drawFrom(text, n)
	}
	drawFrom(b, 10)

	stringRE := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	lines := map[string][]string{}
	lineOf := func(path string, n int) (string, bool) {
		ls, ok := lines[path]
		if !ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", false
			}
			ls = strings.Split(string(b), "\n")
			lines[path] = ls
		}
		if n < 1 || n > len(ls) {
			return "", false
		}
		// The text of the line's JSON strings, escapes decoded.
		var text strings.Builder
		for _, lit := range stringRE.FindAllString(ls[n-1], -1) {
			var s string
			if json.Unmarshal([]byte(lit), &s) == nil {
				text.WriteString(s)
				text.WriteByte('\n')
			}
		}
		return strings.ToLower(text.String()), true
	}
	checked, harnesses := 0, map[string]int{}
	for _, w := range words {
		out, errOut, code := xdev(t, "", "search", "--json", "--from", "all", "--subagents", "--limit", "50", w)
		if code != 0 {
			t.Fatalf("search %q: exit %d: %s", w, code, errOut)
		}
		var hits []struct {
			Path, Harness string
			Line          int
		}
		if err := json.Unmarshal([]byte(out), &hits); err != nil {
			t.Fatalf("search %q: %v\n%s", w, err, out)
		}
		for _, h := range hits {
			if h.Harness == "opencode" {
				continue
			}
			text, ok := lineOf(h.Path, h.Line)
			if !ok {
				t.Errorf("%q: a hit at %s:%d, which has no such line", w, h.Path, h.Line)
				continue
			}
			checked++
			harnesses[h.Harness]++
			if !strings.Contains(text, w) {
				t.Errorf("%q: a hit at %s:%d (%s), whose line does not hold it", w, h.Path, h.Line, h.Harness)
			}
		}
	}
	t.Logf("%d words, %d hits checked: %v", len(words), checked, harnesses)
	for _, h := range []string{"claude", "codex", "copilot", "gemini", "pi"} {
		if harnesses[h] == 0 {
			t.Errorf("no hit checked in %s's sessions", h)
		}
	}
}
