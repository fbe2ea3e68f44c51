package foreign

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/usage"
)

// Qwen Code (a fork of Gemini CLI) keeps a chat a file:
// projects/<cwd with every / as ->/chats/<sessionId>.jsonl under its
// runtime dir. Each line is a ChatRecord (packages/core/src/services/
// chatRecordingService.ts): uuid and parentUuid (a tree, as Claude
// Code's), sessionId, timestamp, cwd, version and type, one of
//
//	user         message: Gemini's Content {role "user", parts [{text}]}
//	assistant    message {role "model", parts: text, {text, thought: true},
//	             {functionCall {id, name, args}}}, model, usageMetadata
//	tool_result  message {role "user", parts [{functionResponse {id, name,
//	             response {output | error}}}]}, toolCallResult {status}
//	system       subtype and systemPayload: custom_title {customTitle},
//	             chat_compression, ui_telemetry (each API response's
//	             tokens again), slash_command, at_command and others
//
// Records of a subagent carry isSidechain and are not the conversation.
// Qwen re-appends the metadata a listing reads (its title) near the end
// of the file, so a listing reads the head and the last 64 KiB.

// QwenDir is Qwen Code's runtime dir, where its projects' chats are:
// $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen.
func QwenDir() (string, error) {
	if d := os.Getenv("QWEN_RUNTIME_DIR"); d != "" {
		return d, nil
	}
	return envOrHome("QWEN_HOME", ".qwen")
}

type qwenSource struct{ root string }

func (q qwenSource) Harness() string { return HarnessQwen }
func (q qwenSource) Root() string    { return q.root }

// List lists the chats of every project under projects/, each from its
// head and tail.
func (q qwenSource) List(bool) ([]Session, error) {
	projects, err := os.ReadDir(filepath.Join(q.root, "projects"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, p := range projects {
		chats := filepath.Join(q.root, "projects", p.Name(), "chats")
		ents, err := os.ReadDir(chats)
		if !p.IsDir() || err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
				out = append(out, qwenAt(filepath.Join(chats, e.Name())))
			}
		}
	}
	sortNewestFirst(out)
	return out, nil
}

func (q qwenSource) At(path string) (Session, error) {
	s := qwenAt(path)
	return s, s.Err
}

func (q qwenSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamQwen(s.Path, purpose, begin, emit)
	}
}

// Usage reads every assistant record's usageMetadata: one call each,
// on every branch (a turn a rewind left was still a call) and a
// subagent's records too, each named by its record's uuid, which a fork
// (Qwen's /branch) copies, so that a fork's copy counts once.
// ui_telemetry repeats the tokens and is not read. Qwen records no cost.
func (q qwenSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessQwen, s)
	skipped, err := eachRecord(s.Path, func(r record) error {
		v := r.v
		meta := v.Get("usageMetadata")
		if !v.Get("type").Is("assistant") || !isRecordValue(meta) {
			return nil
		}
		id, _ := v.Get("uuid").Text()
		model, _ := stringField(v, "model")
		c := usage.Call{Time: timestampMs(v.Get("timestamp"), 0), Model: usage.RefModel("qwen", cmp.Or(model, "unknown"), ""),
			Request: usage.RequestKey("qwen record " + id)}
		bad := &c.MalformedUsageCounters
		prompt, cached := counter(meta.Get("promptTokenCount"), bad), counter(meta.Get("cachedContentTokenCount"), bad)
		thoughts := counter(meta.Get("thoughtsTokenCount"), bad)
		c.Tokens = usage.Tokens{Input: max(0, prompt-cached), CacheRead: cached,
			Output: counter(meta.Get("candidatesTokenCount"), bad) + thoughts, Reasoning: thoughts}
		c.Total = c.Tokens.Sum()
		if t, ok := meta.Get("totalTokenCount").Float(); ok && t > 0 && !math.IsInf(t, 0) {
			c.Total = t
		}
		u.Calls = append(u.Calls, c)
		return nil
	})
	u.Skipped += skipped
	return u, err
}

// qwenHeadBytes is how much of a chat's head and of its tail a listing
// reads.
const qwenHeadBytes = 64 << 10

// qwenAt describes the chat at path from its head (id, cwd, start, first
// user message) and its tail (the last title).
func qwenAt(path string) Session {
	s := Session{Harness: HarnessQwen, Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	f, fi, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, qwenHeadBytes), 64<<10)
	for n := 1; ; n++ {
		b, _, rerr := readLineBounded(br, qwenHeadBytes)
		if v, perr := jsonx.Parse(b); perr == nil && v.Kind() == jsonx.Object {
			if n == 1 && !qwenRecord(v) {
				s.Err = fmt.Errorf("%s: line 1: not a Qwen Code chat record", path)
				return s
			}
			if id, ok := stringField(v, "sessionId"); ok && n == 1 {
				s.ID = id
			}
			if s.Cwd == "" {
				s.Cwd, _ = stringField(v, "cwd")
			}
			if s.Created.IsZero() {
				if ms := timestampMs(v.Get("timestamp"), math.NaN()); !math.IsNaN(ms) {
					s.Created = Time(ms)
				}
			}
			if s.FirstMessage == "" && v.Get("type").Is("user") && !v.Get("isSidechain").Truthy() {
				s.FirstMessage = qwenText(v.Get("message").Get("parts"), false)
			}
		} else if n == 1 && len(bytes.TrimSpace(b)) > 0 {
			s.Err = fmt.Errorf("%s: line 1: not a Qwen Code chat record", path)
			return s
		}
		if s.FirstMessage != "" || rerr != nil {
			break
		}
	}
	// The last title, from the tail.
	from := max(0, fi.Size()-qwenHeadBytes)
	tail := make([]byte, fi.Size()-from)
	n, _ := f.ReadAt(tail, from)
	tail = tail[:n]
	if from > 0 {
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
	}
	for _, l := range bytes.Split(tail, []byte{'\n'}) {
		if !bytes.Contains(l, []byte(`"custom_title"`)) {
			continue
		}
		if v, err := jsonx.Parse(l); err == nil && v.Get("subtype").Is("custom_title") {
			if t, ok := stringField(v.Get("systemPayload"), "customTitle"); ok {
				s.Title = t
			}
		}
	}
	return s
}

// qwenText is the text of a Content's parts: the thoughts (thought) or
// the rest.
func qwenText(parts jsonx.Value, thought bool) string {
	var out []string
	for _, p := range parts.Items() {
		if t, ok := p.Get("text").Text(); ok && p.Get("thought").Truthy() == thought {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// qwenRecord reports whether v is a Qwen Code chat record: a sessionId,
// a uuid and either a Gemini-shaped message (parts) or a type only Qwen
// writes.
func qwenRecord(v jsonx.Value) bool {
	if v.Get("sessionId").Kind() != jsonx.String || v.Get("uuid").Kind() != jsonx.String {
		return false
	}
	return v.Get("message").Get("parts").Kind() == jsonx.Array || v.Get("type").Is("tool_result") ||
		(v.Get("type").Is("system") && v.Get("systemPayload").Kind() == jsonx.Object)
}

// qwenLink is where a record sits in the chat's tree.
type qwenLink struct {
	parent string
	line   int
}

// StreamQwen converts the Qwen Code chat at path into omp entries
// (docs/import.md has the mapping): the branch that ends at the chat's
// last conversation record, followed back through parentUuid as Qwen
// resumes it; a user record becomes a user message; an assistant record
// an assistant message of its thoughts (thinking), text and function
// calls (tool calls), with its usageMetadata; a tool_result record a tool
// result per functionResponse; a change of model a model change. System
// records and a subagent's (isSidechain) become no entry; the title is
// the last custom_title's.
func StreamQwen(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	// One pass for the tree (each record's parent and line, not the
	// records), one for the branch's records.
	links := map[string]qwenLink{}
	leaf := ""
	c := &Converted{}
	skipped, err := eachRecord(path, func(r record) error {
		v := r.v
		id, _ := v.Get("uuid").Text()
		if id == "" || v.Get("isSidechain").Truthy() {
			return nil
		}
		parent, _ := v.Get("parentUuid").Text()
		links[id] = qwenLink{parent, r.line}
		switch typ, _ := v.Get("type").Text(); typ {
		case "user", "assistant", "tool_result":
			leaf = id
		}
		if c.Cwd == "" {
			c.Cwd, _ = stringField(v, "cwd")
		}
		c.noteStart(v.Get("timestamp"))
		if v.Get("subtype").Is("custom_title") {
			if t, ok := stringField(v.Get("systemPayload"), "customTitle"); ok {
				c.Title, c.TitleSource = t, "user"
				if v.Get("systemPayload").Get("titleSource").Is("auto") {
					c.TitleSource = "auto"
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(links) == 0 {
		return fmt.Errorf("%s: empty or malformed (no Qwen Code chat record)", path)
	}
	c.Skipped = skipped
	if err := begin(c); err != nil {
		return err
	}
	onBranch := map[int]bool{} // the lines of the branch's records
	for id, n := leaf, 0; id != "" && n <= len(links); n++ {
		l, ok := links[id]
		if !ok || onBranch[l.line] {
			break // a parent not in the file, or a loop
		}
		onBranch[l.line] = true
		id = l.parent
	}
	ch := &chain{prefix: "qwen", purpose: purpose, emit: emit}
	model, fallback := "", 0.0
	if !c.Started.IsZero() {
		fallback = float64(c.Started.UnixMilli())
	}
	_, err = eachRecord(path, func(r record) error {
		if !onBranch[r.line] {
			return nil
		}
		v := r.v
		ts := timestampMs(v.Get("timestamp"), fallback)
		fallback = ts
		parts := v.Get("message").Get("parts")
		switch typ, _ := v.Get("type").Text(); typ {
		case "user":
			if t := qwenText(parts, false); t != "" {
				return ch.message(userMessage([]jsonx.Value{textBlock(t)}, ts), ts, r.line)
			}
			return qwenResults(ch, v, ts, r.line) // older chats answer calls on user records
		case "assistant":
			if mm, ok := stringField(v, "model"); ok && mm != model {
				model = mm
				if err := ch.modelChange("qwen", mm, ts, r.line); err != nil {
					return err
				}
			}
			var content []jsonx.Value
			if t := qwenText(parts, true); t != "" {
				content = append(content, thinkingBlock(t))
			}
			if t := qwenText(parts, false); t != "" {
				content = append(content, textBlock(t))
			}
			for _, p := range parts.Items() {
				if call := p.Get("functionCall"); call.Kind() == jsonx.Object {
					id, _ := stringField(call, "id")
					name, _ := stringField(call, "name")
					content = append(content, toolCallBlock(id, name, call.Get("args")))
				}
			}
			if len(content) == 0 {
				return nil
			}
			return ch.message(assistantMessage(content, "qwen", "qwen", model, qwenTokens(v.Get("usageMetadata")), ts), ts, r.line)
		case "tool_result":
			return qwenResults(ch, v, ts, r.line)
		}
		return nil
	})
	return err
}

// qwenResults adds a tool result for each functionResponse of a record.
func qwenResults(ch *chain, v jsonx.Value, ts float64, line int) error {
	failed := v.Get("toolCallResult").Get("status").Is("error")
	for _, p := range v.Get("message").Get("parts").Items() {
		fr := p.Get("functionResponse")
		if fr.Kind() != jsonx.Object {
			continue
		}
		id, _ := stringField(fr, "id")
		name, _ := stringField(fr, "name")
		if name == "" {
			name = "unknown"
		}
		resp := fr.Get("response")
		isErr := failed
		var text string
		switch {
		case resp.Get("output").Kind() == jsonx.String:
			text, _ = resp.Get("output").Text()
		case resp.Get("error").Defined():
			isErr = true
			if s, ok := resp.Get("error").Text(); ok {
				text = s
			} else {
				text = string(resp.Get("error").JSON())
			}
		case resp.Defined():
			text = string(resp.JSON())
		}
		if err := ch.message(toolResult(id, name, jsonx.ArrayOf(textBlock(text)), isErr, ts), ts, line); err != nil {
			return err
		}
	}
	return nil
}

// qwenTokens is an assistant record's usageMetadata as omp's usage, as
// Gemini's: the prompt counts the cached tokens, omp's input does not;
// thoughts are output.
func qwenTokens(u jsonx.Value) tokens {
	in := numberField(u, "promptTokenCount")
	cached := numberField(u, "cachedContentTokenCount")
	return tokens{input: max(0, in-cached), output: numberField(u, "candidatesTokenCount") + numberField(u, "thoughtsTokenCount"),
		cacheRead: cached, total: numberField(u, "totalTokenCount")}
}
