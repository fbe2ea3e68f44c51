// Package export renders a session's current branch for people: as
// Markdown, or as one self-contained HTML page that fetches nothing (its
// styles are inline, its images data: URIs, and its Content-Security-Policy
// forbids every other source).
//
// The transcript is the branch from the root to the leaf, whole: what was
// said, including what a compaction has since summarized, with the
// compaction's summary shown where it happened. (`xdev show` prints the
// context the model would see instead.)
package export

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// Doc is a transcript ready to render.
type Doc struct {
	Title   string
	ID      string
	Cwd     string
	Created string
	Path    string
	Items   []Item
}

// Item is one entry of the transcript.
type Item struct {
	ID       string
	Kind     string // a message role, or compaction, branch, model, note
	Time     string
	Label    string
	Model    string
	Text     string
	Thinking []string
	Calls    []Call
	Output   string // tool results, command output
	IsError  bool
	Images   []Image
}

// Call is a tool call.
type Call struct {
	Name string
	Args string // indented JSON
}

// Image is an image to show inline.
type Image struct {
	MimeType string
	Data     string // base64; empty when the blob is missing
	Bytes    int
}

// Build collects the transcript of s: the branch ending at its leaf. Open
// s with OpenOptions.Full to get the branch from its root.
func Build(s *session.Store) Doc {
	title, _ := s.Title()
	h := s.Header()
	d := Doc{Title: title, ID: h.ID, Cwd: h.Cwd, Created: h.Timestamp, Path: s.Path()}
	labels := s.Labels()
	for _, e := range s.EntriesTo(s.LeafID()) {
		it := Item{ID: e.ID, Time: e.Timestamp, Label: labels[e.ID]}
		switch b := e.Body.(type) {
		case *session.Message:
			m, _ := s.ResolveImages(b.Message)
			fillMessage(&it, &m)
		case *session.Compaction:
			it.Kind, it.Text = "compaction", b.Summary
		case *session.BranchSummary:
			if b.Summary == "" {
				continue
			}
			it.Kind, it.Text = "branch", b.Summary
		case *session.ModelChange:
			it.Kind, it.Text = "model", "Model: "+b.Model
		case *session.ResetBoundary:
			it.Kind, it.Text = "note", "Context cleared here (/clear)."
		case *session.CustomMessage:
			if !b.Display {
				continue
			}
			it.Kind, it.Text = "custom", b.Content.Text()
		default:
			continue
		}
		d.Items = append(d.Items, it)
	}
	return d
}

func fillMessage(it *Item, m *ai.Message) {
	it.Kind = string(m.Role)
	it.Model = m.Model
	it.IsError = m.IsError != nil && *m.IsError
	var text []string
	if m.Content.IsString {
		text = append(text, m.Content.String)
	}
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case ai.BlockText:
			text = append(text, b.Text)
		case ai.BlockThinking:
			if b.Thinking != "" {
				it.Thinking = append(it.Thinking, b.Thinking)
			}
		case ai.BlockToolCall:
			it.Calls = append(it.Calls, Call{Name: b.Name, Args: indentJSON(b.Arguments)})
		case ai.BlockImage:
			img := Image{MimeType: b.MimeType}
			if !session.IsBlobRef(b.Data) {
				img.Data = b.Data
				img.Bytes = len(b.Data) * 3 / 4
			}
			it.Images = append(it.Images, img)
		}
	}
	switch m.Role {
	case ai.RoleToolResult:
		it.Output, text = strings.Join(text, "\n"), nil
		it.Label = strings.TrimSpace(it.Label + " " + m.ToolName)
	case ai.RoleBashExecution, ai.RolePythonExecution:
		cmd := m.Command
		if cmd == "" {
			cmd = m.Code
		}
		text = append(text, cmd)
		it.Output = m.Output
	case ai.RoleBranchSummary, ai.RoleCompactionSummary:
		text = append(text, m.Summary)
	}
	it.Text = strings.Join(text, "\n\n")
}

func indentJSON(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// heading names an item for a person.
func (it Item) heading() string {
	switch it.Kind {
	case "user":
		return "User"
	case "assistant":
		if it.Model != "" {
			return "Assistant (" + it.Model + ")"
		}
		return "Assistant"
	case "toolResult":
		if it.IsError {
			return "Tool error"
		}
		return "Tool result"
	case "compaction":
		return "Compacted: summary of the conversation so far"
	case "branch":
		return "Branch summary"
	case "bashExecution":
		return "Shell"
	case "pythonExecution":
		return "Python"
	case "model", "note":
		return ""
	}
	return strings.ToUpper(it.Kind[:1]) + it.Kind[1:]
}

// when formats a timestamp for a person, in UTC.
func when(ts string) string {
	t, err := session.ParseTime(ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format(time.DateTime) + " UTC"
}

func orUntitled(s string) string {
	if s == "" {
		return "Untitled session"
	}
	return s
}

// fence returns a code fence longer than any run of backticks in s.
func fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
