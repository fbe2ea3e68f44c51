// Package export renders a session's current branch for people: as
// Markdown, or as one self-contained HTML page that fetches nothing (its
// styles are inline, its images data: URIs, and its Content-Security-Policy
// forbids every other source).
//
// The transcript is the branch from the root to the leaf: what was said,
// including what a compaction has since summarized, with the compaction's
// summary shown where it happened. (`xdev show` prints the context the
// model would see instead.)
//
// An export streams: it reads the session through a session.Index, one
// entry at a time, and writes each as it goes, so its memory does not
// follow the session's size. A page must also stay one a browser can open:
// Options.Budget keeps the newest part of the branch that fits and leaves
// out the oldest, saying what was left out (compaction summaries, which
// stand for it, are always kept), and Options.MaxOutput cuts long tool
// outputs.
package export

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// Options tune an export. The zero value exports the whole branch, every
// output whole.
type Options struct {
	// Budget bounds the bytes of session lines the export reads from the
	// branch (a line's size stands for what it becomes in the page): the
	// newest entries that fit are exported, the older ones left out and
	// counted. Zero means no bound.
	Budget int64
	// MaxOutput cuts each tool output, command output and thinking block to
	// this many bytes, saying how much was cut. Zero means whole.
	MaxOutput int
	// Around are words (a search's) that a cut keeps in view: an output
	// or thinking block that holds one only past MaxOutput shows the
	// MaxOutput bytes around its first, cut before and after, so that a
	// search hit opens on what it found.
	Around []string
	// Reveal writes the transcript's text as it is. By default every
	// secret in it (a key, a token, a password: internal/secrets) is
	// masked as [REDACTED kind …fp], since an export is made to be shared.
	Reveal bool
}

// PageDefaults are the options for an HTML page any browser opens at once:
// the newest 8 MiB of the branch, outputs cut at 64 KiB. A 110 MB session
// made a 124 MB page that Chromium needed 51 s to render.
var PageDefaults = Options{Budget: 8 << 20, MaxOutput: 64 << 10}

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
	Cut      int // bytes cut from Output and Thinking (Options.MaxOutput)
	// CutBefore is the bytes cut from Output's start to keep a word of
	// Options.Around in view.
	CutBefore int
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

// transcript is what an export walks: the branch of an Index and what of
// it the options keep.
type transcript struct {
	x       *session.Index
	opts    Options
	Title   string
	ID      string
	Cwd     string
	Created string
	Path    string
	Entries int // on the branch
	labels  map[string]string
	branch  []int // indexes of the branch, root first
	from    int   // the first position of branch exported whole
	// Omitted describes the entries before from that were left out.
	Omitted omission
}

// omission is the part of a branch an export left out.
type omission struct {
	Entries     int
	Bytes       int64
	First, Last string // their timestamps
}

func newTranscript(x *session.Index, opts *Options) *transcript {
	if opts == nil {
		opts = &Options{}
	}
	title, _ := x.Title()
	h := x.Header()
	t := &transcript{x: x, opts: *opts, Title: title, ID: h.ID, Cwd: h.Cwd, Created: h.Timestamp, Path: x.Path(),
		labels: x.Labels()}
	if !opts.Reveal {
		t.Title, t.Cwd, t.Path = secrets.Mask(t.Title), secrets.Mask(t.Cwd), secrets.Mask(t.Path)
	}
	if leaf := x.Leaf(); leaf >= 0 {
		t.branch = x.PathTo(leaf)
	}
	t.Entries = len(t.branch)
	if opts.Budget > 0 {
		// The newest entries that fit the budget; an entry costs its line,
		// or what is left of it once outputs are cut.
		var used int64
		t.from = len(t.branch)
		for t.from > 0 {
			cost := int64(x.LineSize(t.branch[t.from-1]))
			if opts.MaxOutput > 0 {
				cost = min(cost, int64(opts.MaxOutput)+4<<10)
			}
			if used+cost > opts.Budget && t.from < len(t.branch) {
				break
			}
			used += cost
			t.from--
		}
		for _, i := range t.branch[:t.from] {
			if x.Type(i) != session.TypeCompaction {
				t.Omitted.Entries++
				t.Omitted.Bytes += int64(x.LineSize(i))
			}
		}
		if t.from > 0 {
			t.Omitted.First = t.timeOf(t.branch[0])
			t.Omitted.Last = t.timeOf(t.branch[t.from-1])
		}
	}
	return t
}

func (t *transcript) timeOf(i int) string {
	if e, _ := t.x.Entry(i); e != nil {
		return e.Timestamp
	}
	return ""
}

// each calls fn with the items of the branch in order, decoded one at a
// time and finished (masked, cut). Before the kept part, only
// compactions are given; omitted is called once where the left-out part
// ends.
func (t *transcript) each(fn func(it *Item) error, omitted func() error) error {
	return t.pipe(t.branchSteps, func(s step) error {
		if s.omitted {
			return omitted()
		}
		return fn(s.it)
	})
}

// branchSteps yields the branch's steps (each's), until an entry cannot
// be read: that one is an error step.
func (t *transcript) branchSteps(yield func(step) bool) {
	for pos, i := range t.branch {
		if pos == t.from && t.from > 0 && t.Omitted.Entries > 0 && !yield(step{omitted: true}) {
			return
		}
		if pos < t.from && t.x.Type(i) != session.TypeCompaction {
			continue
		}
		e, _ := t.x.Entry(i) // an undecodable entry has no body and is skipped below
		if e == nil {
			yield(step{err: fmt.Errorf("%s: line %d: unreadable", t.x.Path(), t.x.Line(i))})
			return
		}
		if it, ok := t.item(e); ok && !yield(step{it: &it, size: t.x.LineSize(i)}) {
			return
		}
	}
}

// A step is what an export's walk gives next: an item, the place where
// the left-out part ends, or the error that ends the walk.
type step struct {
	it      *Item
	size    int // the entry's line, for batching
	omitted bool
	err     error
}

// batchBytes is about how much text a batch of steps holds before it is
// handed on: large enough that a hand-over costs nothing beside what is in
// it, small enough that the batches in flight hold little.
const batchBytes = 256 << 10

// pipe calls fn with each step steps yields, in order, its item finished
// (masked, cut), until a step's error or fn's, which it returns.
//
// Reading and decoding the entries (steps), finishing the items and fn
// (the rendering and writing) run on three goroutines, a few batches
// apart: with two cores or more, masking costs an export only what the
// slowest of the three costs (docs/secrets.md has the figures), and the
// memory held is those batches. Nothing reads the index once pipe
// returns.
func (t *transcript) pipe(steps iter.Seq[step], fn func(step) error) error {
	decoded, finished := make(chan []step, 2), make(chan []step, 2)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	hand := func(out chan<- []step, b []step) bool {
		select {
		case out <- b:
			return true
		case <-stop:
			return false
		}
	}
	wg.Go(func() {
		defer close(decoded)
		var b []step
		size := 0
		for s := range steps {
			b = append(b, s)
			if size += s.size; size >= batchBytes {
				if !hand(decoded, b) {
					return
				}
				b, size = nil, 0
			}
		}
		if len(b) > 0 {
			hand(decoded, b)
		}
	})
	wg.Go(func() {
		defer close(finished)
		for b := range decoded {
			for _, s := range b {
				if s.it != nil {
					t.finish(s.it)
				}
			}
			if !hand(finished, b) {
				return
			}
		}
	})
	for b := range finished {
		for _, s := range b {
			err := s.err
			if err == nil {
				err = fn(s)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// item makes the Item of an entry; ok is false for entries a transcript
// does not show.
func (t *transcript) item(e *session.Entry) (it Item, ok bool) {
	it = Item{ID: e.ID, Time: e.Timestamp, Label: t.labels[e.ID]}
	switch b := e.Body.(type) {
	case *session.Message:
		m, _ := t.x.ResolveImages(b.Message)
		fillMessage(&it, &m)
	case *session.Compaction:
		it.Kind, it.Text = "compaction", b.Summary
	case *session.BranchSummary:
		if b.Summary == "" {
			return it, false
		}
		it.Kind, it.Text = "branch", b.Summary
	case *session.ModelChange:
		it.Kind, it.Text = "model", "Model: "+b.Name()
	case *session.ResetBoundary:
		it.Kind, it.Text = "note", "Context cleared here (/clear)."
	case *session.CustomMessage:
		if !b.Display {
			return it, false
		}
		it.Kind, it.Text = "custom", b.Content.Text()
	default:
		return it, false
	}
	return it, true
}

// finish makes an item what an export shows: its secrets masked (unless
// Options.Reveal), then its outputs cut (Options.MaxOutput).
func (t *transcript) finish(it *Item) {
	if !t.opts.Reveal {
		mask(it)
	}
	if n := t.opts.MaxOutput; n > 0 {
		it.Output = t.cut(it, it.Output, true)
		for k := range it.Thinking {
			it.Thinking[k] = t.cut(it, it.Thinking[k], false)
		}
	}
}

// mask masks the secrets in every text of an item, before any is cut
// (a cut could leave part of a key no rule knows).
func mask(it *Item) {
	it.Label = secrets.Mask(it.Label)
	it.Text = secrets.Mask(it.Text)
	it.Output = secrets.Mask(it.Output)
	for k := range it.Thinking {
		it.Thinking[k] = secrets.Mask(it.Thinking[k])
	}
	for k := range it.Calls {
		it.Calls[k].Name = secrets.Mask(it.Calls[k].Name)
		it.Calls[k].Args = secrets.Mask(it.Calls[k].Args)
	}
}

// cut shortens s to Options.MaxOutput bytes (on rune boundaries) and
// counts what it cut: its start, or, when a word of Options.Around is
// first found past that, the bytes around it.
func (t *transcript) cut(it *Item, s string, output bool) string {
	n := t.opts.MaxOutput
	if len(s) <= n {
		return s
	}
	from := 0
	if at := firstOf(s, t.opts.Around); at+64 > n && output {
		from = min(at-n/4, len(s)-n)
		for from > 0 && !isRuneStart(s[from]) {
			from++
		}
	}
	k := from + n
	for k > from && k < len(s) && !isRuneStart(s[k]) {
		k--
	}
	it.CutBefore += from
	it.Cut += len(s) - k
	return s[from:k]
}

// firstOf is where the first of words is in s, matched without regard to
// case as a search matches them (exactly, in a text whose lower case
// differs in length); -1 if none is.
func firstOf(s string, words []string) int {
	first := -1
	if len(words) == 0 {
		return first
	}
	low := strings.ToLower(s)
	for _, w := range words {
		i := strings.Index(low, strings.ToLower(w))
		if len(low) != len(s) {
			i = strings.Index(s, w)
		}
		if i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

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
	if it.Kind == "" {
		return "Entry"
	}
	return strings.ToUpper(it.Kind[:1]) + it.Kind[1:]
}

// MarkdownKind reports whether the item's text is Markdown the model
// wrote (an answer, a summary), rather than what a person typed.
func (it Item) MarkdownKind() bool {
	switch it.Kind {
	case "assistant", "compaction", "branch", "branchSummary", "compactionSummary", "custom":
		return true
	}
	return false
}

// omittedNote says what an export left out, and how to get it.
func (o omission) note() string {
	s := fmt.Sprintf("%s of this branch (%s of session data", plural(o.Entries, "earlier entry", "earlier entries"), sizeText(o.Bytes))
	if o.First != "" {
		s += ", " + when(o.First) + " to " + when(o.Last)
	}
	return s + ") are left out to keep this page one a browser opens at once; the compaction summaries shown stand for them. `xdev export --full` exports everything."
}

func sizeText(n int64) string {
	switch {
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
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
// It jumps from backtick to backtick (IndexByte): a tool's output is
// mostly text without any, and walking it rune by rune was a tenth of
// an export's time. A backtick byte is never part of a longer character.
func fence(s string) string {
	longest := 0
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		longest = max(longest, n-i)
		s = s[n:]
	}
	return strings.Repeat("`", max(3, longest+1))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
