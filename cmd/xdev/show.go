package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

func init() {
	register(&command{
		name: "show", args: "[--tree | --raw] [--full] [--json] SESSION",
		summary: "Show a session as the model sees it on resume, its tree, or its entries",
		example: `  xdev show 01a22920             the context a resume would send, readable
  xdev show --tree 01a22920      the branch tree, labels, and the current leaf (●)
  xdev show --raw s.jsonl        the entries as stored, one JSON object a line
  xdev show --json 01a2 | jq '.messages[-1]'`,
		run: runShow,
	})
}

// showJSON is `xdev show --json`: the session and its context.
type showJSON struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	contextJSON
}

// treeJSON is one entry in `xdev show --tree --json`.
type treeJSON struct {
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	Type     string `json:"type"`
	Role     string `json:"role,omitempty"`
	Line     int    `json:"line"`
	Label    string `json:"label,omitempty"`
	Summary  string `json:"summary"`
	OnPath   bool   `json:"onPath"`
	Leaf     bool   `json:"leaf,omitzero"`
}

func runShow(e *env, args []string) error {
	c := commands["show"]
	fs := c.flags(e)
	store := addStoreFlags(fs)
	tree := fs.Bool("tree", false, "draw the branch tree")
	raw := fs.Bool("raw", false, "print the entries as stored")
	full := fs.Bool("full", false, "print tool output whole (on a terminal it is cut to 12 lines)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one SESSION (an id prefix, a file name or a path)")
	}
	if *tree && *raw {
		return usagef("--tree and --raw are different views; give one")
	}
	path, err := store.resolve(pos[0])
	if err != nil {
		return err
	}
	s, err := session.Open(path, &session.OpenOptions{Full: *tree || *raw})
	if err != nil {
		return err
	}
	switch {
	case *raw:
		w := bufio.NewWriter(e.dataOut())
		for _, en := range s.Entries() {
			w.Write(en.Raw())
			w.WriteByte('\n')
		}
		return w.Flush()
	case *tree:
		return showTree(e, s, *asJSON)
	}
	ctx := s.BuildContext()
	title, src := s.Title()
	if *asJSON {
		out := showJSON{ID: s.ID(), Path: path, contextJSON: contextJSON{
			LeafID: ctx.LeafID, Title: title, TitleSource: src.String(), Model: ctx.Model(),
			ThinkingLevel: ctx.ThinkingLevel, Tokens: ctx.Tokens, Malformed: s.Malformed(), Messages: ctx.Messages}}
		if out.Messages == nil {
			out.Messages = []ai.Message{}
		}
		return writeJSON(e, out)
	}
	w := bufio.NewWriter(e.stdout)
	fmt.Fprintf(w, "%s\n%s · %s · model %s · thinking %s · ~%d tokens\n", orUntitled(title), s.ID(), path,
		orDash(ctx.Model()), orDash(ctx.ThinkingLevel), ctx.Tokens)
	if n := s.Malformed(); n > 0 {
		fmt.Fprintf(w, "%s skipped as unreadable (xdev verify %s)\n", plural(n, "line"), pos[0])
	}
	cut := 0
	if e.tty && !*full {
		cut = 12
	}
	for i := range ctx.Messages {
		printMessage(w, &ctx.Messages[i], cut)
	}
	return w.Flush()
}

func orUntitled(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return s
}

// printMessage renders one context message for reading in a terminal.
func printMessage(w io.Writer, m *ai.Message, cut int) {
	head := string(m.Role)
	switch m.Role {
	case ai.RoleAssistant:
		if m.Model != "" {
			head += " · " + m.Model
		}
		if m.StopReason == ai.StopAborted || m.StopReason == ai.StopError {
			head += " · " + m.StopReason
		}
	case ai.RoleToolResult:
		head += " · " + m.ToolName
		if m.IsError != nil && *m.IsError {
			head += " · error"
		}
	}
	fmt.Fprintf(w, "\n── %s %s\n", head, strings.Repeat("─", max(3, 60-len([]rune(head)))))
	if m.Content.IsString {
		fmt.Fprintln(w, m.Content.String)
	}
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case ai.BlockText:
			if m.Role == ai.RoleToolResult {
				fmt.Fprintln(w, cutLines(b.Text, cut))
			} else {
				fmt.Fprintln(w, b.Text)
			}
		case ai.BlockThinking:
			fmt.Fprintf(w, "(thinking) %s\n", cutLines(b.Thinking, cut))
		case ai.BlockRedactedThinking:
			fmt.Fprintln(w, "(thinking, redacted)")
		case ai.BlockToolCall:
			fmt.Fprintf(w, "→ %s %s\n", b.Name, string(b.Arguments))
		case ai.BlockImage:
			fmt.Fprintf(w, "[image %s]\n", b.MimeType)
		}
	}
	for _, s := range []string{m.Summary, m.Command, m.Code} {
		if s != "" {
			fmt.Fprintln(w, s)
		}
	}
	if m.Output != "" {
		fmt.Fprintln(w, cutLines(m.Output, cut))
	}
}

// cutLines keeps the first n lines of s (all when n is 0).
func cutLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n == 0 {
		return s
	}
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) <= n {
		return s
	}
	rest := strings.Count(lines[n], "\n") + 1
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %s more (--full shows all)", plural(rest, "line"))
}

// showTree draws the entries as a tree: a chain continues on one column,
// a fork indents its branches. ● marks the leaf, * the entries on its path.
func showTree(e *env, s *session.Store, asJSON bool) error {
	entries := s.Entries()
	labels := s.Labels()
	leaf := s.LeafID()
	onPath := map[string]bool{}
	for _, en := range s.EntriesTo(leaf) {
		onPath[en.ID] = true
	}
	byID := map[string]bool{}
	for _, en := range entries {
		byID[en.ID] = true
	}
	children := map[string][]*session.Entry{}
	var roots []*session.Entry
	for _, en := range entries {
		if en.ParentID == "" || !byID[en.ParentID] || en.ParentID == en.ID {
			roots = append(roots, en)
		} else {
			children[en.ParentID] = append(children[en.ParentID], en)
		}
	}
	if asJSON {
		out := make([]treeJSON, 0, len(entries))
		for _, en := range entries {
			t := treeJSON{ID: en.ID, ParentID: en.ParentID, Type: en.Type, Line: en.Line(), Label: labels[en.ID],
				Summary: entrySummary(en), OnPath: onPath[en.ID], Leaf: en.ID == leaf}
			if m := en.Message(); m != nil {
				t.Role = string(m.Role)
			}
			out = append(out, t)
		}
		return writeJSON(e, out)
	}
	w := bufio.NewWriter(e.stdout)
	width := 72
	seen := map[string]bool{}
	var walk func(en *session.Entry, prefix string)
	line := func(en *session.Entry, prefix, branch string) {
		mark := " "
		switch {
		case en.ID == leaf:
			mark = "●"
		case onPath[en.ID]:
			mark = "*"
		}
		text := prefix + branch + mark + " " + en.ID + " " + entrySummary(en)
		if l := labels[en.ID]; l != "" {
			text += "  [" + l + "]"
		}
		fmt.Fprintln(w, truncateKeep(text, width+len(prefix)))
	}
	walk = func(en *session.Entry, prefix string) {
		for en != nil && !seen[en.ID] {
			seen[en.ID] = true
			kids := children[en.ID]
			// Branches that are not on the path first, so the path reads on.
			sort.SliceStable(kids, func(i, j int) bool { return !onPath[kids[i].ID] && onPath[kids[j].ID] })
			if len(kids) <= 1 {
				if len(kids) == 1 {
					en = kids[0]
					line(en, prefix, "")
					continue
				}
				return
			}
			for k, kid := range kids {
				if k == len(kids)-1 {
					line(kid, prefix, "└─")
					walk(kid, prefix+"  ")
				} else {
					line(kid, prefix, "├─")
					walk(kid, prefix+"│ ")
				}
			}
			return
		}
	}
	for _, r := range roots {
		line(r, "", "")
		walk(r, "")
	}
	return w.Flush()
}

// entrySummary describes an entry in a few words.
func entrySummary(en *session.Entry) string {
	switch b := en.Body.(type) {
	case *session.Message:
		m := &b.Message
		text := m.Text()
		if text == "" {
			for _, c := range m.ToolCalls() {
				text += "→ " + c.Name + " "
			}
		}
		if text == "" {
			text = m.Summary + m.Command
		}
		return string(m.Role) + ": " + truncate(text, 60)
	case *session.Compaction:
		return "compaction: " + truncate(b.Summary, 50)
	case *session.BranchSummary:
		if b.Summary == "" {
			return "branch summary (none)"
		}
		return "branch summary: " + truncate(b.Summary, 50)
	case *session.ModelChange:
		return "model → " + b.Model
	case *session.ThinkingLevelChange:
		if b.ThinkingLevel != nil {
			return "thinking → " + *b.ThinkingLevel
		}
		return "thinking → default"
	case *session.Label:
		return "label " + b.TargetID + " = " + orDash(b.Label)
	case *session.Custom:
		return "custom " + b.CustomType
	case *session.CustomMessage:
		return "custom message " + b.CustomType + ": " + truncate(b.Content.Text(), 40)
	case *session.TitleChange:
		return "title → " + truncate(b.Title, 50)
	}
	return en.Type
}

func truncateKeep(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
