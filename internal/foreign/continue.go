package foreign

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// Continue (the VS Code and JetBrains extension, and its CLI) keeps a
// session a JSON document, sessions/<sessionId>.json under its global
// dir, and an index of them, sessions/sessions.json: an array of
// {sessionId, title, dateCreated (Unix ms, as a string), workspaceDirectory}
// (core/util/paths.ts, core/util/history.ts). A session (core/index.d.ts,
// Session) is {sessionId, title, workspaceDirectory, history, mode?,
// chatModelTitle?, usage?}; each history item is {message, contextItems,
// promptLogs?, toolCallStates?, reasoning?, conversationSummary?}, its
// message one of
//
//	{role "user", content: a string or parts ({type "text", text} or
//	{type "imageUrl"})}
//	{role "assistant", content, toolCalls? [{id, function {name,
//	arguments (a JSON string)}}], usage? {promptTokens, completionTokens,
//	promptTokensDetails {cachedTokens, cacheWriteTokens}}}
//	{role "thinking", content}
//	{role "tool", content, toolCallId}
//	{role "system", content}
//
// Nothing in a session is timed: its entries take the index's
// dateCreated, else the file's modification time.

// ContinueDir is Continue's global dir: $CONTINUE_GLOBAL_DIR, else
// ~/.continue.
func ContinueDir() (string, error) { return envOrHome("CONTINUE_GLOBAL_DIR", ".continue") }

type continueSource struct{ root string }

func (c continueSource) Harness() string { return HarnessContinue }
func (c continueSource) Root() string    { return c.root }

// continueIndexEntry is one entry of sessions.json.
type continueIndexEntry struct {
	SessionID          string `json:"sessionId"`
	Title              string `json:"title"`
	DateCreated        string `json:"dateCreated"`
	WorkspaceDirectory string `json:"workspaceDirectory"`
}

// continueIndexMax bounds the index read whole.
const continueIndexMax = 64 << 20

// continueIndex reads sessions.json under dir: its entries by session
// id, nil when it is missing or unreadable (the files still list).
func continueIndex(dir string) map[string]continueIndexEntry {
	f, fi, err := regularfile.Open(filepath.Join(dir, "sessions.json"), 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > continueIndexMax {
		return nil
	}
	var list []continueIndexEntry
	if err := json.NewDecoder(io.LimitReader(f, continueIndexMax)).Decode(&list); err != nil {
		return nil
	}
	out := make(map[string]continueIndexEntry, len(list))
	for _, e := range list {
		out[e.SessionID] = e
	}
	return out
}

// List lists sessions/*.json (but the index), each from the index's
// entry (title, project, creation) and the file's head (its first user
// message). An index entry whose file is missing is not a session: it
// is counted in no listing but left as Continue keeps it.
func (c continueSource) List(bool) ([]Session, error) {
	dir := filepath.Join(c.root, "sessions")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	index := continueIndex(dir)
	var out []Session
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || e.Name() == "sessions.json" {
			continue
		}
		out = append(out, continueAt(filepath.Join(dir, e.Name()), index))
	}
	sortNewestFirst(out)
	return out, nil
}

func (c continueSource) At(path string) (Session, error) {
	s := continueAt(path, continueIndex(filepath.Dir(path)))
	return s, s.Err
}

func (c continueSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamContinue(s.Path, s.Created, purpose, begin, emit)
	}
}

// continueHeadBytes is how much of a session a listing reads.
const continueHeadBytes = 64 << 10

// continueAt describes the session at path from its index entry and its
// head.
func continueAt(path string, index map[string]continueIndexEntry) Session {
	s := Session{Harness: HarnessContinue, Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".json")}
	f, fi, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	head := make([]byte, min(fi.Size(), continueHeadBytes))
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !continueDocument(head) {
		s.Err = fmt.Errorf("%s: not a Continue session (no history, title or sessionId)", path)
		return s
	}
	if id, ok := headMember(head, "sessionId").Text(); ok && id != "" {
		s.ID = id
	}
	s.Title, _ = headMember(head, "title").Text()
	s.Cwd, _ = headMember(head, "workspaceDirectory").Text()
	if h := headMember(head, "history"); h.Kind() == jsonx.Array {
		s.FirstMessage = continueFirstUser(h)
	} else if u := afterMember(head, `"role"`, `"user"`); u >= 0 {
		// The history is longer than the head: the first user message's
		// content follows its role.
		s.FirstMessage = continueText(headMember(head[u:], "content"))
	}
	if e, ok := index[s.ID]; ok {
		s.Title = cmp.Or(e.Title, s.Title)
		s.Cwd = cmp.Or(e.WorkspaceDirectory, s.Cwd)
		if ms, err := strconv.ParseFloat(e.DateCreated, 64); err == nil && !math.IsNaN(ms) && ms > 0 {
			s.Created = Time(ms)
		}
	}
	if s.Created.IsZero() {
		s.Created = s.Modified
	}
	return s
}

// afterMember is the offset in b just past the first member name whose
// value is value (`"role": "user"` however spaced), or -1.
func afterMember(b []byte, name, value string) int {
	for i := 0; ; {
		k := strings.Index(string(b[i:]), name)
		if k < 0 {
			return -1
		}
		j := i + k + len(name)
		rest := strings.TrimLeft(string(b[j:]), " \t\r\n")
		if strings.HasPrefix(rest, ":") {
			v := strings.TrimLeft(rest[1:], " \t\r\n")
			if strings.HasPrefix(v, value) {
				return len(b) - len(v) + len(value)
			}
		}
		i = j
	}
}

// continueDocument reports whether the first bytes of a .json file are a
// Continue session's: an object with a history, sessionId or title
// member among its first.
func continueDocument(head []byte) bool {
	t := strings.TrimLeft(string(head), " \t\r\n")
	if !strings.HasPrefix(t, "{") {
		return false
	}
	return headMember(head, "history").Defined() || headMember(head, "sessionId").Kind() == jsonx.String
}

// continueFirstUser is the text of the first user message of a history.
func continueFirstUser(history jsonx.Value) string {
	for _, item := range history.Items() {
		if m := item.Get("message"); m.Get("role").Is("user") {
			return continueText(m.Get("content"))
		}
	}
	return ""
}

// continueText is a message's content as text: a string, or its text
// parts.
func continueText(v jsonx.Value) string {
	if s, ok := v.Text(); ok {
		return s
	}
	var parts []string
	for _, p := range v.Items() {
		if t, ok := p.Get("text").Text(); ok && (p.Get("type").Is("text") || !p.Get("type").Defined()) {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// readContinue reads the session document at path whole, and the line
// each history item starts on.
func readContinue(path string) (jsonx.Value, []int, error) {
	b, doc, err := readDocument(path, "a Continue session")
	if err != nil {
		return jsonx.Value{}, nil, err
	}
	if !isRecordValue(doc) || doc.Get("history").Kind() != jsonx.Array {
		return jsonx.Value{}, nil, fmt.Errorf("%s: not a Continue session (no history array)", path)
	}
	return doc, elementLines(b, "history"), nil
}

// StreamContinue converts the Continue session at path into omp entries,
// one branch in the history's order (docs/import.md has the mapping): a
// user message becomes a user message of its text and its context items
// (each a text block of its name and content, as Continue sends them); a
// thinking message and an item's reasoning the thinking of the assistant
// message after it; an assistant message an assistant message of its
// text and tool calls, with its usage, its model the item's prompt log's;
// a tool message a tool result, paired with its call by toolCallId (an
// error where the call's toolCallStates say "errored"). A
// system message becomes no entry. Entries are timed at created (the
// session's creation), as nothing in the file is timed.
func StreamContinue(path string, created time.Time, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	doc, lines, err := readContinue(path)
	if err != nil {
		return err
	}
	c := &Converted{Started: created}
	c.Cwd, _ = stringField(doc, "workspaceDirectory")
	if t, ok := stringField(doc, "title"); ok {
		c.Title, c.TitleSource = t, "auto"
	}
	if err := begin(c); err != nil {
		return err
	}
	ch := &chain{prefix: "continue", purpose: purpose, emit: emit}
	ts := 0.0
	if !created.IsZero() {
		ts = float64(created.UnixMilli())
	}
	sessionModel, _ := stringField(doc, "chatModelTitle")
	model := ""
	toolNames, failed := map[string]string{}, map[string]bool{}
	var thinking []jsonx.Value
	for k, item := range doc.Get("history").Items() {
		line := 1
		if k < len(lines) {
			line = lines[k]
		}
		m := item.Get("message")
		for _, st := range item.Get("toolCallStates").Items() {
			if id, ok := stringField(st, "toolCallId"); ok && st.Get("status").Is("errored") {
				failed[id] = true // on the item of the call, read by its result's
			}
		}
		if r := item.Get("reasoning"); isRecordValue(r) {
			if t, ok := stringField(r, "text"); ok {
				thinking = append(thinking, thinkingBlock(t))
			}
		}
		switch role, _ := m.Get("role").Text(); role {
		case "user":
			blocks := []jsonx.Value{}
			if t := continueText(m.Get("content")); t != "" {
				blocks = append(blocks, textBlock(t))
			}
			for _, ci := range item.Get("contextItems").Items() {
				body, _ := ci.Get("content").Text()
				name, _ := ci.Get("name").Text()
				if body != "" {
					blocks = append(blocks, textBlock(strings.TrimSpace(name+"\n\n"+body)))
				}
			}
			if len(blocks) == 0 {
				continue
			}
			if err := ch.message(userMessage(blocks, ts), ts, line); err != nil {
				return err
			}
		case "thinking":
			if t := continueText(m.Get("content")); t != "" {
				thinking = append(thinking, thinkingBlock(t))
			}
		case "assistant":
			mm := sessionModel
			provider := "continue"
			for _, log := range item.Get("promptLogs").Items() {
				if t, ok := stringField(log, "modelTitle"); ok {
					mm = t
				}
				if p, ok := stringField(log, "modelProvider"); ok {
					provider = p
				}
			}
			if mm != "" && mm != model {
				model = mm
				if err := ch.modelChange(provider, mm, ts, line); err != nil {
					return err
				}
			}
			content := thinking
			thinking = nil
			if t := continueText(m.Get("content")); t != "" {
				content = append(content, textBlock(t))
			}
			for _, call := range m.Get("toolCalls").Items() {
				block, id, name := functionCall(call)
				toolNames[id] = name
				content = append(content, block)
			}
			if len(content) == 0 {
				continue
			}
			if err := ch.message(assistantMessage(content, provider, provider, model, continueTokens(m.Get("usage")), ts), ts, line); err != nil {
				return err
			}
		case "tool":
			id, _ := stringField(m, "toolCallId")
			name := cmp.Or(toolNames[id], "unknown")
			text := continueText(m.Get("content"))
			if err := ch.message(toolResult(id, name, jsonx.ArrayOf(textBlock(text)), failed[id], ts), ts, line); err != nil {
				return err
			}
		}
	}
	if len(thinking) > 0 {
		// Thinking with no answer after it: an assistant message of it.
		return ch.message(assistantMessage(thinking, "continue", "continue", model, tokens{}, ts), ts, 1)
	}
	return nil
}

// continueTokens is an assistant message's usage as omp's: promptTokens
// count the cached tokens and the cache writes, omp's input does not.
func continueTokens(u jsonx.Value) tokens {
	in := numberField(u, "promptTokens")
	d := u.Get("promptTokensDetails")
	cached, written := numberField(d, "cachedTokens"), numberField(d, "cacheWriteTokens")
	return tokens{input: max(0, in-cached-written), output: numberField(u, "completionTokens"), cacheRead: cached, cacheWrite: written}
}

// Usage reads each assistant message that records its usage (newer
// Continue versions) as one call, its model the item's prompt log's.
// Continue records cost only as the session's total (usage.totalCost),
// not per call: calls are priced by their model.
func (c continueSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessContinue, s)
	doc, _, err := readContinue(s.Path)
	if err != nil {
		return u, err
	}
	at := 0.0
	if !s.Created.IsZero() {
		at = float64(s.Created.UnixMilli())
	}
	model, _ := stringField(doc, "chatModelTitle")
	for _, item := range doc.Get("history").Items() {
		m := item.Get("message")
		for _, log := range item.Get("promptLogs").Items() {
			if t, ok := stringField(log, "modelTitle"); ok {
				model = t
			}
		}
		use := m.Get("usage")
		if !m.Get("role").Is("assistant") || !isRecordValue(use) {
			continue
		}
		c := usage.Call{Time: at, Model: usage.RefModel("", cmp.Or(model, "unknown"), "")}
		bad := &c.MalformedUsageCounters
		d := use.Get("promptTokensDetails")
		cached, written := counter(d.Get("cachedTokens"), bad), counter(d.Get("cacheWriteTokens"), bad)
		c.Tokens = usage.Tokens{Input: max(0, counter(use.Get("promptTokens"), bad)-cached-written), CacheRead: cached, CacheWrite: written,
			Output: counter(use.Get("completionTokens"), bad), Reasoning: counter(use.Get("completionTokensDetails").Get("reasoningTokens"), bad)}
		c.Total = c.Tokens.Sum()
		u.Calls = append(u.Calls, c)
	}
	return u, nil
}
