package foreign

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
)

// GeminiDir is Gemini CLI's dir: .gemini under $GEMINI_CLI_HOME (which
// Gemini CLI takes for the home directory), else ~/.gemini. Its sessions
// are tmp/<projectHash>/chats/session-*.json (one JSON document, older)
// or session-*.jsonl (a log of records, newer); a subagent's are
// chats/<parentId>/<id>.jsonl.
func GeminiDir() (string, error) {
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		return filepath.Join(h, ".gemini"), nil
	}
	return envOrHome("", ".gemini")
}

type geminiSource struct{ root string }

func (g geminiSource) Harness() string { return HarnessGemini }
func (g geminiSource) Root() string    { return g.root }

// List lists the chats of every project under tmp/, each from its first
// bytes (geminiHeadBytes): the id, start, project hash and first user
// message, never the whole chat.
func (g geminiSource) List(subagents bool) ([]Session, error) {
	projects, err := os.ReadDir(filepath.Join(g.root, "tmp"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, p := range projects {
		chats := filepath.Join(g.root, "tmp", p.Name(), "chats")
		ents, err := os.ReadDir(chats)
		if !p.IsDir() || err != nil {
			continue
		}
		for _, e := range ents {
			switch {
			case e.Type().IsRegular() && geminiChatName(e.Name()):
				out = append(out, geminiAt(filepath.Join(chats, e.Name()), false))
			case e.IsDir() && subagents:
				subs, _ := os.ReadDir(filepath.Join(chats, e.Name()))
				for _, s := range subs {
					if s.Type().IsRegular() && strings.HasSuffix(s.Name(), ".jsonl") {
						sa := geminiAt(filepath.Join(chats, e.Name(), s.Name()), true)
						sa.ParentSession = e.Name()
						out = append(out, sa)
					}
				}
			}
		}
	}
	sortNewestFirst(out)
	return out, nil
}

// geminiChatName reports whether name is a chat file's.
func geminiChatName(name string) bool {
	return strings.HasPrefix(name, "session-") && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl"))
}

func (g geminiSource) At(path string) (Session, error) {
	s := geminiAt(path, false)
	return s, s.Err
}

func (g geminiSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamGemini(s.Path, purpose, begin, emit)
	}
}

// geminiHeadBytes is how much of a chat a listing reads.
const geminiHeadBytes = 64 << 10

// geminiAt describes the chat at path from its head.
func geminiAt(path string, subagent bool) Session {
	s := Session{Harness: HarnessGemini, Path: path, Subagent: subagent}
	f, fi, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	head := make([]byte, min(fi.Size(), geminiHeadBytes))
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	var meta jsonx.Value
	if strings.HasSuffix(path, ".jsonl") {
		line, _, _ := bytes.Cut(head, []byte{'\n'})
		var err error
		if meta, err = jsonx.Parse(line); err != nil || !isRecordValue(meta) {
			s.Err = fmt.Errorf("%s: line 1: not a Gemini CLI chat's metadata", path)
			return s
		}
		for _, l := range bytes.Split(head, []byte{'\n'})[1:] {
			if v, err := jsonx.Parse(l); err == nil && v.Get("type").Is("user") {
				s.FirstMessage = geminiText(v.Get("content"))
				break
			}
		}
	} else {
		meta = geminiHeadMembers(head)
		if u := bytes.Index(head, []byte(`"type": "user"`)); u >= 0 {
			s.FirstMessage = geminiText(headMember(head[u:], "content"))
		}
	}
	id, ok := stringField(meta, "sessionId")
	if !ok {
		s.Err = fmt.Errorf("%s: not a Gemini CLI chat (no sessionId)", path)
		return s
	}
	s.ID = id
	if ms := timestampMs(meta.Get("startTime"), math.NaN()); !math.IsNaN(ms) {
		s.Created = Time(ms)
	}
	if dirs := meta.Get("directories").Items(); len(dirs) > 0 {
		s.Cwd, _ = dirs[0].Text()
	}
	s.Title, _ = stringField(meta, "summary")
	return s
}

// geminiHeadMembers reads the members of a chat document's first bytes
// that come before its messages: Gemini writes sessionId, projectHash,
// startTime and lastUpdated first, and a listing need not parse the rest.
func geminiHeadMembers(head []byte) jsonx.Value {
	var ms []jsonx.Member
	for _, name := range []string{"sessionId", "projectHash", "startTime", "lastUpdated", "summary"} {
		if v := headMember(head, name); v.Defined() {
			ms = append(ms, member(name, v))
		}
	}
	return jsonx.ObjectOf(ms...)
}

// headMember is the value of the first member called name in b, a part
// of a JSON document: what follows `"name":` parsed as one value.
func headMember(b []byte, name string) jsonx.Value {
	i := bytes.Index(b, []byte(`"`+name+`"`))
	if i < 0 {
		return jsonx.Value{}
	}
	rest := bytes.TrimLeft(b[i+len(name)+2:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return jsonx.Value{}
	}
	v, _, err := jsonx.ParsePrefix(bytes.TrimLeft(rest[1:], " \t\r\n"))
	if err != nil {
		return jsonx.Value{}
	}
	return v
}

// geminiText is a message's content as text: a string, or the text of
// its parts.
func geminiText(v jsonx.Value) string {
	if s, ok := v.Text(); ok {
		return s
	}
	var parts []string
	for _, p := range v.Items() {
		if t, ok := p.Get("text").Text(); ok {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// geminiMessage is one message of a chat, with the source line it
// starts on.
type geminiMessage struct {
	v    jsonx.Value
	line int
}

// readGemini reads a chat's messages as Gemini CLI loads them: a .json
// document's messages array; a .jsonl log replayed: its first line is the
// metadata, a record with an id adds the message or replaces the one of
// that id where it stands, {"$rewindTo": id} drops that message and all
// after it (an id not there drops all), {"$set": {...}} patches the
// metadata and, with messages, replaces the list. It returns the metadata
// and how many lines it skipped as unreadable.
func readGemini(path string) (meta jsonx.Value, msgs []geminiMessage, skipped int, err error) {
	if !strings.HasSuffix(path, ".jsonl") {
		b, doc, err := readDocument(path, "a Gemini chat")
		if err != nil {
			return meta, nil, 0, err
		}
		if !isRecordValue(doc) || doc.Get("messages").Kind() != jsonx.Array {
			return meta, nil, 0, fmt.Errorf("%s: not a Gemini CLI chat (no messages array)", path)
		}
		lines := messageLines(b)
		for k, m := range doc.Get("messages").Items() {
			line := 1
			if k < len(lines) {
				line = lines[k]
			}
			msgs = append(msgs, geminiMessage{m, line})
		}
		return doc, msgs, 0, nil
	}
	index := map[string]int{}
	first := true
	skipped, err = eachRecord(path, func(r record) error {
		v := r.v
		switch {
		case first:
			first = false
			meta = v
			for _, m := range v.Get("messages").Items() {
				msgs = appendGemini(msgs, index, geminiMessage{m, r.line})
			}
		case v.Get("$rewindTo").Kind() == jsonx.String:
			to, _ := v.Get("$rewindTo").Text()
			k, ok := index[to]
			if !ok {
				k = 0
			}
			for _, m := range msgs[k:] {
				id, _ := m.v.Get("id").Text()
				delete(index, id)
			}
			msgs = msgs[:k]
		case v.Get("id").Kind() == jsonx.String:
			msgs = appendGemini(msgs, index, geminiMessage{v, r.line})
		default:
			patch := v
			if isRecordValue(v.Get("$set")) {
				patch = v.Get("$set")
			}
			for _, m := range patch.Members() {
				meta = meta.With(m.Name, m.Value)
			}
			if patch.Get("messages").Kind() == jsonx.Array {
				msgs, index = nil, map[string]int{}
				for _, m := range patch.Get("messages").Items() {
					msgs = appendGemini(msgs, index, geminiMessage{m, r.line})
				}
			}
		}
		return nil
	})
	if err == nil && first {
		err = fmt.Errorf("%s: empty or malformed (no Gemini CLI metadata line)", path)
	}
	return meta, msgs, skipped, err
}

// appendGemini adds m, or replaces the message of its id where it stands.
func appendGemini(msgs []geminiMessage, index map[string]int, m geminiMessage) []geminiMessage {
	id, ok := m.v.Get("id").Text()
	if k, seen := index[id]; ok && seen {
		msgs[k] = m
		return msgs
	}
	if ok {
		index[id] = len(msgs)
	}
	return append(msgs, m)
}

// messageLines is the line each element of a chat document's messages
// array starts on.
func messageLines(doc []byte) []int { return elementLines(doc, "messages") }

// elementLines is the line each element of the top-level array member
// name of the JSON document doc starts on.
func elementLines(doc []byte, name string) []int {
	var lines []int
	jsonx.Members(doc, func(n, value []byte) {
		if string(n) != `"`+name+`"` && string(n) != name {
			return
		}
		line, at := 1, 0
		jsonx.Elements(value, func(el []byte) {
			start := cap(doc) - cap(el)
			line += bytes.Count(doc[at:start], []byte{'\n'})
			at = start
			lines = append(lines, line)
		})
	})
	return lines
}

// StreamGemini converts the Gemini CLI chat at path into omp entries
// (docs/import.md has the mapping): a user message becomes a user
// message; a gemini message an assistant message of its thoughts
// (thinking: subject and description), content (text) and toolCalls
// (tool calls, each followed by its tool result from the call's own
// result), with its tokens as usage; a change of model a model change.
// info, warning and error messages are the CLI's notices, not the
// conversation, and become no entry.
func StreamGemini(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	meta, msgs, skipped, err := readGemini(path)
	if err != nil {
		return err
	}
	c := &Converted{Skipped: skipped}
	if dirs := meta.Get("directories").Items(); len(dirs) > 0 {
		c.Cwd, _ = dirs[0].Text()
	}
	c.noteStart(meta.Get("startTime"))
	if t, ok := stringField(meta, "summary"); ok {
		c.Title, c.TitleSource = t, "auto"
	}
	if err := begin(c); err != nil {
		return err
	}
	ch := &chain{prefix: "gemini", purpose: purpose, emit: emit}
	model, fallback := "", 0.0
	if !c.Started.IsZero() {
		fallback = float64(c.Started.UnixMilli())
	}
	for _, m := range msgs {
		v := m.v
		ts := timestampMs(v.Get("timestamp"), fallback)
		fallback = ts
		switch typ, _ := v.Get("type").Text(); typ {
		case "user":
			if err := ch.message(userMessage([]jsonx.Value{textBlock(geminiText(v.Get("content")))}, ts), ts, m.line); err != nil {
				return err
			}
		case "gemini":
			if mm, ok := stringField(v, "model"); ok && mm != model {
				model = mm
				if err := ch.modelChange("google-gemini-cli", mm, ts, m.line); err != nil {
					return err
				}
			}
			var content []jsonx.Value
			for _, t := range v.Get("thoughts").Items() {
				subject, _ := stringField(t, "subject")
				desc, _ := stringField(t, "description")
				content = append(content, thinkingBlock(strings.TrimSpace(subject+"\n"+desc)))
			}
			if t := geminiText(v.Get("content")); t != "" {
				content = append(content, textBlock(t))
			}
			calls := v.Get("toolCalls").Items()
			for _, call := range calls {
				id, _ := stringField(call, "id")
				name, _ := stringField(call, "name")
				content = append(content, toolCallBlock(id, name, call.Get("args")))
			}
			if len(content) == 0 {
				continue
			}
			if err := ch.message(assistantMessage(content, "google-gemini-cli", "google-gemini-cli", model, geminiTokens(v.Get("tokens")), ts), ts, m.line); err != nil {
				return err
			}
			for _, call := range calls {
				id, _ := stringField(call, "id")
				name, _ := stringField(call, "name")
				cts := timestampMs(call.Get("timestamp"), ts)
				text, isErr := geminiResult(call)
				if err := ch.message(toolResult(id, name, jsonx.ArrayOf(textBlock(text)), isErr, cts), cts, m.line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// geminiTokens is a gemini message's tokens as omp's usage: Gemini's
// input counts the cached tokens, omp's does not; thoughts are output.
func geminiTokens(t jsonx.Value) tokens {
	in, _ := t.Get("input").Float()
	out, _ := t.Get("output").Float()
	cached, _ := t.Get("cached").Float()
	thoughts, _ := t.Get("thoughts").Float()
	total, _ := t.Get("total").Float()
	return tokens{input: max(0, in-cached), output: out + thoughts, cacheRead: cached, total: total}
}

// geminiResult is a tool call's result as text, and whether it failed.
func geminiResult(call jsonx.Value) (string, bool) {
	isErr := call.Get("status").Is("error")
	var parts []string
	for _, r := range call.Get("result").Items() {
		resp := r.Get("functionResponse").Get("response")
		switch {
		case resp.Get("output").Kind() == jsonx.String:
			s, _ := resp.Get("output").Text()
			parts = append(parts, s)
		case resp.Get("error").Defined():
			isErr = true
			if s, ok := resp.Get("error").Text(); ok {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(resp.Get("error").JSON()))
			}
		case resp.Defined():
			parts = append(parts, string(resp.JSON()))
		}
	}
	if len(parts) == 0 {
		if s, ok := stringField(call, "resultDisplay"); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n"), isErr
}

// geminiRecord reports whether v is a Gemini CLI chat's metadata: a
// sessionId and a projectHash.
func geminiRecord(v jsonx.Value) bool {
	return v.Get("sessionId").Kind() == jsonx.String && v.Get("projectHash").Kind() == jsonx.String
}

// geminiDocument reports whether the first bytes of a .json file are a
// Gemini CLI chat document's (an object whose first members include its
// sessionId and projectHash).
func geminiDocument(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '{' && geminiRecord(geminiHeadMembers(head))
}

// GeminiProject reports whether the Gemini chat s is one of the project
// at cwd: Gemini CLI keeps a project's chats under tmp/<projectHash>/,
// the SHA-256 of the project's path, and most chats name no directory.
func GeminiProject(s Session, cwd string) bool {
	if s.Harness != HarnessGemini {
		return false
	}
	sum := sha256.Sum256([]byte(cwd))
	dir := filepath.Dir(filepath.Dir(s.Path)) // tmp/<hash>
	if s.Subagent {
		dir = filepath.Dir(dir)
	}
	return filepath.Base(dir) == hex.EncodeToString(sum[:])
}
