package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/xdev/xdev/internal/testscale"
)

// gitleaksDetector is gitleaks' own detector of its default rules: the
// second oracle of what leaves xdev.
var gitleaksDetector = sync.OnceValue(func() *detect.Detector {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		panic(err)
	}
	d.MaxDecodeDepth = 0
	return d
})

// plantable makes secrets of gitleaks' rules with the generator gitleaks
// makes its examples with, each one gitleaks finds alone on a line and
// that JSON carries as it is (no quote, backslash or control character),
// at most one a rule, in a fixed order.
func plantable(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for _, r := range gitleaksDetector().Config.GetOrderedRules() {
		if r.Regex == nil {
			continue
		}
		g, err := reggen.NewGenerator(r.Regex.String())
		if err != nil {
			continue
		}
		g.SetSeed(int64(len(out) + 1))
		for range 30 {
			s := g.Generate(1)
			if strings.ContainsAny(s, "\"\\`'\r\n\t\f\v\x00") || len(gitleaksDetector().DetectString("\n"+s+"\n")) == 0 {
				continue
			}
			out = append(out, s)
			break
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// TestNoSecretLeaves plants secrets of every kind gitleaks knows into
// sessions of three harness formats (xdev's own, Claude Code's, Codex's),
// in user text, assistant text, thinking, tool calls' arguments, tool
// results and titles, and runs every reading command a person uses on
// them: not one planted secret is in any output, and gitleaks finds
// nothing there. show --reveal and export --reveal give them back.
func TestNoSecretLeaves(t *testing.T) {
	planted := plantable(t, testscale.N(60, 400))
	if len(planted) < 40 {
		t.Fatalf("only %d secrets could be planted", len(planted))
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	data := filepath.Join(home, ".xdev", "agent")
	t.Setenv("XDEV_DATA_DIR", data)
	next := 0
	take := func() string { s := planted[next%len(planted)]; next++; return s }
	var names []string
	for k := 0; next < len(planted); k++ {
		switch k % 3 {
		case 0:
			names = append(names, plantXdev(t, data, take))
		case 1:
			names = append(names, plantClaude(t, home, k, take))
		case 2:
			names = append(names, plantCodex(t, home, k, take))
		}
	}
	check := func(what, out string) {
		t.Helper()
		for _, s := range planted {
			if strings.Contains(out, s) {
				t.Errorf("%s: the planted %q is in the output", what, s)
			}
		}
		for _, f := range gitleaksDetector().DetectString(out) {
			t.Errorf("%s: gitleaks finds %s %q", what, f.RuleID, f.Secret)
		}
	}
	for _, name := range names {
		for _, args := range [][]string{
			{"show", name}, {"show", "--full", name}, {"show", "--json", name}, {"show", "--tree", name}, {"show", "--tree", "--json", name},
			{"export", name}, {"export", "--format", "html", "--full", name},
		} {
			out, errs, code := xdev(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			check(strings.Join(args, " "), out+errs)
		}
		out, _, _ := xdev(t, "", "show", "--reveal", "--full", name)
		out2, _, _ := xdev(t, "", "export", "--reveal", name)
		revealed := 0
		for _, s := range planted {
			if strings.Contains(out, s) && strings.Contains(out2, s) {
				revealed++
			}
		}
		if revealed == 0 {
			t.Errorf("show and export --reveal of %s revealed nothing", name)
		}
	}
	for _, args := range [][]string{
		{"list", "--all"}, {"list", "--all", "--json"}, {"search", "zebra"}, {"search", "--json", "zebra"}, {"search", "--limit", "500", "zebra"},
	} {
		out, errs, code := xdev(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if args[0] == "search" && !strings.Contains(out, "REDACTED") {
			t.Errorf("%v: no hit shows a masked secret:\n%s", args, out)
		}
		check(strings.Join(args, " "), out+errs)
	}
	t.Logf("%d secrets planted in %d sessions", len(planted), len(names))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// plantXdev writes a session of xdev's own format through new and append.
func plantXdev(t *testing.T, data string, take func() string) string {
	t.Helper()
	out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", "/w/app", "--title", "deploy with "+take())
	if code != 0 {
		t.Fatalf("new: %s", errs)
	}
	path := strings.TrimSpace(out)
	lines := []string{
		`{"type":"message","message":{"role":"user","content":` + jsonString("zebra: set the key to "+take()+" please") + `,"timestamp":1}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + jsonString("the zebra token is "+take()) + `},{"type":"text","text":` + jsonString("zebra done, using "+take()) + `},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":` + jsonString("export TOKEN="+take()+" && deploy") + `}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + jsonString("zebra env:\n"+take()+"\n"+take()) + `}],"isError":false,"timestamp":3}}`,
	}
	if _, errs, code := xdev(t, strings.Join(lines, "\n")+"\n", "append", path); code != 0 {
		t.Fatalf("append: %s", errs)
	}
	return path
}

// plantClaude writes a Claude Code transcript under ~/.claude/projects.
func plantClaude(t *testing.T, home string, k int, take func() string) string {
	t.Helper()
	id := fmt.Sprintf("c1a0de00-0000-4000-8000-%012d", k)
	dir := filepath.Join(home, ".claude", "projects", "-w-app")
	os.MkdirAll(dir, 0o700)
	head := `"sessionId":"` + id + `","cwd":"/w/app","version":"2.0.0","timestamp":"2026-01-01T00:00:0%dZ"`
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,` + fmt.Sprintf(head, 1) + `,"message":{"role":"user","content":` + jsonString("zebra: my key is "+take()) + `}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1",` + fmt.Sprintf(head, 2) + `,"message":{"id":"msg1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":` + jsonString("zebra thinking about "+take()) + `},{"type":"text","text":` + jsonString("zebra ok "+take()) + `},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":` + jsonString("curl -H 'X: "+take()+"' x") + `}}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"user","uuid":"u2","parentUuid":"a1",` + fmt.Sprintf(head, 3) + `,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + jsonString("zebra output "+take()) + `}]}}`,
		`{"type":"summary","summary":` + jsonString("zebra summary "+take()) + `,"leafUuid":"u2"}`,
	}
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}

// plantCodex writes a Codex rollout under ~/.codex/sessions.
func plantCodex(t *testing.T, home string, k int, take func() string) string {
	t.Helper()
	id := fmt.Sprintf("0c0dec00-0000-4000-8000-%012d", k)
	dir := filepath.Join(home, ".codex", "sessions", "2026", "01", "01")
	os.MkdirAll(dir, 0o700)
	ts := `"timestamp":"2026-01-01T00:00:01.000Z"`
	args, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "echo " + take()}})
	lines := []string{
		`{` + ts + `,"type":"session_meta","payload":{"id":"` + id + `",` + ts + `,"cwd":"/w/app","originator":"codex_cli_rs","cli_version":"0.50.0"}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` + jsonString("zebra use "+take()) + `}]}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":` + jsonString("zebra reasoning "+take()) + `}]}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":` + jsonString(string(args)) + `,"call_id":"c1"}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + jsonString("zebra "+take()) + `}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + jsonString("zebra done "+take()) + `}]}}`,
	}
	p := filepath.Join(dir, "rollout-2026-01-01T00-00-01-"+id+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}
