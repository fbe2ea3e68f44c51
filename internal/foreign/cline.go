package foreign

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// Cline (the VS Code extension, saoudrizwan.claude-dev) keeps a task a
// directory, tasks/<taskId>/ under its storage (the extension's
// globalStorage, or the standalone CLI's data dir), the id a Unix
// millisecond time (src/core/storage/disk.ts):
//
//	api_conversation_history.json  what was sent to the model: Anthropic
//	    messages {role, content [blocks]}; an assistant's blocks are
//	    thinking, text and tool_use {id, name, input}, with modelInfo
//	    {modelId, providerId} and metrics {tokens {prompt, completion,
//	    cached}}; a tool's result is the next user message's first text
//	    block ("[read_file for 'x'] Result: …")
//	ui_messages.json  what the chat showed: {ts, type "say"|"ask",
//	    say|ask, text, modelInfo, conversationHistoryIndex}; say
//	    "api_req_started" holds the request's tokens and cost (its text,
//	    JSON: tokensIn, tokensOut, cacheWrites, cacheReads, cost)
//	task_metadata.json  files in context, models used, environments
//
// A task of ui_messages.json alone (an older or a cut-short one) still
// lists and shows, from what the chat showed.

// ClineDir is Cline's storage: $CLINE_DIR/data (the standalone CLI's),
// else VS Code's globalStorage of the extension where it is
// (~/.config/Code/User/globalStorage/saoudrizwan.claude-dev on Linux,
// ~/Library/Application Support/Code/… on macOS, %APPDATA%\Code\… on
// Windows: os.UserConfigDir), else ~/.cline/data.
func ClineDir() (string, error) {
	if d := os.Getenv("CLINE_DIR"); d != "" {
		return filepath.Join(d, "data"), nil
	}
	if cfg, err := os.UserConfigDir(); err == nil {
		vs := filepath.Join(cfg, "Code", "User", "globalStorage", "saoudrizwan.claude-dev")
		if _, err := os.Stat(filepath.Join(vs, "tasks")); err == nil {
			return vs, nil
		}
	}
	return envOrHome("", filepath.Join(".cline", "data"))
}

// The files of a Cline task.
const (
	clineAPI = "api_conversation_history.json"
	clineUI  = "ui_messages.json"
)

type clineSource struct{ root string }

func (c clineSource) Harness() string { return HarnessCline }
func (c clineSource) Root() string    { return c.root }

// List lists every task directory under tasks/ with a conversation or a
// chat, each from its name (the start), the head of its chat (the task,
// the working directory) and its files' times.
func (c clineSource) List(bool) ([]Session, error) {
	dir := filepath.Join(c.root, "tasks")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		td := filepath.Join(dir, e.Name())
		for _, name := range []string{clineAPI, clineUI} {
			if _, err := os.Lstat(filepath.Join(td, name)); err == nil {
				out = append(out, clineAt(filepath.Join(td, name)))
				break
			}
		}
	}
	sortNewestFirst(out)
	return out, nil
}

func (c clineSource) At(path string) (Session, error) {
	s := clineAt(path)
	return s, s.Err
}

func (c clineSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamCline(s.Path, purpose, begin, emit)
	}
}

// clineHeadBytes is how much of a task's chat a listing reads.
const clineHeadBytes = 64 << 10

// clineCwd finds the working directory in Cline's environment details.
var clineCwd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`# Current Working Directory \(([^)\\]+)\)`) })

// clineAt describes the task whose conversation or chat is at path.
func clineAt(path string) Session {
	dir := filepath.Dir(path)
	s := Session{Harness: HarnessCline, Path: path, ID: filepath.Base(dir)}
	f, fi, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	if name := filepath.Base(path); name != clineAPI && name != clineUI {
		s.Err = fmt.Errorf("%s: not a Cline task's %s or %s", path, clineAPI, clineUI)
		return s
	}
	head := make([]byte, min(fi.Size(), clineHeadBytes))
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !clineFile(path, head) {
		s.Err = fmt.Errorf("%s: not a Cline task file (not a JSON array)", path)
		return s
	}
	if ms, err := strconv.ParseInt(s.ID, 10, 64); err == nil && ms > 0 {
		s.Created = Time(float64(ms))
	}
	// The task, and the working directory, from the chat's head.
	ui := head
	if filepath.Base(path) != clineUI {
		ui = readHead(filepath.Join(dir, clineUI), clineHeadBytes)
	}
	if u := afterMember(ui, `"say"`, `"text"`); u >= 0 {
		s.FirstMessage, _ = headMember(ui[u:], "text").Text()
	}
	if s.FirstMessage == "" {
		if u := afterMember(head, `"type"`, `"text"`); u >= 0 {
			s.FirstMessage = clineTask(headMember(head[u:], "text"))
		}
	}
	for _, b := range [][]byte{ui, head} {
		if m := clineCwd().FindSubmatch(b); m != nil && s.Cwd == "" {
			s.Cwd = string(m[1])
		}
	}
	for _, name := range []string{clineAPI, clineUI, "task_metadata.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.ModTime().After(s.Modified) {
			s.Modified = fi.ModTime()
		}
	}
	if s.Created.IsZero() {
		s.Created = s.Modified
	}
	return s
}

// clineLocalCwd is a task's working directory where it is a path of
// this machine's kind (a task made on Windows names c:/…): else none, and
// an import asks for one.
func clineLocalCwd(cwd string) string {
	if filepath.IsAbs(cwd) {
		return cwd
	}
	return ""
}

// readHead is the first n bytes of the file at path (none when it cannot
// be read).
func readHead(path string, n int64) []byte {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, min(fi.Size(), n))
	k, _ := io.ReadFull(f, b)
	return b[:k]
}

// clineFile reports whether the file at path, whose first bytes are
// head, is a Cline task's conversation or chat: by its name, and a JSON
// array.
func clineFile(path string, head []byte) bool {
	name := filepath.Base(path)
	t := bytes.TrimLeft(head, " \t\r\n")
	return (name == clineAPI || name == clineUI) && len(t) > 0 && t[0] == '['
}

// clineTask is a user text block's task, without the <task> tags Cline
// wraps it in.
func clineTask(v jsonx.Value) string {
	t, _ := v.Text()
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "<task>")
	if i := strings.Index(t, "</task>"); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

// readClineArray reads the JSON array at path whole, and the line each
// element starts on.
func readClineArray(path string) (jsonx.Value, []int, error) {
	b, v, err := readDocument(path, "a Cline task file")
	if err != nil {
		return jsonx.Value{}, nil, err
	}
	if v.Kind() != jsonx.Array {
		return jsonx.Value{}, nil, fmt.Errorf("%s: not a Cline task file (not a JSON array)", path)
	}
	var lines []int
	line, at := 1, 0
	jsonx.Elements(b, func(el []byte) {
		start := cap(b) - cap(el)
		line += bytes.Count(b[at:start], []byte{'\n'})
		at = start
		lines = append(lines, line)
	})
	return v, lines, nil
}

// clineUITimes maps each conversationHistoryIndex of a task's chat to
// the time (Unix ms) of its first message there.
func clineUITimes(path string) map[int]float64 {
	ui, _, err := readClineArray(path)
	if err != nil {
		return nil
	}
	out := map[int]float64{}
	for _, m := range ui.Items() {
		i, ok := m.Get("conversationHistoryIndex").Float()
		ts, ok2 := m.Get("ts").Float()
		if ok && ok2 && !math.IsNaN(i) {
			if _, seen := out[int(i)]; !seen {
				out[int(i)] = ts
			}
		}
	}
	return out
}

// StreamCline converts the Cline task whose file is at path into omp
// entries, one branch in order (docs/import.md has the mapping): from
// api_conversation_history.json when the task has one, else from what
// its chat showed (streamClineUI).
func StreamCline(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	if filepath.Base(path) == clineUI {
		return streamClineUI(path, purpose, begin, emit)
	}
	msgs, lines, err := readClineArray(path)
	if err != nil {
		return err
	}
	s := clineAt(path)
	c := &Converted{Cwd: clineLocalCwd(s.Cwd), Started: s.Created}
	if err := begin(c); err != nil {
		return err
	}
	times := clineUITimes(filepath.Join(filepath.Dir(path), clineUI))
	ch := &chain{prefix: "cline", purpose: purpose, emit: emit}
	ts := float64(s.Created.UnixMilli())
	model := ""
	var pending []jsonx.Value // the last assistant message's tool calls, awaiting their results
	for k, m := range msgs.Items() {
		line := 1
		if k < len(lines) {
			line = lines[k]
		}
		if t, ok := times[k-1]; ok && t > ts {
			ts = t // the chat's message of the request that answered k-1
		}
		content := m.Get("content")
		if str, ok := content.Text(); ok {
			content = jsonx.ArrayOf(textBlock(str))
		}
		switch role, _ := m.Get("role").Text(); role {
		case "user":
			var text []jsonx.Value
			for _, b := range content.Items() {
				t, isText := b.Get("text").Text()
				switch {
				case b.Get("type").Is("tool_result"):
					id, _ := stringField(b, "tool_use_id")
					if err := ch.message(toolResult(id, clineCallName(pending, id), toolResultContent(b.Get("content")), b.Get("is_error").Truthy(), ts), ts, line); err != nil {
						return err
					}
					pending = slices.DeleteFunc(pending, func(p jsonx.Value) bool { return p.Get("id").Is(id) })
				case isText && len(pending) > 0:
					// Cline answers a call with text: "[name for 'x'] Result: …".
					id, _ := stringField(pending[0], "id")
					name, _ := stringField(pending[0], "name")
					isErr := strings.Contains(t[:min(len(t), 200)], "] Result:") && strings.Contains(t[:min(len(t), 400)], "Error")
					if err := ch.message(toolResult(id, name, jsonx.ArrayOf(textBlock(t)), isErr, ts), ts, line); err != nil {
						return err
					}
					pending = pending[1:]
				case isText && t != "":
					text = append(text, textBlock(t))
				}
			}
			pending = nil // calls the next message does not answer stay unanswered
			if len(text) > 0 {
				if err := ch.message(userMessage(text, ts), ts, line); err != nil {
					return err
				}
			}
		case "assistant":
			info := m.Get("modelInfo")
			provider, _ := stringField(info, "providerId")
			mm, _ := stringField(info, "modelId")
			provider = cmp.Or(provider, "cline")
			if mm != "" && provider+"/"+mm != model {
				model = provider + "/" + mm
				if err := ch.modelChange(provider, mm, ts, line); err != nil {
					return err
				}
			}
			var blocks []jsonx.Value
			pending = nil
			for _, b := range content.Items() {
				switch typ, _ := b.Get("type").Text(); typ {
				case "thinking":
					if t, ok := stringField(b, "thinking"); ok {
						blocks = append(blocks, thinkingBlock(t))
					}
				case "text":
					if t, ok := stringField(b, "text"); ok {
						blocks = append(blocks, textBlock(t))
					}
				case "tool_use":
					id, _ := stringField(b, "id")
					name, _ := stringField(b, "name")
					blocks = append(blocks, toolCallBlock(id, name, b.Get("input")))
					pending = append(pending, b)
				}
			}
			if len(blocks) == 0 {
				continue
			}
			tok := m.Get("metrics").Get("tokens")
			use := tokens{input: numberField(tok, "prompt"), output: numberField(tok, "completion"), cacheRead: numberField(tok, "cached")}
			if err := ch.message(assistantMessage(blocks, provider, provider, mm, use, ts), ts, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// clineCallName is the name of the call id among calls, "unknown" when
// it is not there.
func clineCallName(calls []jsonx.Value, id string) string {
	for _, c := range calls {
		if c.Get("id").Is(id) {
			name, _ := stringField(c, "name")
			return cmp.Or(name, "unknown")
		}
	}
	return "unknown"
}

// streamClineUI converts what a task's chat showed, for a task that has
// no conversation: its first text is the user's task; user_feedback the
// user's; text and completion_result the assistant's, with the reasoning
// before them as thinking; a tool's or a command's request a line of the
// assistant's text (the chat does not pair a result with it). The rest
// (api requests, checkpoints, progress, retries) becomes no entry.
func streamClineUI(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	ui, lines, err := readClineArray(path)
	if err != nil {
		return err
	}
	s := clineAt(path)
	c := &Converted{Cwd: clineLocalCwd(s.Cwd), Started: s.Created}
	if err := begin(c); err != nil {
		return err
	}
	ch := &chain{prefix: "cline", purpose: purpose, emit: emit}
	var thinking []jsonx.Value
	first := true
	for k, m := range ui.Items() {
		line := 1
		if k < len(lines) {
			line = lines[k]
		}
		ts, _ := m.Get("ts").Float()
		if m.Get("partial").Truthy() {
			continue
		}
		text, _ := m.Get("text").Text()
		say, _ := m.Get("say").Text()
		var user bool
		var body string
		switch say {
		case "text":
			user, body = first, text
			first = false
		case "user_feedback":
			user, body = true, text
		case "completion_result":
			body = text
		case "reasoning":
			if text != "" {
				thinking = append(thinking, thinkingBlock(text))
			}
			continue
		case "tool", "command":
			body = "[" + say + "] " + text
		default:
			continue
		}
		if body == "" {
			continue
		}
		if user {
			if err := ch.message(userMessage([]jsonx.Value{textBlock(body)}, ts), ts, line); err != nil {
				return err
			}
			continue
		}
		blocks := append(thinking, textBlock(body))
		thinking = nil
		if err := ch.message(assistantMessage(blocks, "cline", "cline", "", tokens{}, ts), ts, line); err != nil {
			return err
		}
	}
	return nil
}

// Usage reads the task's chat: each api_req_started whose request was
// answered (its text's JSON has a cost or tokens) is one call, with
// Cline's own cost, its model the chat's last modelInfo before it.
func (c clineSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessCline, s)
	ui, _, err := readClineArray(filepath.Join(filepath.Dir(s.Path), clineUI))
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return u, err
	}
	provider, model := "", ""
	for _, m := range ui.Items() {
		if info := m.Get("modelInfo"); isRecordValue(info) {
			provider, _ = stringField(info, "providerId")
			model, _ = stringField(info, "modelId")
		}
		if !m.Get("say").Is("api_req_started") {
			continue
		}
		text, _ := m.Get("text").Text()
		req, err := jsonx.Parse([]byte(text))
		if err != nil || !isRecordValue(req) || (!req.Get("cost").Defined() && !req.Get("tokensIn").Defined()) {
			continue // not answered (cancelled, failed)
		}
		ts, _ := m.Get("ts").Float()
		call := usage.Call{Time: ts, Model: usage.RefModel(provider, cmp.Or(model, "unknown"), "")}
		bad := &call.MalformedUsageCounters
		call.Tokens = usage.Tokens{Input: counter(req.Get("tokensIn"), bad), Output: counter(req.Get("tokensOut"), bad),
			CacheRead: counter(req.Get("cacheReads"), bad), CacheWrite: counter(req.Get("cacheWrites"), bad)}
		call.Total = call.Tokens.Sum()
		if cost, ok := req.Get("cost").Float(); ok && !math.IsNaN(cost) && !math.IsInf(cost, 0) && cost >= 0 {
			call.Cost, call.HasCost = cost, true
		}
		u.Calls = append(u.Calls, call)
	}
	return u, nil
}
