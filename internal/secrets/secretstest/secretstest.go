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
	"github.com/ncruces/go-sqlite3"
	"github.com/xdev/xdev/internal/corpus"
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
// own format (into the data dir data) and in the format of each harness
// roots has a root for (by its name: claude, codex, pi, copilot, gemini,
// qwen, continue, kimi, cline, crush, goose, aider, opencode; one left
// out is skipped): in user and assistant text,
// thinking, tool calls' arguments, tool results, titles and compaction
// summaries, as far as each format holds them, and in one session's
// working directory and so its file's path. It returns each session's
// file (an opencode session's path in its database).
func Plant[H ~string](t testing.TB, data string, roots map[H]string, secrets []string) []string {
	t.Helper()
	next := 0
	take := func() string { s := secrets[next%len(secrets)]; next++; return s }
	// The first xdev session's project is named by a secret: its cwd, its
	// directory's name and so its file's path hold one.
	project := "app"
	for _, s := range secrets {
		if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == "" {
			project = s
			break
		}
	}
	formats := []func(k int) string{func(k int) string {
		if k == 0 {
			return plantXdev(t, data, k, project, take)
		}
		return plantXdev(t, data, k, "app", take)
	}}
	for _, f := range []struct {
		name  string
		plant func(t testing.TB, root string, k int, take func() string) string
	}{{"claude", plantClaude}, {"codex", plantCodex}, {"pi", plantPi}, {"copilot", plantCopilot}, {"gemini", plantGemini}, {"qwen", plantQwen}, {"continue", plantContinue}, {"kimi", plantKimi}, {"cline", plantCline},
		{"crush", plantCrush}, {"goose", plantGoose}, {"aider", plantAider}} {
		if root := roots[H(f.name)]; root != "" {
			formats = append(formats, func(k int) string { return f.plant(t, root, k, take) })
		}
	}
	var files []string
	for k := 0; next < len(secrets) || k < len(formats); k++ {
		files = append(files, formats[k%len(formats)](k))
	}
	if root := roots[H("opencode")]; root != "" {
		files = append(files, plantOpencode(t, root, take)...)
	}
	return files
}

// Check fails t for every planted secret in out, and every secret
// gitleaks finds there.
func Check(t testing.TB, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if i := strings.Index(out, s); i >= 0 {
			// The line it is on, to see what let it through.
			start := strings.LastIndexByte(out[:i], '\n') + 1
			end := len(out)
			if j := strings.IndexByte(out[i:], '\n'); j >= 0 {
				end = i + j
			}
			line := out[start:end]
			if len(line) > 400 {
				line = line[max(0, i-start-200):min(len(line), i-start+len(s)+100)]
			}
			t.Errorf("%s: the planted %q is in the output, on the line %q", what, s, line)
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
func plantXdev(t testing.TB, data string, k int, project string, take func() string) string {
	id := fmt.Sprintf("01a00000-0000-7000-8000-%012d", k)
	lines := []string{
		`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/` + project + `","title":` + str("deploy with "+take()) + `}`,
		// A first message a listing cuts (at 200 bytes) inside the key.
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + str(Word+": "+strings.Repeat("fix the deploy ", 12)+"set the key to "+take()+" please") + `,"timestamp":1}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + str(Word+" the token is "+take()) + `},{"type":"text","text":` + str(Word+" done, using "+take()) + `},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":` + str("export TOKEN="+take()+" && deploy") + `}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + str(Word+" env:\n"+take()+"\n"+take()) + `}],"isError":false,"timestamp":3}}`,
		`{"type":"compaction","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","summary":` + str(Word+" so far: the key "+take()) + `,"firstKeptEntryId":"e3","tokensBefore":100}`,
		`{"type":"message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":` + str(Word+" and "+take()) + `,"timestamp":5}}`,
		// A key in a tag, and one a summary's cut (a tree's, at 60)
		// splits.
		`{"type":"message","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":` + str(Word+" <env>"+take()+"</env>") + `,"timestamp":6}}`,
		`{"type":"message","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"user","content":` + str(Word+" the one we set up last week is "+take()+" ok") + `,"timestamp":7}}`,
	}
	return write(t, filepath.Join(data, "sessions", "--w-"+project+"--", fmt.Sprintf("2026-01-01T00-00-00-000Z_%s.jsonl", id)), lines)
}

// plantPi writes a pi session (omp's format without the title slot) under
// root/sessions, with a compaction.
func plantPi(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("01b00000-0000-7000-8000-%012d", k)
	lines := []string{
		`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/app"}`,
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + str(Word+": the password is "+take()) + `,"timestamp":1}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + str(Word+" I see "+take()) + `},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":` + str("curl -u "+take()) + `}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + str(Word+" "+take()) + `}],"isError":false,"timestamp":3}}`,
		`{"type":"compaction","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","summary":` + str(Word+" summary: "+take()) + `,"firstKeptEntryId":"e3","tokensBefore":100}`,
		`{"type":"message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":` + str(Word+" done with "+take()) + `}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":5}}`,
	}
	return write(t, filepath.Join(root, "sessions", "--w-app--", fmt.Sprintf("2026-01-01T00-00-00-000Z_%s.jsonl", id)), lines)
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

// plantCopilot writes a Copilot CLI session under root/session-state,
// its title in workspace.yaml.
func plantCopilot(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("c0b11070-0000-4000-8000-%012d", k)
	dir := filepath.Join(root, "session-state", id)
	write(t, filepath.Join(dir, "workspace.yaml"), []string{"id: " + id, "cwd: /w/app", "name: deploy with " + take(), "user_named: true"})
	ev := func(n int, typ, data string) string {
		return fmt.Sprintf(`{"type":%q,"data":%s,"id":"ev%d","timestamp":"2026-01-01T00:00:0%dZ","parentId":null}`, typ, data, n, n)
	}
	args, _ := json.Marshal(map[string]string{"command": "export KEY=" + take()})
	lines := []string{
		ev(1, "session.start", `{"sessionId":"`+id+`","version":1,"producer":"copilot-agent","copilotVersion":"1.0.65","startTime":"2026-01-01T00:00:01Z","context":{"cwd":"/w/app"}}`),
		ev(2, "user.message", `{"content":`+str(Word+" use "+take())+`}`),
		ev(3, "assistant.message", `{"messageId":"m1","model":"gpt-5","content":`+str(Word+" ok "+take())+`,"reasoningText":`+str(Word+" thinking "+take())+`,"toolRequests":[{"toolCallId":"t1","name":"bash","arguments":`+string(args)+`}]}`),
		ev(4, "tool.execution_complete", `{"toolCallId":"t1","success":true,"result":{"content":`+str(Word+" out "+take())+`}}`),
	}
	return write(t, filepath.Join(dir, "events.jsonl"), lines)
}

// plantGemini writes a Gemini CLI chat under root/tmp/<project>/chats.
func plantGemini(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("6e000000-0000-4000-8000-%012d", k)
	args, _ := json.Marshal(map[string]string{"command": "echo " + take()})
	doc := `{"sessionId":"` + id + `","projectHash":"0000000000000000000000000000000000000000000000000000000000000001","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:03.000Z","messages":[` +
		`{"id":"m1","timestamp":"2026-01-01T00:00:01.000Z","type":"user","content":` + str(Word+" my key "+take()) + `},` +
		`{"id":"m2","timestamp":"2026-01-01T00:00:02.000Z","type":"gemini","content":` + str(Word+" ok "+take()) + `,"thoughts":[{"subject":"key","description":` + str(Word+" the key "+take()) + `,"timestamp":"2026-01-01T00:00:02.000Z"}],` +
		`"toolCalls":[{"id":"t1","name":"run_shell_command","args":` + string(args) + `,"status":"success","timestamp":"2026-01-01T00:00:02.500Z","result":[{"functionResponse":{"id":"t1","name":"run_shell_command","response":{"output":` + str(Word+" "+take()) + `}}}]}],` +
		`"model":"gemini-2.5-pro","tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":2}}]}`
	return write(t, filepath.Join(root, "tmp", "0000000000000000000000000000000000000000000000000000000000000001", "chats", fmt.Sprintf("session-2026-01-01T00-00-%s.json", id[len(id)-8:])), []string{doc})
}

// plantOpencode adds to the opencode database under root (made when
// there is none) three sessions, their titles, user and assistant text, reasoning, a tool's
// input and output holding secrets; it returns their paths.
func plantOpencode(t testing.TB, root string, take func() string) []string {
	db := filepath.Join(root, "opencode.db")
	os.MkdirAll(root, 0o700)
	var paths []string
	err := corpus.WriteOpencodeSessions(db, func(yield func(corpus.OpencodeSession) bool) {
		for k := range 3 {
			at := int64(1767225600000 + k*1000)
			o := corpus.OpencodeSession{ID: fmt.Sprintf("ses_planted%03d", k), Directory: "/w/app", Title: "deploy with " + take(), Created: at, Updated: at + 9}
			input, _ := json.Marshal(map[string]string{"command": "export KEY=" + take()})
			o.Messages = []corpus.OpencodeMessage{
				{Created: at + 1, Data: fmt.Sprintf(`{"role":"user","time":{"created":%d}}`, at+1),
					Parts: []string{`{"type":"text","text":` + str(Word+" the key is "+take()) + `}`}},
				{Created: at + 2, Data: fmt.Sprintf(`{"role":"assistant","time":{"created":%d},"modelID":"m","providerID":"p","tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`, at+2),
					Parts: []string{`{"type":"reasoning","text":` + str(Word+" thinking of "+take()) + `}`,
						`{"type":"text","text":` + str(Word+" ok "+take()) + `}`,
						`{"type":"tool","callID":"t1","tool":"bash","state":{"status":"completed","input":` + string(input) + `,"output":` + str(Word+" "+take()) + `,"time":{"end":` + fmt.Sprint(at+3) + `}}}`}},
			}
			paths = append(paths, filepath.Join(db, o.ID))
			if !yield(o) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// plantQwen writes a Qwen Code chat under root/projects/<cwd>/chats, its
// title a custom_title record.
func plantQwen(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("0e000000-0000-4000-8000-%012d", k)
	rec := func(uuid, parent, typ, rest string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"` + id + `","timestamp":"2026-01-01T00:00:01.000Z","type":"` + typ + `","cwd":"/w/app","version":"0.5.1",` + rest + `}`
	}
	args, _ := json.Marshal(map[string]string{"command": "echo " + take()})
	lines := []string{
		rec("u1", "", "user", `"message":{"role":"user","parts":[{"text":`+str(Word+" my key "+take())+`}]}`),
		rec("a1", "u1", "assistant", `"model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":`+str(Word+" thinking "+take())+`,"thought":true},{"text":`+str(Word+" ok "+take())+`},{"functionCall":{"id":"c1","name":"run_shell_command","args":`+string(args)+`}}]}`),
		rec("r1", "a1", "tool_result", `"message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":`+str(Word+" "+take())+`}}}]}`),
		rec("t1", "r1", "system", `"subtype":"custom_title","systemPayload":{"customTitle":`+str("deploy with "+take())+`}`),
	}
	return write(t, filepath.Join(root, "projects", "-w-app", "chats", id+".jsonl"), lines)
}

// plantContinue writes a Continue session under root/sessions, with its
// title in the document, and its entry in the index.
func plantContinue(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("c0c0c0c0-0000-4000-8000-%012d", k)
	args, _ := json.Marshal(map[string]string{"command": "echo " + take()})
	doc := `{"sessionId":"` + id + `","title":` + str("deploy with "+take()) + `,"workspaceDirectory":"/w/app","history":[` +
		`{"message":{"role":"user","content":` + str(Word+" my key "+take()) + `},"contextItems":[{"name":".env","description":".env","content":` + str("KEY="+take()) + `}]},` +
		`{"message":{"role":"thinking","content":` + str(Word+" thinking "+take()) + `},"contextItems":[]},` +
		`{"message":{"role":"assistant","content":` + str(Word+" ok "+take()) + `,"toolCalls":[{"id":"t1","type":"function","function":{"name":"run","arguments":` + str(string(args)) + `}}]},"contextItems":[]},` +
		`{"message":{"role":"tool","content":` + str(Word+" "+take()) + `,"toolCallId":"t1"},"contextItems":[]}]}`
	// Its index entry, for its time (the document has none).
	index := filepath.Join(root, "sessions", "sessions.json")
	var entries []map[string]string
	if b, err := os.ReadFile(index); err == nil {
		json.Unmarshal(b, &entries)
	}
	entries = append(entries, map[string]string{"sessionId": id, "title": "deploy", "dateCreated": "1767225601000", "workspaceDirectory": "/w/app"})
	b, _ := json.Marshal(entries)
	write(t, index, []string{string(b)})
	return write(t, filepath.Join(root, "sessions", id+".json"), []string{doc})
}

// plantKimi writes a Kimi CLI session's context and event log under
// root/sessions/<md5 of /w/app>/<id>/.
func plantKimi(t testing.TB, root string, k int, take func() string) string {
	id := fmt.Sprintf("4c000000-0000-4000-8000-%012d", k)
	dir := filepath.Join(root, "sessions", "0e6f4f8e2c8a3d1d8f8a2b0f8c8d9e10", id)
	args, _ := json.Marshal(map[string]string{"command": "echo " + take()})
	lines := []string{
		`{"role":"_checkpoint","id":0}`,
		`{"role":"user","content":` + str(Word+" my key "+take()) + `}`,
		`{"role":"assistant","content":[{"type":"think","think":` + str(Word+" thinking "+take()) + `},{"type":"text","text":` + str(Word+" ok "+take()) + `}],"tool_calls":[{"type":"function","id":"t1","function":{"name":"Shell","arguments":` + str(string(args)) + `}}]}`,
		`{"role":"tool","content":[{"type":"text","text":` + str(Word+" "+take()) + `}],"tool_call_id":"t1"}`,
	}
	write(t, filepath.Join(dir, "wire.jsonl"), []string{`{"type":"metadata","protocol_version":"1.3"}`,
		`{"timestamp":1767225601.0,"message":{"type":"TurnBegin","payload":{"user_input":"x"}}}`})
	return write(t, filepath.Join(dir, "context.jsonl"), lines)
}

// plantCline writes a Cline task's conversation and chat under
// root/tasks/<id>/.
func plantCline(t testing.TB, root string, k int, take func() string) string {
	dir := filepath.Join(root, "tasks", fmt.Sprintf("17672256%05d", k))
	api := `[{"role":"user","content":[{"type":"text","text":` + str("<task>"+Word+" use "+take()+"</task>") + `}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":` + str(Word+" thinking "+take()) + `},{"type":"text","text":` + str(Word+" ok "+take()) + `},` +
		`{"type":"tool_use","id":"t1","name":"execute_command","input":{"command":` + str("echo "+take()) + `}}],"modelInfo":{"modelId":"m","providerId":"p"}},` +
		`{"role":"user","content":[{"type":"text","text":` + str("[execute_command] Result:\n"+Word+" "+take()) + `}]}]`
	write(t, filepath.Join(dir, "ui_messages.json"), []string{`[{"ts":1767225600000,"type":"say","say":"text","text":` + str(Word+" use "+take()) + `}]`})
	return write(t, filepath.Join(dir, "api_conversation_history.json"), []string{api})
}

// execSQL runs statements on the SQLite database at db, made if need be.
func execSQL(t testing.TB, db string, stmts ...string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(db), 0o700)
	c, err := sqlite3.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range stmts {
		if err := c.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// sqlStr is s as a SQL string literal.
func sqlStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// plantCrush writes a Crush project beside root (Crush's global data
// dir), its database's one session titled with a secret, and names it in
// root's projects.json as Crush does.
func plantCrush(t testing.TB, root string, k int, take func() string) string {
	project := filepath.Join(filepath.Dir(root), fmt.Sprintf("planted-crush-%d", k))
	db := filepath.Join(project, ".crush", "crush.db")
	id := fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", k)
	call, _ := json.Marshal(map[string]string{"command": "export KEY=" + take()})
	parts := func(v ...string) string { return sqlStr("[" + strings.Join(v, ",") + "]") }
	execSQL(t, db,
		`CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
			prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
			updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT)`,
		`CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]',
			model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT)`,
		fmt.Sprintf(`INSERT INTO sessions (id, parent_session_id, title, message_count, prompt_tokens, completion_tokens, cost, updated_at, created_at)
			VALUES (%s, NULL, %s, 3, 1, 1, 0.01, 1767225700, 1767225600)`, sqlStr(id), sqlStr("deploy with "+take())),
		fmt.Sprintf(`INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider) VALUES ('%s-1', %s, 'user', %s, '', 1767225600, 1767225600, NULL, NULL)`, id, sqlStr(id),
			parts(`{"type":"text","data":{"text":`+str(Word+" the key is "+take())+`}}`)),
		fmt.Sprintf(`INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider) VALUES ('%s-2', %s, 'assistant', %s, 'm', 1767225601, 1767225601, 1767225601, 'p')`, id, sqlStr(id),
			parts(`{"type":"reasoning","data":{"thinking":`+str(Word+" thinking of "+take())+`}}`,
				`{"type":"text","data":{"text":`+str(Word+" ok "+take())+`}}`,
				`{"type":"tool_call","data":{"id":"t1","name":"bash","input":`+str(string(call))+`}}`)),
		fmt.Sprintf(`INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider) VALUES ('%s-3', %s, 'tool', %s, '', 1767225602, 1767225602, NULL, 'p')`, id, sqlStr(id),
			parts(`{"type":"tool_result","data":{"tool_call_id":"t1","name":"bash","content":`+str(Word+" "+take())+`}}`)))
	list := filepath.Join(root, "projects.json")
	var doc struct {
		Projects []map[string]string `json:"projects"`
	}
	if b, err := os.ReadFile(list); err == nil {
		json.Unmarshal(b, &doc)
	}
	doc.Projects = append(doc.Projects, map[string]string{"path": project, "data_dir": filepath.Join(project, ".crush")})
	b, _ := json.Marshal(doc)
	write(t, list, []string{string(b)})
	return filepath.Join(db, id)
}

// plantGoose adds a session to Goose's database under root, its
// description holding a secret.
func plantGoose(t testing.TB, root string, k int, take func() string) string {
	db := filepath.Join(root, "sessions", "sessions.db")
	id := fmt.Sprintf("20260101_%d", k)
	args, _ := json.Marshal(map[string]string{"command": "export KEY=" + take()})
	msg := func(role, content string, at int) string {
		return fmt.Sprintf(`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (%s, '%s', %s, %d)`,
			sqlStr(id), role, sqlStr("["+content+"]"), at)
	}
	execSQL(t, db,
		`CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
			session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP, updated_at TIMESTAMP,
			accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER)`,
		`CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
			content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, metadata_json TEXT)`,
		fmt.Sprintf(`INSERT INTO sessions (id, name, description, session_type, working_dir, created_at, updated_at,
			accumulated_input_tokens, accumulated_output_tokens, input_tokens, output_tokens)
			VALUES (%s, 'CLI Session', %s, 'user', '/w/app', '2026-01-01 00:00:00', '2026-01-01 00:01:00', 2, 2, 1, 1)`,
			sqlStr(id), sqlStr("deploy with "+take())),
		msg("user", `{"type":"text","text":`+str(Word+" the key is "+take())+`}`, 1767225600),
		msg("assistant", `{"type":"thinking","thinking":`+str(Word+" thinking of "+take())+`,"signature":""},{"type":"text","text":`+str(Word+" ok "+take())+`},`+
			`{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":`+string(args)+`}}}`, 1767225601),
		msg("user", `{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":`+str(Word+" "+take())+`}]}}}`, 1767225602))
	return filepath.Join(db, id)
}

// plantAider writes an Aider project beside root (Aider's own dir), one
// run in its chat history, and names it in $XDEV_PROJECTS (Aider keeps
// no list of its projects).
func plantAider(t testing.TB, root string, k int, take func() string) string {
	project := filepath.Join(filepath.Dir(root), fmt.Sprintf("planted-aider-%d", k))
	write(t, filepath.Join(project, ".aider.chat.history.md"), []string{
		"", "# aider chat started at 2026-01-01 00:00:00", "",
		"> Main model: anthropic/claude-sonnet-4 with diff edit format  ", "",
		"#### " + Word + " the key is " + take() + "  ", "",
		Word + " ok, exporting KEY=" + take(), "",
		"> Tokens: 1.2k sent, 80 received. Cost: $0.01 message, $0.01 session.  ",
	})
	dirs := filepath.SplitList(os.Getenv("XDEV_PROJECTS"))
	if t, ok := t.(interface{ Setenv(string, string) }); ok {
		t.Setenv("XDEV_PROJECTS", strings.Join(append(dirs, project), string(filepath.ListSeparator)))
	}
	return filepath.Join(project, ".aider.chat.history.md", "20260101T000000")
}
