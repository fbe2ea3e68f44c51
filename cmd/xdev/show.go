package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

var showCommand = &command{
	name: "show", args: "[--tree | --raw] [--full] [--db URL] [--json] SESSION",
	summary: "Show a session as the model sees it on resume, its tree, or its entries",
	example: `  xdev show 01a11069             the context a resume would send, readable
  xdev show --tree 01a11069      the branch tree, labels, and the current leaf (●)
  xdev show --raw s.jsonl        the entries as stored, one JSON object a line
  xdev show --json 01a2 | jq '.messages[-1]'
  xdev show --db $XDEV_DATABASE_URL 01a11069   a session a team synced`,
	options: func() options { return &showOptions{} },
}

// showJSON is `xdev show --json`: the session and its context.
type showJSON struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	// Harness names who wrote the session: xdev, omp, file (an omp-format
	// file in no known place), db, or the harness whose transcript it is
	// (claude, codex, pi), its path then the source's.
	Harness string `json:"harness"`
	contextJSON
}

// treeJSON is one entry in `xdev show --tree --json`. parentId is null
// for a root, as on disk.
type treeJSON struct {
	ID        string   `json:"id"`
	ParentID  *string  `json:"parentId"`
	Type      string   `json:"type"`
	Role      string   `json:"role,omitempty"`
	Timestamp jsonTime `json:"timestamp"`
	Line      int      `json:"line"`
	Label     string   `json:"label,omitempty"`
	Summary   string   `json:"summary"`
	OnPath    bool     `json:"onPath"`
	Leaf      bool     `json:"leaf,omitzero"`
}

// showOptions are the flags and arguments of `xdev show`.
type showOptions struct {
	store   *storeFlags
	db      *dbFlags
	sources *sourceFlags
	tree    bool
	raw     bool
	full    bool
	asJSON  bool
	at      string
	around  int
	reveal  bool
	args    []string
}

func (o *showOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	o.db = addDBFlags(fs)
	fs.BoolVar(&o.tree, "tree", false, "draw the branch tree")
	fs.BoolVar(&o.raw, "raw", false, "print the entries as stored")
	fs.BoolVar(&o.full, "full", false, "print tool output whole (on a terminal it is cut to 12 lines)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.StringVar(&o.at, "at", "", "show the conversation around the entry of this id (a search hit's)")
	fs.IntVar(&o.around, "around", 3, "with --at: how many entries before and after it")
	fs.BoolVar(&o.reveal, "reveal", false, "print keys, tokens and passwords as they are (by default each is masked as [REDACTED kind …fp])")
}

func (o *showOptions) setArgs(args []string) { o.args = args }

func (o *showOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one SESSION (an id prefix, a file name or a path)")
	}
	if o.tree && o.raw {
		return usagef("--tree and --raw are different views; give one")
	}
	return withReadable(e, o.store, o.sources, o.db, o.args[0], func(r catalog.Readable) error { return o.show(e, r) })
}

// show shows the session r in the view the flags choose.
func (o *showOptions) show(e *env, r catalog.Readable) error {
	if o.at != "" {
		if o.tree || o.raw {
			return usagef("--at shows messages; it does not go with --tree or --raw")
		}
		return showAt(e, r, o.at, o.around, o.full, o.asJSON, o.reveal)
	}
	if o.tree || o.raw {
		// The whole file, one entry at a time: memory follows the number
		// of entries, not their size.
		x, err := r.OpenIndex()
		if err != nil {
			return err
		}
		defer x.Close()
		if o.raw {
			return showRaw(e, x)
		}
		return showTree(e, x, r, o.asJSON, o.reveal)
	}
	// The context is read a message at a time: that of a long session
	// never compacted is the whole file, and is never held whole.
	c, err := r.ReadContext()
	if err != nil {
		return err
	}
	defer c.Close()
	title, _ := c.Title()
	tokens, err := c.Tokens()
	if err != nil {
		return err
	}
	if o.asJSON {
		head := contextHead(c, tokens)
		head.Malformed += r.Skipped
		return writeShowJSON(e, showJSON{ID: c.Header().ID, Path: r.Shown, Harness: string(r.Harness), contextJSON: head}, c.Each, o.reveal)
	}
	w := bufio.NewWriter(e.Out)
	id := c.Header().ID
	switch {
	case r.Converted:
		id += " · " + r.Harness.Name() + " session, converted for reading"
	case slices.Contains(catalog.Foreign, r.Harness):
		id += " · " + r.Harness.Name() + " session" // read in place, in omp's format (pi's)
	}
	thinking := orDash(c.ThinkingLevel)
	if r.Converted && !c.ThinkingSet {
		thinking = "not recorded" // the harness keeps no level; "off" would be omp's default, not the session's
	}
	fmt.Fprintf(w, "%s\n%s · %s · model %s · thinking %s · ~%d tokens\n", shown(orUntitled(title), o.reveal), id, shown(term.HomePath(r.Shown), o.reveal),
		orDash(c.Model()), thinking, tokens)
	if r.Skipped > 0 {
		fmt.Fprintf(w, "%s of the %s transcript skipped as unreadable (torn, junk or too long), as omp's import skips them\n",
			term.Plural(r.Skipped, "line"), string(r.Harness))
	}
	if n := c.Malformed(); n > 0 {
		fmt.Fprintf(w, "%s skipped as unreadable (xdev verify %s)\n", term.Plural(n, "line"), o.args[0])
	}
	cut := 0
	if e.IsTTY && !o.full {
		cut = 12
	}
	if err := c.Each(func(m *ai.Message) error { printMessage(w, m, cut, o.reveal); return nil }); err != nil {
		return err
	}
	return w.Flush()
}

// writeShowJSON prints `xdev show --json`: the session's id, path and
// harness, then the context as `xdev context --json` prints it, its
// messages streamed from each.
func writeShowJSON(e *env, out showJSON, each func(func(*ai.Message) error) error, reveal bool) error {
	lead := []jsonx.Member{{Name: "id", Value: jsonx.Str(out.ID)}, {Name: "path", Value: jsonx.Str(out.Path)},
		{Name: "harness", Value: jsonx.Str(out.Harness)}}
	if !reveal {
		out.Title, out.titleValue = shown(out.Title, false), jsonx.Value{}
		lead[1].Value = jsonx.Str(shown(out.Path, false))
	}
	return writeContextJSON(e, lead, out.contextJSON, jsonx.Str(out.LeafID), each, !reveal)
}

func orUntitled(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return s
}

// printMessage renders one context message for reading in a terminal.
func printMessage(w io.Writer, m *ai.Message, cut int, reveal bool) {
	line := func(w io.Writer, parts ...string) {
		for k := range parts {
			parts[k] = shown(parts[k], reveal)
		}
		printLine(w, parts...)
	}
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
		line(w, m.Content.String)
	}
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case ai.BlockText:
			if m.Role == ai.RoleToolResult {
				printLine(w, cutLines(shown(b.Text, reveal), cut))
			} else {
				line(w, b.Text)
			}
		case ai.BlockThinking:
			printLine(w, "(thinking) ", cutLines(shown(b.Thinking, reveal), cut))
		case ai.BlockRedactedThinking:
			line(w, "(thinking, redacted)")
		case ai.BlockToolCall:
			line(w, "→ ", b.Name, " ", string(b.Arguments))
		case ai.BlockImage:
			line(w, "[image ", b.MimeType, "]")
		}
	}
	for _, s := range []string{m.Summary, m.Command, m.Code} {
		if s != "" {
			line(w, s)
		}
	}
	if m.Output != "" {
		printLine(w, cutLines(shown(m.Output, reveal), cut))
	}
}

// printLine writes parts and a newline as they are, without fmt's copy
// of each: a message's text can be tens of MB.
func printLine(w io.Writer, parts ...string) {
	for _, p := range parts {
		io.WriteString(w, p)
	}
	io.WriteString(w, "\n")
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
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %s more (--full shows all)", term.Plural(rest, "line"))
}

// showRaw prints the entries as stored, one line each.
func showRaw(e *env, x *session.Index) error {
	w := bufio.NewWriter(e.dataOut())
	var line []byte
	for i := range x.Len() {
		var err error
		if line, err = x.AppendRaw(line[:0], i); err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// showTree prints the entries as a tree, as `git log --graph` draws
// history: the active branch (root to leaf) runs down the left edge;
// a branch that leaves it is drawn indented where it leaves, and the main
// line goes on below at the left. So a long session stays at the left
// however often it forked. ● marks the leaf, * the entries on its path.
func showTree(e *env, x *session.Index, r catalog.Readable, asJSON, reveal bool) error {
	labels := x.Labels()
	onPath := make([]bool, x.Len())
	if leaf := x.Leaf(); leaf >= 0 {
		for _, i := range x.PathTo(leaf) {
			onPath[i] = true
		}
	}
	if asJSON {
		return treeJSONOut(e, x, r, labels, onPath, reveal)
	}
	t := &treePrinter{x: x, labels: labels, onPath: onPath, seen: make([]bool, x.Len()),
		w: bufio.NewWriter(e.Out), width: 120, reveal: reveal}
	if e.IsTTY {
		t.width = e.Width
	}
	t.tree = x.Tree()
	roots := slices.Clone(t.tree.Roots)
	// The root on the active branch last, so the main line ends the output.
	slices.SortStableFunc(roots, func(a, b int) int { return cmp.Compare(b2i(onPath[a]), b2i(onPath[b])) })
	for _, r := range roots {
		if err := t.chain(r, "", ""); err != nil {
			return err
		}
	}
	return t.w.Flush()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// treePrinter draws showTree's text.
type treePrinter struct {
	x      *session.Index
	labels map[string]string
	onPath []bool
	seen   []bool
	tree   *session.Tree
	w      *bufio.Writer
	width  int
	reveal bool
}

// chain prints the chain that starts at entry i: its first line after
// head ("├─" for a branch off another line), the rest after prefix, with
// the branches that leave it indented under a bar.
func (t *treePrinter) chain(i int, prefix, head string) error {
	cont := prefix
	if head != "" {
		cont = prefix + "│ "
	}
	if err := t.line(i, prefix+head); err != nil {
		return err
	}
	for {
		t.seen[i] = true
		var kids []int
		for _, k := range t.tree.Children(i) {
			if !t.seen[k] {
				kids = append(kids, k)
			}
		}
		if len(kids) == 0 {
			return nil
		}
		// The chain goes on with the child on the active branch, else the
		// latest one; the others branch off here.
		main := kids[len(kids)-1]
		for _, k := range kids {
			if t.onPath[k] {
				main = k
			}
		}
		for _, k := range kids {
			if k != main {
				t.seen[k] = true
				if err := t.chain(k, cont, "├─"); err != nil {
					return err
				}
			}
		}
		i = main
		t.seen[i] = true
		if err := t.line(i, cont); err != nil {
			return err
		}
	}
}

// line prints one entry: the mark, the id, its label in full, and as
// much of its summary as the width leaves.
func (t *treePrinter) line(i int, prefix string) error {
	en, _ := t.x.Entry(i) // an undecodable entry is summarized by its type
	if en == nil {
		return fmt.Errorf("%s: line %d: unreadable", t.x.Path(), t.x.Line(i))
	}
	mark := " "
	switch {
	case i == t.x.Leaf():
		mark = "●"
	case t.onPath[i]:
		mark = "*"
	}
	head := prefix + mark + " " + term.Escape(session.DisplayID(en.ID)) + " "
	if l := t.labels[en.ID]; l != "" {
		head += "[" + term.Fit(term.Escape(term.OneLine(shown(l, t.reveal))), 40) + "] "
	}
	summary := term.Escape(entrySummary(en, t.reveal))
	// Deep in nested branches even the head may not fit: then the line is
	// cut at the edge.
	fmt.Fprintln(t.w, term.Fit(head+term.Fit(summary, max(t.width-term.DisplayWidth(head), 12)), t.width))
	return nil
}

// treeJSONOut streams the entries as a JSON array, one decoded at a time.
func treeJSONOut(e *env, x *session.Index, r catalog.Readable, labels map[string]string, onPath []bool, reveal bool) error {
	w := bufio.NewWriter(e.RawOut)
	enc := jsontext.NewEncoder(w, jsontext.Multiline(true), jsontext.WithIndent("  "), jsontext.AllowInvalidUTF8(true))
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	leaf := x.Leaf()
	for i := range x.Len() {
		en, _ := x.Entry(i)
		if en == nil {
			return fmt.Errorf("%s: line %d: unreadable", x.Path(), x.Line(i))
		}
		t := treeJSON{ID: session.DisplayID(en.ID), Type: en.Type, Line: r.Line(x, i), Label: shown(labels[en.ID], reveal),
			Summary: entrySummary(en, reveal), OnPath: onPath[i], Leaf: i == leaf}
		if en.ParentID != "" {
			pid := session.DisplayID(en.ParentID)
			t.ParentID = &pid
		}
		if ts, err := session.ParseTime(en.Timestamp); err == nil {
			t.Timestamp = jsonTime(ts)
		}
		if m := en.Message(); m != nil {
			t.Role = string(m.Role)
		}
		if err := json.MarshalEncode(enc, t, json.Deterministic(true)); err != nil {
			return err
		}
	}
	if err := enc.WriteToken(jsontext.EndArray); err != nil {
		return err
	}
	w.WriteByte('\n')
	return w.Flush()
}

// entrySummary describes an entry in a few words, its secrets masked
// unless reveal: in each text before it is cut short, since a secret a
// cut ends is no longer one a rule knows ("KEY…" for "KEY\n").
func entrySummary(en *session.Entry, reveal bool) string {
	short := func(s string, n int) string { return term.Truncate(shownPrefix(s, n, reveal), n) }
	return shownPrefix(entryWords(en, short), 80, reveal) // and what is not cut (a label)
}

// entryWords describes an entry in a few words, each text as short(text,
// n) gives it at most n characters.
func entryWords(en *session.Entry, short func(s string, n int) string) string {
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
		return string(m.Role) + ": " + short(text, 60)
	case *session.Compaction:
		return "compaction: " + short(b.Summary, 50)
	case *session.BranchSummary:
		if b.Summary == "" {
			return "branch summary (none)"
		}
		return "branch summary: " + short(b.Summary, 50)
	case *session.ModelChange:
		return "model → " + b.Name()
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
		return "custom message " + b.CustomType + ": " + short(b.Content.Text(), 40)
	case *session.TitleChange:
		return "title → " + short(b.Title, 50)
	}
	return en.Type
}
