// Package searchtext is what is searchable in a session and how a search
// reads it, for every index of sessions (the local one, package search;
// the PostgreSQL store, package pgstore): the text of an entry (Of), the
// tokens of a text (ForTokens: unicode61's rule, with CJK characters one
// token each), the query language people type (Parse), and the snippet
// cut around a match (Cut). One rule each, so that a query means the same
// thing wherever it runs.
package searchtext

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

// MaxDocBytes bounds the text indexed per entry, and apart from it the
// thinking: the first 1 MiB of each. A longer tool output is found by
// what its first megabyte says.
const MaxDocBytes = 1 << 20

// MaxLineBytes bounds the memory one entry's line takes to index: a line
// up to 8 MiB is decoded whole; of a longer one, only the first
// session.TruncatedBytes are read (OfTruncated), never the line whole.
const MaxLineBytes = 8 << 20

// ReadOptions are how an index reads session files.
var ReadOptions = &session.OpenOptions{MaxLineBytes: MaxLineBytes}

// Roles a hit can have, as --role names them.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"    // a tool's result, or a shell or Python run
	RoleSummary   = "summary" // a compaction's or branch summary
	RoleCustom    = "custom"  // an extension's message
	RoleTitle     = "title"   // the session's title
)

// Doc is what an index keeps of one entry.
type Doc struct {
	Text     string // what people remember: message text, tool calls, results, summaries
	Thinking string // searched only when asked
	Role     string // one of the Role constants; "" for an entry with no text
	Tool     string // tool names, space-separated
	Model    string
	TS       int64 // Unix milliseconds; 0 when unknown
}

// Of extracts the searchable text of an entry. It is the one rule for
// what is searchable: the local index, the PostgreSQL store, the snippets
// and the tests' brute-force scans all call it.
func Of(e *session.Entry) Doc {
	d := Doc{TS: entryTime(e)}
	var text, thinking strings.Builder
	switch b := e.Body.(type) {
	case *session.Message:
		m := &b.Message
		if d.TS == 0 {
			d.TS = m.Timestamp
		}
		d.Role = roleOf(m.Role)
		switch m.Role {
		case ai.RoleUser, ai.RoleDeveloper:
			contentText(&text, m.Content)
		case ai.RoleAssistant:
			d.Model = m.Model
			var tools []string
			for _, blk := range m.Content.Blocks {
				switch blk.Type {
				case ai.BlockText:
					add(&text, blk.Text)
				case ai.BlockThinking:
					add(&thinking, blk.Thinking)
				case ai.BlockToolCall:
					tools = append(tools, blk.Name)
					add(&text, blk.Name)
					add(&text, argumentText(blk.Arguments))
				}
			}
			if m.Content.IsString {
				add(&text, m.Content.String)
			}
			d.Tool = strings.Join(tools, " ")
		case ai.RoleToolResult:
			d.Tool = m.ToolName
			contentText(&text, m.Content)
		case ai.RoleBashExecution:
			d.Tool = "bash"
			add(&text, m.Command)
			add(&text, m.Output)
		case ai.RolePythonExecution:
			d.Tool = "python"
			add(&text, m.Code)
			add(&text, m.Output)
		case ai.RoleCustom, ai.RoleHookMessage:
			contentText(&text, m.Content)
		default:
			contentText(&text, m.Content)
			add(&text, m.Summary)
		}
	case *session.Compaction:
		d.Role = RoleSummary
		add(&text, b.Summary)
		add(&text, b.ShortSummary)
	case *session.BranchSummary:
		d.Role = RoleSummary
		add(&text, b.Summary)
	case *session.CustomMessage:
		d.Role = RoleCustom
		contentText(&text, b.Content)
	}
	d.Text, d.Thinking = CapText(text.String()), CapText(thinking.String())
	if d.Text == "" && d.Thinking == "" {
		d.Role = ""
	}
	return d
}

// roleOf is the hit role of a message role: the one mapping, for Of and
// for an entry read from a cut line (OfTruncated).
func roleOf(r ai.Role) string {
	switch r {
	case ai.RoleUser, ai.RoleDeveloper:
		return RoleUser
	case ai.RoleAssistant:
		return RoleAssistant
	case ai.RoleToolResult, ai.RoleBashExecution, ai.RolePythonExecution:
		return RoleTool
	}
	return RoleCustom
}

func contentText(sb *strings.Builder, c ai.Content) {
	if c.IsString {
		add(sb, c.String)
		return
	}
	for _, b := range c.Blocks {
		if b.Type == ai.BlockText {
			add(sb, b.Text)
		}
	}
}

// add appends s on a line of its own, up to MaxDocBytes in all.
func add(sb *strings.Builder, s string) {
	if s == "" || sb.Len() > MaxDocBytes {
		return
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
	if room := MaxDocBytes + 1 - sb.Len(); len(s) > room {
		s = s[:room]
	}
	sb.WriteString(s)
}

// CapText cuts s to MaxDocBytes on a character boundary.
func CapText(s string) string {
	if len(s) <= MaxDocBytes {
		return s
	}
	s = s[:MaxDocBytes]
	// Drop a character the cut split: back to the start of the last one.
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				s = s[:i]
			}
			break
		}
	}
	return s
}

// argumentText is the text of a tool call's arguments: its string values
// and numbers, not its JSON punctuation or names, so that a search for
// "command" does not find every shell call.
func argumentText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	v, err := jsonx.Parse(raw)
	if err != nil {
		return string(raw)
	}
	var sb strings.Builder
	var walk func(v jsonx.Value)
	walk = func(v jsonx.Value) {
		if sb.Len() > MaxDocBytes {
			return
		}
		switch v.Kind() {
		case jsonx.String:
			s, _ := v.Text()
			add(&sb, s)
		case jsonx.Number:
			add(&sb, v.String())
		case jsonx.Array:
			for _, x := range v.Items() {
				walk(x)
			}
		case jsonx.Object:
			for _, m := range v.Members() {
				walk(m.Value)
			}
		}
	}
	walk(v)
	return sb.String()
}

// entryTime is the entry's timestamp in Unix milliseconds, 0 if it has
// none that parses.
func entryTime(e *session.Entry) int64 {
	if e.Timestamp == "" {
		return 0
	}
	ms := jsonx.ParseDate(e.Timestamp)
	if math.IsNaN(ms) {
		return 0
	}
	return int64(ms)
}
