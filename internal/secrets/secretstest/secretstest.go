// Package secretstest plants secrets into sessions of several harnesses'
// formats, for the tests of every way a transcript leaves xdev (the CLI,
// the MCP server, serve), and checks an output with two oracles: the
// planted values themselves, and gitleaks' own detector.
//
// The secrets are made from gitleaks' default rules by the generator
// gitleaks makes its own examples with (reggen), each kept only where
// gitleaks finds it alone on a line, at most one a rule, in a fixed order.
package secretstest

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
)

// Gitleaks is gitleaks' own detector of its default rules (base64 and
// hex left undecoded, as xdev leaves them).
var Gitleaks = sync.OnceValue(func() *detect.Detector {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		panic(err)
	}
	d.MaxDecodeDepth = 0
	return d
})

// Secrets is up to n secrets of distinct rules that JSON carries as they
// are (no quote, backslash or control character).
func Secrets(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	for _, r := range Gitleaks().Config.GetOrderedRules() {
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
			if strings.ContainsAny(s, "\"\\`'\r\n\t\f\v\x00") || len(Gitleaks().DetectString("\n"+s+"\n")) == 0 {
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

// Word is in every text a planted session holds, for searches.
const Word = "zebra"

// Plant writes sessions holding every one of secrets, in turn in xdev's
// own format (into the data dir data), Claude Code's (under claude) and
// Codex's (under codex): in user and assistant text, thinking, tool
// calls' arguments, tool results, titles and summaries. It returns each
// session's file.
func Plant(t testing.TB, data, claude, codex string, secrets []string) []string {
	t.Helper()
	next := 0
	take := func() string { s := secrets[next%len(secrets)]; next++; return s }
	var files []string
	for k := 0; next < len(secrets); k++ {
		var p string
		switch k % 3 {
		case 0:
			p = plantXdev(t, data, k, take)
		case 1:
			p = plantClaude(t, claude, k, take)
		case 2:
			p = plantCodex(t, codex, k, take)
		}
		files = append(files, p)
	}
	return files
}

// Check fails t for every planted secret in out, and every secret
// gitleaks finds there.
func Check(t testing.TB, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s: the planted %q is in the output", what, s)
		}
	}
	for _, f := range Gitleaks().DetectString(out) {
		t.Errorf("%s: gitleaks finds %s %q", what, f.RuleID, f.Secret)
	}
}

func str(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func write(t testing.TB, p string, lines []string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// plantXdev writes a v3 session with a title slot's title in its header.
func plantXdev(t testing.TB, data string, k int, take func() string) string {
	id := fmt.Sprintf("01a00000-0000-7000-8000-%012d", k)
	lines := []string{
		`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/app","title":` + str("deploy with "+take()) + `}`,
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + str(Word+": set the key to "+take()+" please") + `,"timestamp":1}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + str(Word+" the token is "+take()) + `},{"type":"text","text":` + str(Word+" done, using "+take()) + `},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":` + str("export TOKEN="+take()+" && deploy") + `}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + str(Word+" env:\n"+take()+"\n"+take()) + `}],"isError":false,"timestamp":3}}`,
	}
	return write(t, filepath.Join(data, "sessions", "--w-app--", fmt.Sprintf("2026-01-01T00-00-00-000Z_%s.jsonl", id)), lines)
}

// plantClaude writes a Claude Code transcript under root/projects.
func plantClaude(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("c1a0de00-0000-4000-8000-%012d", k)
	head := `"sessionId":"` + id + `","cwd":"/w/app","version":"2.0.0","timestamp":"2026-01-01T00:00:0%dZ"`
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,` + fmt.Sprintf(head, 1) + `,"message":{"role":"user","content":` + str(Word+": my key is "+take()) + `}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1",` + fmt.Sprintf(head, 2) + `,"message":{"id":"msg1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":` + str(Word+" thinking about "+take()) + `},{"type":"text","text":` + str(Word+" ok "+take()) + `},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":` + str("curl -H 'X: "+take()+"' x") + `}}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"user","uuid":"u2","parentUuid":"a1",` + fmt.Sprintf(head, 3) + `,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + str(Word+" output "+take()) + `}]}}`,
		`{"type":"summary","summary":` + str(Word+" summary "+take()) + `,"leafUuid":"u2"}`,
	}
	return write(t, filepath.Join(root, "projects", "-w-app", id+".jsonl"), lines)
}

// plantCodex writes a Codex rollout under root/sessions.
func plantCodex(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("0c0dec00-0000-4000-8000-%012d", k)
	ts := `"timestamp":"2026-01-01T00:00:01.000Z"`
	args, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "echo " + take()}})
	lines := []string{
		`{` + ts + `,"type":"session_meta","payload":{"id":"` + id + `",` + ts + `,"cwd":"/w/app","originator":"codex_cli_rs","cli_version":"0.50.0"}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` + str(Word+" use "+take()) + `}]}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":` + str(Word+" reasoning "+take()) + `}]}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":` + str(string(args)) + `,"call_id":"c1"}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + str(Word+" "+take()) + `}}`,
		`{` + ts + `,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + str(Word+" done "+take()) + `}]}}`,
	}
	return write(t, filepath.Join(root, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-01-"+id+".jsonl"), lines)
}
