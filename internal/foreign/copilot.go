package foreign

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
)

// CopilotDir is GitHub Copilot CLI's dir: $COPILOT_HOME, else ~/.copilot.
// Its sessions are session-state/<id>/events.jsonl.
func CopilotDir() (string, error) { return envOrHome("COPILOT_HOME", ".copilot") }

// copilotEvents is the name of a Copilot session's event log.
const copilotEvents = "events.jsonl"

type copilotSource struct{ root string }

func (c copilotSource) Harness() string { return HarnessCopilot }
func (c copilotSource) Root() string    { return c.root }

// List lists the sessions under session-state/, each from its
// workspace.yaml (title, cwd, times) and its log's first records (the
// session.start, the first model and user message), never the whole log.
// Copilot keeps a subagent's work in its parent's log: there are no
// subagent files to list.
func (c copilotSource) List(bool) ([]Session, error) {
	dir := filepath.Join(c.root, "session-state")
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
		p := filepath.Join(dir, e.Name(), copilotEvents)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue // a session that never logged an event
		}
		out = append(out, copilotAt(p))
	}
	sortNewestFirst(out)
	return out, nil
}

func (c copilotSource) At(path string) (Session, error) {
	s := copilotAt(path)
	return s, s.Err
}

func (c copilotSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamCopilot(s.Path, s.Title, purpose, begin, emit)
	}
}

// copilotHeadBytes is how much of a log a listing reads: the
// session.start, the model and the system prompt (which can be long)
// come before the first user message.
const copilotHeadBytes = 256 << 10

// copilotAt describes the log at path from its head and workspace.yaml.
func copilotAt(path string) Session {
	s := Session{Harness: HarnessCopilot, Path: path, ID: filepath.Base(filepath.Dir(path))}
	f, _, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	ws := readWorkspaceYAML(filepath.Join(filepath.Dir(path), "workspace.yaml"))
	br := bufio.NewReaderSize(io.LimitReader(f, copilotHeadBytes), 64<<10)
	started := false
	for n := 1; ; n++ {
		b, _, rerr := readLineBounded(br, copilotHeadBytes)
		if v, perr := jsonx.Parse(b); perr == nil && v.Kind() == jsonx.Object {
			d := v.Get("data")
			switch typ, _ := v.Get("type").Text(); typ {
			case "session.start":
				started = true
				if id, ok := stringField(d, "sessionId"); ok {
					s.ID = id
				}
				s.Cwd, _ = stringField(d.Get("context"), "cwd")
				if ms := timestampMs(d.Get("startTime"), math.NaN()); !math.IsNaN(ms) {
					s.Created = Time(ms)
				}
			case "user.message":
				if s.FirstMessage == "" {
					s.FirstMessage, _ = stringField(d, "content")
				}
			}
			if !started {
				s.Err = fmt.Errorf("%s: line %d: not a Copilot CLI session.start", path, n)
				return s
			}
		} else if n == 1 {
			s.Err = fmt.Errorf("%s: line 1: not a Copilot CLI event", path)
			return s
		}
		if s.FirstMessage != "" || rerr != nil {
			break
		}
	}
	if ws.cwd != "" && s.Cwd == "" {
		s.Cwd = ws.cwd
	}
	s.Title = ws.name
	return s
}

// workspace is what a Copilot session's workspace.yaml says of it.
type workspace struct {
	name, cwd string
	userNamed bool
}

// readWorkspaceYAML reads the top-level scalars of a workspace.yaml that
// a listing uses. Copilot writes one "key: value" a line; a value may be
// quoted, single (” for ') or double (with backslash escapes). A file
// missing or unreadable is no workspace.
func readWorkspaceYAML(path string) workspace {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return workspace{}
	}
	defer f.Close()
	b := make([]byte, min(fi.Size(), 64<<10))
	n, _ := io.ReadFull(f, b)
	var w workspace
	for _, line := range strings.Split(string(b[:n]), "\n") {
		key, value, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || strings.HasPrefix(key, " ") || strings.HasPrefix(key, "#") {
			continue
		}
		value = yamlScalar(strings.TrimSpace(value))
		switch key {
		case "name":
			w.name = value
		case "cwd":
			w.cwd = value
		case "user_named":
			w.userNamed = value == "true"
		}
	}
	return w
}

// yamlScalar is the text of a YAML flow scalar as Copilot writes them.
func yamlScalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
		return v[1 : len(v)-1]
	}
	return v
}

// StreamCopilot converts the Copilot CLI event log at path into omp
// entries, one branch in the log's order (docs/import.md has the
// mapping): user.message becomes a user message of what was typed (not
// the transformedContent Copilot sends, with its injected reminders);
// assistant.message an assistant message of its reasoningText (thinking),
// content (text) and toolRequests (tool calls), with its outputTokens;
// tool.execution_complete a tool result, paired with its request by
// toolCallId; session.model_change a model change. Encrypted reasoning
// (reasoningOpaque, encryptedContent) cannot be read and is counted in
// Converted.EncryptedReasoning. The system prompt, turn and hook events,
// session.resume and session.shutdown (whose totals the usage ledger
// reads) become no entry. title is the workspace's name, if any.
func StreamCopilot(path, title string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	meta := &Converted{Title: title}
	if title != "" {
		meta.TitleSource = "auto"
		if readWorkspaceYAML(filepath.Join(filepath.Dir(path), "workspace.yaml")).userNamed {
			meta.TitleSource = "user"
		}
	}
	n := 0
	var err error
	meta.Skipped, err = eachRecord(path, func(r record) error {
		n++
		meta.noteStart(r.v.Get("timestamp"))
		if r.v.Get("type").Is("session.start") && meta.Cwd == "" {
			meta.Cwd, _ = stringField(r.v.Get("data").Get("context"), "cwd")
		}
		d := r.v.Get("data")
		if r.v.Get("type").Is("assistant.message") && (d.Get("reasoningOpaque").Truthy() || d.Get("encryptedContent").Truthy()) {
			meta.EncryptedReasoning++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: empty or malformed (no Copilot CLI event)", path)
	}
	if err := begin(meta); err != nil {
		return err
	}
	c := &chain{prefix: "copilot", purpose: purpose, emit: emit}
	toolNames := map[string]string{}
	model, fallback := "", 0.0
	_, err = eachRecord(path, func(r record) error {
		ts := timestampMs(r.v.Get("timestamp"), fallback)
		fallback = ts
		d := r.v.Get("data")
		if !isRecordValue(d) {
			return nil
		}
		switch typ, _ := r.v.Get("type").Text(); typ {
		case "session.model_change":
			if m, ok := stringField(d, "newModel"); ok && m != model {
				model = m
				return c.modelChange("github-copilot", m, ts, r.line)
			}
		case "user.message":
			text, _ := d.Get("content").Text()
			return c.message(userMessage([]jsonx.Value{textBlock(text)}, ts), ts, r.line)
		case "assistant.message":
			var content []jsonx.Value
			if t, ok := stringField(d, "reasoningText"); ok {
				content = append(content, thinkingBlock(t))
			}
			if t, ok := stringField(d, "content"); ok {
				content = append(content, textBlock(t))
			}
			for _, req := range d.Get("toolRequests").Items() {
				id, _ := stringField(req, "toolCallId")
				name, _ := stringField(req, "name")
				if id == "" {
					continue
				}
				toolNames[id] = name
				content = append(content, toolCallBlock(id, name, req.Get("arguments")))
			}
			if len(content) == 0 {
				return nil // an empty turn: nothing said, nothing called
			}
			m := model
			if dm, ok := stringField(d, "model"); ok {
				m = dm
			}
			out, _ := d.Get("outputTokens").Float()
			return c.message(assistantMessage(content, "github-copilot", "github-copilot", m, tokens{output: out}, ts), ts, r.line)
		case "tool.execution_complete":
			id, ok := stringField(d, "toolCallId")
			if !ok {
				return nil
			}
			isErr := !d.Get("success").Truthy()
			text, _ := d.Get("result").Get("content").Text()
			if isErr {
				if msg, ok := d.Get("error").Get("message").Text(); ok {
					text = msg
				}
			}
			name := toolNames[id]
			if name == "" {
				name = "unknown"
			}
			return c.message(toolResult(id, name, jsonx.ArrayOf(textBlock(text)), isErr, ts), ts, r.line)
		}
		return nil
	})
	return err
}

// copilotRecord reports whether v is a Copilot CLI event: a type with a
// dot and a data object (session.start, user.message, …).
func copilotRecord(v jsonx.Value) bool {
	typ, _ := v.Get("type").Text()
	return strings.Contains(typ, ".") && isRecordValue(v.Get("data")) && v.Get("id").Kind() == jsonx.String
}
