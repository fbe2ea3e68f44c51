package foreign

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/usage"
)

// The usage scans of Claude Code's transcripts and Codex's rollouts read
// each line once, decoding only what they need of it (claudeUsageRecord,
// codexUsageLine). TestClaudeUsageScan and TestCodexUsageScan hold them
// to readers that decode every line whole, as JSON.parse reads it, over
// random transcripts of lines that try to fool a reader that looks at
// bytes: words spelled with \u escapes, in names and values; members in
// any order; the words inside text; torn lines, junk, values that are not
// objects, text after an object; titles, progress records carrying a
// subagent's call, synthetic messages, repeated message ids.

// scanRand makes the random parts of a generated line.
type scanRand struct{ *rand.Rand }

// word writes s as a JSON string, now and then with one of its
// characters as a \u escape (which spells the same text).
func (r scanRand) word(s string) string {
	if s == "" || r.IntN(6) > 0 {
		return `"` + s + `"`
	}
	i := r.IntN(len(s))
	return fmt.Sprintf(`"%s\u%04x%s"`, s[:i], s[i], s[i+1:])
}

// object writes members (name, JSON value pairs) in a random order, each
// name now and then escaped.
func (r scanRand) object(members ...string) string {
	type member struct{ name, value string }
	var ms []member
	for k := 0; k+1 < len(members); k += 2 {
		ms = append(ms, member{members[k], members[k+1]})
	}
	r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	var b strings.Builder
	b.WriteString("{")
	for k, m := range ms {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(r.word(m.name) + ":" + m.value)
	}
	b.WriteString("}")
	return b.String()
}

// damage now and then spoils a line: torn, text after it, junk, a value
// that is not an object, white space around it.
func (r scanRand) damage(line string) string {
	switch r.IntN(14) {
	case 0:
		return line[:r.IntN(len(line))]
	case 1:
		return line + " x"
	case 2:
		return `not json "usage" "token_count"`
	case 3:
		return `["usage",{"type":"token_count"}]`
	case 4:
		return " \t" + line + " \r"
	case 5:
		return ""
	case 6:
		// After the object, what is white space to Go but not to JSON.
		return line + []string{"\u00a0", "\f", "\v", "\u0085", "\u2028"}[r.IntN(5)]
	}
	return line
}

func (r scanRand) text() string {
	return r.word([]string{"hello", `say \"usage\" and \"token_count\"`, "cwd summary aiTitle", `{\"type\":\"assistant\"}`, "日本語 café"}[r.IntN(5)])
}

func (r scanRand) claudeLine(k int) string {
	ts := r.word(fmt.Sprintf("2026-11-%02dT10:%02d:00.000Z", 1+r.IntN(28), k%60))
	envelope := func(typ string, more ...string) string {
		ms := []string{"type", r.word(typ), "timestamp", ts, "uuid", r.word(fmt.Sprint("u", k))}
		if r.IntN(3) > 0 {
			ms = append(ms, "cwd", r.word([]string{"/p/a", "/p/b", ""}[r.IntN(3)]))
		}
		if r.IntN(2) == 0 {
			ms = append(ms, "sessionId", r.word([]string{"s-main", "s-other", ""}[r.IntN(3)]), "isSidechain", []string{"true", "false", `"true"`}[r.IntN(3)])
		}
		return r.object(append(ms, more...)...)
	}
	usageOf := func() string {
		n := func() string { return []string{fmt.Sprint(r.IntN(5000)), "0", "null", `"12"`, "-3", "1e3"}[r.IntN(6)] }
		ms := []string{"input_tokens", n(), "output_tokens", n(), "cache_read_input_tokens", n(), "cache_creation_input_tokens", n()}
		if r.IntN(2) == 0 {
			ms = append(ms, "cache_creation", r.object("ephemeral_1h_input_tokens", n(), "ephemeral_5m_input_tokens", n()))
		}
		return r.object(ms...)
	}
	assistant := func() string {
		model := []string{"claude-sonnet-4-5", "claude-opus-4-1", "<synthetic>"}[r.IntN(3)]
		ms := []string{"role", r.word("assistant"), "model", r.word(model), "content", r.text()}
		if r.IntN(5) > 0 {
			ms = append(ms, "id", r.word(fmt.Sprint("msg_", r.IntN(12))))
		}
		if r.IntN(6) > 0 {
			ms = append(ms, "usage", []string{usageOf(), usageOf(), "null", "[]"}[r.IntN(4)])
		}
		return r.object(ms...)
	}
	var line string
	switch r.IntN(9) {
	case 0, 1:
		line = envelope("user", "message", r.object("role", r.word("user"), "content", r.text()))
	case 2, 3, 4:
		line = envelope("assistant", "message", assistant())
	case 5:
		line = envelope("custom-title", "customTitle", r.word([]string{"mine", ""}[r.IntN(2)]))
	case 6:
		line = envelope([]string{"ai-title", "summary"}[r.IntN(2)], "aiTitle", r.word("ai"), "summary", r.word("sum"))
	case 7:
		inner := r.object("type", r.word([]string{"assistant", "user"}[r.IntN(2)]), "timestamp", []string{ts, `"later"`, "0"}[r.IntN(3)], "message", assistant())
		line = envelope("progress", "data", r.object("type", r.word([]string{"agent_progress", "bash_progress"}[r.IntN(2)]), "message", inner))
	case 8:
		line = envelope("system", "content", r.text(), "toolUseResult", r.object("usage", usageOf()))
	}
	return r.damage(line)
}

// claudeByValues is claudeCalls as a reader that decodes every line
// whole would read it: a line that JSON.parse reads as an object is a
// record, its members JSON.parse's (the last of a repeated name).
func claudeByValues(t *testing.T, u *usage.Session) {
	t.Helper()
	data, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	text := func(v jsonx.Value) string { s, _ := v.Text(); return s }
	first, byRequest := true, map[uint64]int{}
	var custom, ai, summary, cwd string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := jsonx.Parse([]byte(line))
		if err != nil || v.Kind() != jsonx.Object {
			u.Skipped++
			continue
		}
		if first {
			first = false
			if sid := text(v.Get("sessionId")); v.Get("isSidechain").Kind() == jsonx.Bool && func() bool { b, _ := v.Get("isSidechain").Boolean(); return b }() && sid != "" && sid != u.ID {
				u.Parent, u.Subagent = sid, true
			}
		}
		cwd = cmp.Or(cwd, text(v.Get("cwd")))
		switch text(v.Get("type")) {
		case "custom-title":
			custom = cmp.Or(text(v.Get("customTitle")), custom)
		case "ai-title":
			ai = cmp.Or(text(v.Get("aiTitle")), ai)
		case "summary":
			summary = cmp.Or(text(v.Get("summary")), summary)
		}
		rec, at := v, timestampMs(v.Get("timestamp"), 0)
		if v.Get("type").Is("progress") && v.Get("data").Get("type").Is("agent_progress") {
			if inner := v.Get("data").Get("message"); inner.Kind() == jsonx.Object && inner.Get("type").Is("assistant") {
				rec = inner
				if ms := timestampMs(inner.Get("timestamp"), 0); ms != 0 {
					at = ms
				}
			}
		}
		msg := rec.Get("message")
		use := msg.Get("usage")
		model := text(msg.Get("model"))
		if msg.Kind() != jsonx.Object || use.Kind() != jsonx.Object || model == "<synthetic>" {
			continue
		}
		c := usage.Call{Time: at, Model: usage.RefModel("anthropic", cmp.Or(model, "unknown"), "anthropic-messages")}
		bad := &c.MalformedUsageCounters
		c.Tokens = usage.Tokens{Input: counter(use.Get("input_tokens"), bad), Output: counter(use.Get("output_tokens"), bad),
			CacheRead: counter(use.Get("cache_read_input_tokens"), bad), CacheWrite: counter(use.Get("cache_creation_input_tokens"), bad)}
		c.Tokens.CacheWrite1h = min(c.Tokens.CacheWrite, counter(use.Get("cache_creation").Get("ephemeral_1h_input_tokens"), bad))
		c.Total = c.Tokens.Sum()
		if id := text(msg.Get("id")); id != "" {
			c.Request = usage.ResponseKey("anthropic", id)
			if k, ok := byRequest[c.Request]; ok {
				if c.Total > u.Calls[k].Total {
					c.Time = u.Calls[k].Time
					u.Calls[k] = c
				}
				continue
			}
			byRequest[c.Request] = len(u.Calls)
		}
		u.Calls = append(u.Calls, c)
	}
	if cwd != "" {
		u.Project = cwd
	}
	if title := cmp.Or(custom, ai, summary); title != "" {
		u.Title = title
	}
}

func TestClaudeUsageScan(t *testing.T) {
	dir := t.TempDir()
	for round := range 400 {
		r := scanRand{rand.New(rand.NewPCG(uint64(round), 7))}
		var b strings.Builder
		for k := range 1 + r.IntN(30) {
			b.WriteString(r.claudeLine(k) + "\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("s-main-%d.jsonl", round))
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		got, want := usage.Session{Path: path, ID: "s-main"}, usage.Session{Path: path, ID: "s-main"}
		if err := claudeCalls(&got); err != nil {
			t.Fatal(err)
		}
		claudeByValues(t, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: read in one pass\n%+v\nread whole\n%+v\nfile:\n%s", round, got, want, b.String())
		}
	}
}

func (r scanRand) codexLine(k int) string {
	ts := r.word(fmt.Sprintf("2026-11-01T10:%02d:%02d.000Z", k/60%60, k%60))
	n := func() string { return fmt.Sprint(k*100 + r.IntN(100)) }
	var line string
	switch r.IntN(7) {
	case 0:
		payload := []string{"id", r.word("rollout"), "cwd", r.word("/p"), "timestamp", ts}
		if r.IntN(2) == 0 {
			payload = append(payload, "forked_from_id", r.word("parent"))
		}
		line = r.object("timestamp", ts, "type", r.word("session_meta"), "payload", r.object(payload...))
	case 1:
		line = r.object("timestamp", ts, "type", r.word("turn_context"), "payload", r.object("model", r.word([]string{"gpt-5", "gpt-5-codex"}[r.IntN(2)]), "cwd", r.word("/p")))
	case 2, 3:
		total := r.object("input_tokens", n(), "cached_input_tokens", fmt.Sprint(r.IntN(50)), "output_tokens", n(), "reasoning_output_tokens", fmt.Sprint(r.IntN(9)))
		info := []string{r.object("total_token_usage", total, "last_token_usage", total), "null"}[r.IntN(2)]
		line = r.object("timestamp", ts, "type", r.word("event_msg"), "payload", r.object("type", r.word("token_count"), "info", info))
	case 4:
		line = r.object("timestamp", ts, "type", r.word("event_msg"), "payload", r.object("type", r.word("agent_message"), "message", r.text()))
	case 5:
		line = r.object("timestamp", ts, "type", r.word("response_item"), "payload", r.object("type", r.word("function_call_output"), "output", r.text()))
	case 6:
		// The words where they are no record's type.
		line = r.object("timestamp", ts, "type", r.word("response_item"), "payload", r.object("type", r.word("message"), "note", r.word("token_count"), "payload", r.object("kind", r.word("session_meta"))))
	}
	return r.damage(line)
}

func TestCodexUsageScan(t *testing.T) {
	dir := t.TempDir()
	for round := range 400 {
		r := scanRand{rand.New(rand.NewPCG(uint64(round), 11))}
		var b strings.Builder
		for k := range 1 + r.IntN(30) {
			b.WriteString(r.codexLine(k) + "\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("rollout-%d.jsonl", round))
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		got := usage.Session{Path: path}
		if err := codexCalls(&got); err != nil {
			t.Fatal(err)
		}
		// The same reader, given every line decoded.
		want := usage.Session{Path: path}
		var c codexCallReader
		skipped, err := eachRecord(path, func(rec record) error {
			c.record(&want, rec.v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want.Skipped = skipped
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: read in one pass\n%+v\nevery line decoded\n%+v\nfile:\n%s", round, got, want, b.String())
		}
	}
}
