package foreign

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
)

// Aider keeps its chat in the project (the git repository's root) it ran
// in, appended to by every run: .aider.chat.history.md, Markdown
// (aider/io.py, InputOutput.append_chat_history), beside
// .aider.input.history (what was typed). Nothing in it is structured
// beyond its line prefixes:
//
//	# aider chat started at 2025-10-20 21:49:17   a run begins (local time)
//	#### text    the user's message (every line of it so prefixed)
//	> text       aider's own output, each line ending in two spaces: the
//	             command line, "Aider v0.86.1", "Main model: X with …"
//	             (older: "Models: X with …"; "Model: X with …" after
//	             /model), "Applied
//	             edit to …", and per reply "Tokens: 2.4k sent, 104
//	             received. Cost: $0.00042 message, $0.00042 session."
//	             (no cost for a model aider has no price of)
//	other        the assistant's reply, verbatim Markdown
//
// Each run is a session, named by the file's path and the run's start
// (…/.aider.chat.history.md/20251020T214917; a second run started in the
// same second gets "-2"). The project is the file's directory. Aider has
// no directory of its own that lists its projects: xdev reads the chat of
// the projects it is told of (ProjectReader) and of the directory it runs
// in and those above it. There are no ids, no per-message times and
// token counts are rounded ("2.4k"), as the file has them.

// AiderDir is Aider's own directory, ~/.aider (its caches and
// analytics): the place xdev names as Aider's, though its chats are in
// the projects.
func AiderDir() (string, error) { return envOrHome("", ".aider") }

// aiderChatMD is the name of Aider's chat history in a project.
const aiderChatMD = ".aider.chat.history.md"

// aiderMaxBytes bounds a chat history read to be listed or converted.
const aiderMaxBytes = 1 << 30

type aiderSource struct {
	root     string
	projects func() []string
}

func (a aiderSource) Harness() string { return HarnessAider }
func (a aiderSource) Root() string    { return a.root }

// WithProjects is the source that also reads the projects dirs names.
func (a aiderSource) WithProjects(dirs func() []string) Source {
	a.projects = dirs
	return a
}

// List lists the runs of the chat history of every project it knows of.
// A history that cannot be read is a row with its error.
func (a aiderSource) List(bool) ([]Session, error) {
	var dirs []string
	if a.projects != nil {
		dirs = a.projects()
	}
	return listAider(dirs), nil
}

// ListCwd lists the runs of the chat of the project at cwd, or above it.
func (a aiderSource) ListCwd(cwd string, _ bool) ([]Session, error) {
	return listAider(Ancestors(cwd)), nil
}

func listAider(dirs []string) []Session {
	var out []Session
	seen := map[string]bool{}
	for _, d := range dirs {
		chat := filepath.Join(d, aiderChatMD)
		if seen[chat] {
			continue
		}
		seen[chat] = true
		if fi, err := os.Lstat(chat); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		runs, err := aiderRuns(chat)
		if err != nil {
			out = append(out, Session{Harness: HarnessAider, ID: aiderChatMD, Path: chat, Cwd: d, Err: err})
			continue
		}
		out = append(out, runs...)
	}
	sortNewestFirst(out)
	return out
}

// aiderRunLine is the line that begins a run.
var aiderRunLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$`)
})

// aiderRun is one run of a chat history: where it is in the file.
type aiderRun struct {
	id          string
	start       time.Time
	line        int   // its header's line
	offset, end int64 // its bytes
}

// scanAiderRuns finds the runs of a chat history from its header lines.
func scanAiderRuns(chat string) ([]aiderRun, int64, error) {
	f, fi, err := regularfile.Open(chat, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if fi.Size() > aiderMaxBytes {
		return nil, 0, fmt.Errorf("%s: %d bytes, over the %d xdev reads of a chat history", chat, fi.Size(), int64(aiderMaxBytes))
	}
	var runs []aiderRun
	ids := map[string]int{}
	br := bufio.NewReaderSize(f, 256<<10)
	var off int64
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = br.ReadSlice('\n')
			off += int64(len(b))
			b = more
		}
		if m := aiderRunLine().FindSubmatch(bytes.TrimRight(b, "\r\n")); m != nil {
			t, _ := time.ParseInLocation(time.DateTime, string(m[1]), time.Local)
			id := t.Format("20060102T150405")
			if ids[id]++; ids[id] > 1 {
				id += "-" + strconv.Itoa(ids[id])
			}
			if n := len(runs); n > 0 {
				runs[n-1].end = off
			}
			runs = append(runs, aiderRun{id: id, start: t, line: line, offset: off})
		}
		off += int64(len(b))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: line %d: %w", chat, line, err)
		}
	}
	if n := len(runs); n > 0 {
		runs[n-1].end = off
	}
	return runs, fi.ModTime().UnixMilli(), nil
}

// aiderRuns lists the runs of a chat history: each one's start, its
// first message and, for the last, the file's modification time as when
// it ended (the others end as the next begins).
func aiderRuns(chat string) ([]Session, error) {
	runs, mtime, err := scanAiderRuns(chat)
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(runs))
	for i, r := range runs {
		s := Session{Harness: HarnessAider, ID: r.id, Path: containedPath(chat, r.id), Cwd: filepath.Dir(chat),
			Created: r.start, Modified: r.start, Size: r.end - r.offset}
		if i+1 < len(runs) {
			s.Modified = runs[i+1].start
		} else if mtime > 0 {
			s.Modified = time.UnixMilli(mtime)
		}
		s.FirstMessage = aiderFirstMessage(chat, r)
		out = append(out, s)
	}
	return out, nil
}

// aiderFirstMessage is the run's first user message, from its first
// 64 KiB.
func aiderFirstMessage(chat string, r aiderRun) string {
	f, _, err := regularfile.Open(chat, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, min(r.end-r.offset, 64<<10))
	n, _ := f.ReadAt(b, r.offset)
	var msg []string
	for _, l := range strings.Split(string(b[:n]), "\n") {
		if t, ok := strings.CutPrefix(l, "#### "); ok {
			msg = append(msg, strings.TrimRight(t, " \r"))
		} else if len(msg) > 0 {
			break
		}
	}
	return strings.Join(msg, "\n")
}

// aiderRunOf is the run a session's path names.
func aiderRunOf(path string) (chat string, run aiderRun, err error) {
	h, chat, id, ok := SplitContained(path)
	if !ok || h != HarnessAider {
		return "", aiderRun{}, fmt.Errorf("%s: not an Aider session (a path of %s, then the run's start)", path, aiderChatMD)
	}
	runs, _, err := scanAiderRuns(chat)
	if err != nil {
		return "", aiderRun{}, err
	}
	for _, r := range runs {
		if r.id == id {
			return chat, r, nil
		}
	}
	return "", aiderRun{}, fmt.Errorf("%s: %w: no run %s in %s", path, fs.ErrNotExist, id, chat)
}

func (a aiderSource) At(path string) (Session, error) {
	_, chat, id, ok := SplitContained(path)
	if !ok {
		return Session{}, fmt.Errorf("%s: not an Aider session (a path of %s, then the run's start)", path, aiderChatMD)
	}
	runs, err := aiderRuns(chat)
	if err != nil {
		return Session{}, err
	}
	return sessionIn(runs, path, chat, id)
}

func (a aiderSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamAider(s.Path, purpose, begin, emit)
	}
}

// An aiderEvent is what one run's lines say, in order.
type aiderEvent struct {
	kind  byte // 'u' a user message, 'a' an assistant's reply, 'm' a model, 't' a reply's tokens
	text  string
	line  int
	calls usage.Call // for 't'
}

// eachAiderEvent reads a run's lines as events: consecutive "#### "
// lines a user message; other lines, up to the next user message or
// aider output that closes a reply (its tokens), the assistant's reply;
// "Main model:"/"Model:" lines a model; "Tokens:" lines a reply's usage.
// Every other line of aider's output is left out.
func eachAiderEvent(chat string, r aiderRun, fn func(aiderEvent) error) error {
	f, _, err := regularfile.Open(chat, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(f, r.offset, r.end-r.offset), 256<<10)
	var user, reply []string
	userLine, replyLine := 0, 0
	flush := func() error {
		if len(user) > 0 {
			if err := fn(aiderEvent{kind: 'u', text: strings.Join(user, "\n"), line: userLine}); err != nil {
				return err
			}
			user = nil
		}
		if t := strings.TrimSpace(strings.Join(reply, "\n")); t != "" {
			if err := fn(aiderEvent{kind: 'a', text: t, line: replyLine}); err != nil {
				return err
			}
		}
		reply = nil
		return nil
	}
	// A Tokens line's cost may be on the next line, unprefixed (Aider
	// 0.50's "Cost: $0.01 message, $0.01 session. Use --no-stream …"):
	// the call is held a line for it.
	var held *aiderEvent
	release := func() error {
		if held == nil {
			return nil
		}
		e := *held
		held = nil
		return fn(e)
	}
	for line := r.line; ; line++ {
		b, over, rerr := readLineBounded(br, session.DefaultMaxLineBytes)
		l := strings.TrimRight(string(b), "\r\n")
		if held != nil {
			if strings.HasPrefix(l, "Cost: $") && !held.calls.HasCost {
				if c, ok := aiderTokens("Tokens: " + l); ok && c.HasCost {
					held.calls.Cost, held.calls.HasCost = c.Cost, true
				}
				l, over = "", true // the line is the call's
			}
			if err := release(); err != nil {
				return err
			}
		}
		switch {
		case over || line == r.line:
		case strings.HasPrefix(l, "#### ") || l == "####":
			if len(user) == 0 {
				if err := flush(); err != nil {
					return err
				}
				userLine = line
			}
			user = append(user, strings.TrimRight(strings.TrimPrefix(strings.TrimPrefix(l, "####"), " "), " "))
		case strings.HasPrefix(l, ">"):
			// Aider's own output. A Markdown quote in a reply reads the
			// same: the file does not tell them apart.
			out := strings.TrimSpace(strings.TrimPrefix(l, ">"))
			if m, ok := aiderModel(out); ok {
				if err := flush(); err != nil {
					return err
				}
				if err := fn(aiderEvent{kind: 'm', text: m, line: line}); err != nil {
					return err
				}
			}
			if call, ok := aiderTokens(out); ok {
				if err := flush(); err != nil {
					return err
				}
				held = &aiderEvent{kind: 't', line: line, calls: call}
			}
		case len(user) > 0 && strings.TrimSpace(l) == "":
			// Older Aider (0.50) wrote a blank line after each line of
			// a prompt: the prompt goes on while "####" lines follow.
		default:
			if len(user) > 0 {
				if err := flush(); err != nil {
					return err
				}
			}
			if len(reply) == 0 {
				if strings.TrimSpace(l) == "" {
					break
				}
				replyLine = line
			}
			reply = append(reply, l)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: line %d: %w", chat, line, rerr)
		}
	}
	if err := release(); err != nil {
		return err
	}
	return flush()
}

// aiderModel is the model a "Main model: X with …", "Models: X with …"
// or "Model: X with …" line names.
func aiderModel(out string) (string, bool) {
	var rest string
	ok := false
	for _, prefix := range []string{"Main model: ", "Models: ", "Model: "} {
		if rest, ok = strings.CutPrefix(out, prefix); ok {
			break
		}
	}
	if !ok {
		return "", false
	}
	m, _, _ := strings.Cut(rest, " ")
	return m, m != ""
}

// aiderCount is one "2.4k sent" part of a Tokens line.
var aiderCount = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([\d.,]+)([kKmM]?) (sent|received|cache write|cache hit)`)
})

// aiderCost is a Tokens line's cost of the message.
var aiderCost = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Cost: \$([\d.,]+) message`) })

// aiderTokens is the call a "Tokens: … sent, … received. Cost: $…
// message, $… session." line records: its tokens as the line rounds
// them; its cost where it gives one. The model is set by the caller.
func aiderTokens(out string) (usage.Call, bool) {
	rest, ok := strings.CutPrefix(out, "Tokens: ")
	if !ok {
		return usage.Call{}, false
	}
	var call usage.Call
	for _, m := range aiderCount().FindAllStringSubmatch(rest, -1) {
		n, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			continue
		}
		switch m[2] {
		case "k", "K":
			n *= 1e3
		case "m", "M":
			n *= 1e6
		}
		switch m[3] {
		case "sent":
			call.Tokens.Input = n
		case "received":
			call.Tokens.Output = n
		case "cache write":
			call.Tokens.CacheWrite = n
		case "cache hit":
			call.Tokens.CacheRead = n
		}
	}
	if m := aiderCost().FindStringSubmatch(rest); m != nil {
		if c, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil && c >= 0 {
			call.Cost, call.HasCost = c, true
		}
	}
	call.Total = call.Tokens.Sum()
	return call, true
}

// aiderProviderModel splits an Aider (litellm) model name into its
// provider and model: "gemini/gemini-2.5-pro" is gemini's; a name with
// no provider ("gpt-4o", "claude-3-5-sonnet-20240620") is left whole.
func aiderProviderModel(name string) (provider, model string) {
	if p, m, ok := strings.Cut(name, "/"); ok {
		return p, m
	}
	return "", name
}

// StreamAider converts the Aider run the path names into omp entries,
// one branch in the order of its lines (docs/import.md has the mapping):
// a user message for each "#### " block, an assistant message for each
// reply with the tokens of the "Tokens:" line that closes it, a model
// change for each model line. Each entry names, as its source line, the
// chat history's line it began at. The run has one time, its start:
// every entry has it.
func StreamAider(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	chat, r, err := aiderRunOf(path)
	if err != nil {
		return err
	}
	meta := &Converted{Cwd: filepath.Dir(chat), Started: r.start}
	if err := begin(meta); err != nil {
		return err
	}
	ch := &chain{prefix: "aider", purpose: purpose, emit: emit}
	ts := float64(r.start.UnixMilli())
	provider, model := "", ""
	var pending *aiderEvent // a reply waiting for its tokens
	emitReply := func(t tokens) error {
		if pending == nil {
			return nil
		}
		e := pending
		pending = nil
		return ch.message(assistantMessage([]jsonx.Value{textBlock(e.text)}, cmp.Or(provider, "aider"), provider, model, t, ts), ts, e.line)
	}
	err = eachAiderEvent(chat, r, func(e aiderEvent) error {
		switch e.kind {
		case 'u':
			if err := emitReply(tokens{}); err != nil {
				return err
			}
			return ch.message(userMessage([]jsonx.Value{textBlock(e.text)}, ts), ts, e.line)
		case 'a':
			if err := emitReply(tokens{}); err != nil {
				return err
			}
			pending = &e
		case 'm':
			if err := emitReply(tokens{}); err != nil {
				return err
			}
			provider, model = aiderProviderModel(e.text)
			return ch.modelChange(cmp.Or(provider, "aider"), model, ts, e.line)
		case 't':
			c := e.calls
			return emitReply(tokens{input: c.Tokens.Input, output: c.Tokens.Output, cacheRead: c.Tokens.CacheRead,
				cacheWrite: c.Tokens.CacheWrite, cost: c.Cost})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return emitReply(tokens{})
}

// Usage reads a run's calls: one per "Tokens:" line, of the model the
// run's last model line named, with the line's cost where it gives one.
func (a aiderSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessAider, s)
	chat, r, err := aiderRunOf(s.Path)
	if err != nil {
		return u, err
	}
	provider, model := "", ""
	err = eachAiderEvent(chat, r, func(e aiderEvent) error {
		switch e.kind {
		case 'm':
			provider, model = aiderProviderModel(e.text)
		case 't':
			c := e.calls
			c.Time = float64(r.start.UnixMilli())
			c.Model = usage.RefModel(provider, cmp.Or(model, "unknown"), "")
			u.Calls = append(u.Calls, c)
		}
		return nil
	})
	return u, err
}

// Stamp is what says a run changed: its bytes and end, which only the
// last run of a chat history has moving (the others end where the next
// began).
func (a aiderSource) Stamp(s Session) (size, mtime int64, err error) {
	return s.Size, s.Modified.UnixNano(), nil
}
