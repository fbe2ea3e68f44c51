package foreign

import (
	"bufio"
	"cmp"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// Kimi CLI (Moonshot's) keeps a session a directory,
// sessions/<md5 of the work dir>/<session uuid>/ under its share dir
// (src/kimi_cli/share.py, session.py), holding
//
//	context.jsonl        the model's context, one message a line: {role
//	                     "user", content}, {role "assistant", content
//	                     [{type "think", think} | {type "text", text}],
//	                     tool_calls [{id, function {name, arguments (a
//	                     JSON string)}}]}, {role "tool", content,
//	                     tool_call_id}, and bookkeeping: {role
//	                     "_checkpoint", id}, {role "_usage", token_count}
//	context_sub_<n>.jsonl a subagent's context, the same lines
//	wire.jsonl           the UI's event log: {type "metadata",
//	                     protocol_version}, then {timestamp (Unix s),
//	                     message {type, payload}}: TurnBegin {user_input},
//	                     StatusUpdate {token_usage {input_other, output,
//	                     input_cache_read, input_cache_creation},
//	                     message_id}, SubagentEvent {event: the same kinds
//	                     for a subagent}, ContentPart, ToolCall, …
//	state.json           approvals and extra dirs
//
// kimi.json at the top names the work dirs ({work_dirs [{path}]}), whose
// md5 names their sessions' directory. context.jsonl has no times: a
// user message takes its turn's TurnBegin time from wire.jsonl, the
// entries after it that time too. No file names the model.

// KimiDir is Kimi CLI's share dir: $KIMI_SHARE_DIR, else ~/.kimi.
func KimiDir() (string, error) { return envOrHome("KIMI_SHARE_DIR", ".kimi") }

// The files of a Kimi session's directory.
const (
	kimiContext = "context.jsonl"
	kimiWire    = "wire.jsonl"
)

type kimiSource struct{ root string }

func (k kimiSource) Harness() string { return HarnessKimi }
func (k kimiSource) Root() string    { return k.root }

// kimiWorkDirs maps the md5 of each work dir kimi.json names to it.
func kimiWorkDirs(root string) map[string]string {
	f, fi, err := regularfile.Open(filepath.Join(root, "kimi.json"), 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	var doc struct {
		WorkDirs []struct {
			Path string `json:"path"`
		} `json:"work_dirs"`
	}
	if json.NewDecoder(io.LimitReader(f, min(fi.Size(), 16<<20))).Decode(&doc) != nil {
		return nil
	}
	out := map[string]string{}
	for _, w := range doc.WorkDirs {
		sum := md5.Sum([]byte(w.Path))
		out[hex.EncodeToString(sum[:])] = w.Path
	}
	return out
}

// List lists every session directory's context.jsonl, and with
// subagents its context_sub_<n>.jsonl files, each from its head and the
// head of the session's wire.jsonl.
func (k kimiSource) List(subagents bool) ([]Session, error) {
	dir := filepath.Join(k.root, "sessions")
	works, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cwds := kimiWorkDirs(k.root)
	var out []Session
	for _, w := range works {
		if !w.IsDir() {
			continue
		}
		sessions, _ := os.ReadDir(filepath.Join(dir, w.Name()))
		for _, s := range sessions {
			sd := filepath.Join(dir, w.Name(), s.Name())
			if !s.IsDir() {
				continue
			}
			files, _ := os.ReadDir(sd)
			for _, f := range files {
				name := f.Name()
				switch {
				case name == kimiContext, subagents && kimiSubagentFile(name):
					out = append(out, kimiAt(filepath.Join(sd, name), cwds))
				}
			}
		}
	}
	sortNewestFirst(out)
	return out, nil
}

// kimiSubagentFile reports whether name is a subagent's context file.
func kimiSubagentFile(name string) bool {
	return strings.HasPrefix(name, "context_sub_") && strings.HasSuffix(name, ".jsonl")
}

func (k kimiSource) At(path string) (Session, error) {
	s := kimiAt(path, kimiWorkDirs(k.root))
	return s, s.Err
}

func (k kimiSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamKimi(s.Path, s.Cwd, purpose, begin, emit)
	}
}

// kimiHeadBytes is how much of a context a listing reads.
const kimiHeadBytes = 64 << 10

// kimiAt describes the context file at path: its session's id (the
// directory's name; a subagent's is "sub<n>-" and it), the work dir its
// parent directory's md5 names, the first user message from its head,
// and the session's first time from its wire.jsonl.
func kimiAt(path string, cwds map[string]string) Session {
	dir := filepath.Dir(path)
	s := Session{Harness: HarnessKimi, Path: path, ID: filepath.Base(dir), Cwd: cwds[filepath.Base(filepath.Dir(dir))]}
	if name := filepath.Base(path); kimiSubagentFile(name) {
		// sub<n>-<uuid>: not the parent's id and more, so that a prefix
		// of the parent's names it alone.
		s.Subagent, s.ParentSession = true, s.ID
		s.ID = "sub" + strings.TrimSuffix(strings.TrimPrefix(name, "context_sub_"), ".jsonl") + "-" + s.ID
	}
	f, _, ok := openListed(&s)
	if !ok {
		return s
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, kimiHeadBytes), 64<<10)
	for n := 1; ; n++ {
		b, _, rerr := readLineBounded(br, kimiHeadBytes)
		if v, err := jsonx.Parse(b); err == nil && v.Kind() == jsonx.Object {
			if !kimiRecord(v) {
				s.Err = fmt.Errorf("%s: line %d: not a Kimi CLI context record", path, n)
				return s
			}
			if v.Get("role").Is("user") {
				s.FirstMessage = kimiText(v.Get("content"), "text")
			}
		}
		if s.FirstMessage != "" || rerr != nil {
			break
		}
	}
	if times := kimiTurnTimes(filepath.Join(dir, kimiWire), 1); len(times) > 0 {
		s.Created = Time(times[0])
	}
	if fi, err := os.Stat(filepath.Join(dir, kimiWire)); err == nil && fi.ModTime().After(s.Modified) && !s.Subagent {
		s.Modified = fi.ModTime()
	}
	if s.Created.IsZero() {
		s.Created = s.Modified
	}
	return s
}

// kimiRecord reports whether v is a line of a Kimi context: a role and no
// type, or one of its bookkeeping roles.
func kimiRecord(v jsonx.Value) bool {
	role, ok := v.Get("role").Text()
	if !ok || v.Get("type").Defined() || v.Get("message").Defined() {
		return false
	}
	switch role {
	case "_checkpoint", "_usage", "user", "assistant", "tool", "system":
		return true
	}
	return false
}

// kimiText is a content's text: a string, or its parts of type typ.
func kimiText(v jsonx.Value, typ string) string {
	if s, ok := v.Text(); ok {
		if typ == "text" {
			return s
		}
		return ""
	}
	var parts []string
	for _, p := range v.Items() {
		if !p.Get("type").Is(typ) {
			continue
		}
		if t, ok := p.Get(typ).Text(); ok && t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// kimiTurnTimes is the time (Unix ms) of each of the first n turns of
// the session's wire.jsonl (every turn for n < 0): its TurnBegin
// events, not a subagent's.
func kimiTurnTimes(wire string, n int) []float64 {
	var out []float64
	stop := errors.New("enough")
	eachRecord(wire, func(r record) error {
		if r.v.Get("message").Get("type").Is("TurnBegin") {
			if t, ok := r.v.Get("timestamp").Float(); ok && !math.IsNaN(t) && !math.IsInf(t, 0) {
				out = append(out, t*1000)
			}
			if n >= 0 && len(out) >= n {
				return stop
			}
		}
		return nil
	})
	return out
}

// StreamKimi converts the Kimi context at path into omp entries, one
// branch in the file's order (docs/import.md has the mapping): a user
// message becomes a user message; an assistant message an assistant
// message of its think parts (thinking), text parts (text) and tool_calls
// (tool calls, arguments parsed from their JSON string); a tool message a
// tool result paired by tool_call_id. _checkpoint and _usage lines and
// system messages become no entry. A user message is timed at its turn's
// TurnBegin in wire.jsonl, what follows it at the same time.
func StreamKimi(path, cwd string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	var turns []float64
	if !kimiSubagentFile(filepath.Base(path)) {
		turns = kimiTurnTimes(filepath.Join(filepath.Dir(path), kimiWire), -1)
	}
	c := &Converted{Cwd: cwd}
	if len(turns) > 0 {
		c.Started = Time(turns[0])
	} else if fi, err := os.Stat(path); err == nil {
		c.Started = fi.ModTime()
	}
	n := 0
	skipped, err := eachRecord(path, func(r record) error {
		if kimiRecord(r.v) {
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: empty or malformed (no Kimi CLI context record)", path)
	}
	c.Skipped = skipped
	if err := begin(c); err != nil {
		return err
	}
	ch := &chain{prefix: "kimi", purpose: purpose, emit: emit}
	ts := float64(c.Started.UnixMilli())
	users := 0
	toolNames := map[string]string{}
	_, err = eachRecord(path, func(r record) error {
		v := r.v
		switch role, _ := v.Get("role").Text(); role {
		case "user":
			if users < len(turns) {
				ts = max(ts, turns[users])
			}
			users++
			text := kimiText(v.Get("content"), "text")
			if text == "" {
				return nil
			}
			return ch.message(userMessage([]jsonx.Value{textBlock(text)}, ts), ts, r.line)
		case "assistant":
			var content []jsonx.Value
			if t := kimiText(v.Get("content"), "think"); t != "" {
				content = append(content, thinkingBlock(t))
			}
			if t := kimiText(v.Get("content"), "text"); t != "" {
				content = append(content, textBlock(t))
			}
			for _, call := range v.Get("tool_calls").Items() {
				block, id, name := functionCall(call)
				toolNames[id] = name
				content = append(content, block)
			}
			if len(content) == 0 {
				return nil
			}
			return ch.message(assistantMessage(content, "kimi", "kimi", "", tokens{}, ts), ts, r.line)
		case "tool":
			id, _ := stringField(v, "tool_call_id")
			text := kimiText(v.Get("content"), "text")
			isErr := strings.HasPrefix(text, "<system>ERROR")
			return ch.message(toolResult(id, cmp.Or(toolNames[id], "unknown"), jsonx.ArrayOf(textBlock(text)), isErr, ts), ts, r.line)
		}
		return nil
	})
	return err
}

// Usage reads the session's calls from its wire.jsonl: each StatusUpdate
// with token_usage is one call (input_other is the input not read from
// the cache), named by its message_id; a subagent's, wrapped in
// SubagentEvent, counts in the session that spawned it, so a subagent's
// own context has none. No file names the model: the calls are of model
// "unknown", unpriced.
func (k kimiSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessKimi, s)
	if s.Subagent {
		return u, nil
	}
	skipped, err := eachRecord(filepath.Join(filepath.Dir(s.Path), kimiWire), func(r record) error {
		m := r.v.Get("message")
		if m.Get("type").Is("SubagentEvent") {
			m = m.Get("payload").Get("event")
		}
		if !m.Get("type").Is("StatusUpdate") {
			return nil
		}
		p := m.Get("payload")
		t := p.Get("token_usage")
		if !isRecordValue(t) {
			return nil
		}
		at, _ := r.v.Get("timestamp").Float()
		c := usage.Call{Time: at * 1000, Model: usage.RefModel("kimi", "unknown", "")}
		if id, ok := stringField(p, "message_id"); ok {
			c.Request = usage.RequestKey("kimi " + id)
		}
		bad := &c.MalformedUsageCounters
		c.Tokens = usage.Tokens{Input: counter(t.Get("input_other"), bad), Output: counter(t.Get("output"), bad),
			CacheRead: counter(t.Get("input_cache_read"), bad), CacheWrite: counter(t.Get("input_cache_creation"), bad)}
		c.Total = c.Tokens.Sum()
		u.Calls = append(u.Calls, c)
		return nil
	})
	u.Skipped += skipped
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // a session without its event log has no calls to read
	}
	return u, err
}
