package pick

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
)

// Options make a picker.
type Options struct {
	Source Source
	// Cwd is the current project's directory: its sessions come first.
	Cwd string
	// Query is what is typed when the picker starts.
	Query string
	// Rows are shown at once, until each place's listing takes its
	// harness's place (a snapshot of the last listing: catalog.ReadSnapshot).
	Rows []catalog.Row
	// MoreRows, when set, hands add more rows to show at once (the rest
	// of the snapshot), in the background after the first frame and
	// before the listing.
	MoreRows func(add func([]catalog.Row))
	// Listed, when set, is handed the list's rows in the background once
	// every place is listed (to keep a snapshot of them).
	Listed func(rows []catalog.Row)
	// Now is the clock the list's ages are of.
	Now func() time.Time
	// Pager is the command that shows a session whole (Ctrl-O), run with
	// the terminal; nil: none.
	Pager func(row catalog.Row) *exec.Cmd
	// Trace, when set, is told when the picker first shows rows
	// ("rows N": N shown) and when every place is listed ("listed N":
	// N rows): how a benchmark times it (XDEV_PICK_TRACE).
	Trace func(event string)
	// Fork and Export are Ctrl-F's and Ctrl-E's work on a session, each
	// returning what to tell (where the fork or the export went); nil:
	// none.
	Fork, Export func(ctx context.Context, row catalog.Row) (string, error)
}

// previewMessages is how many of a session's last messages the preview
// reads.
const previewMessages = 12

// previewsKept bounds the previews kept for rows selected before.
const previewsKept = 32

// firstFrameWait bounds how long the listing waits for the first frame
// to be drawn.
const firstFrameWait = 200 * time.Millisecond

// searchPause is how long typing pauses before a full-text search runs
// (a variable: the tests' driver does not wait).
var searchPause = 150 * time.Millisecond

// A Model is the picker, a Bubble Tea model: the list, the query, the
// preview, the terminal's size.
type Model struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc

	items   []item
	listing bool // places are still being listed
	listErr error
	rowsCh  chan listed
	doneCh  chan error

	query     []rune
	harness   catalog.Harness // "" for every one
	project   string          // "" for every one
	subagents bool

	view     []int // the items shown, in order
	cursor   int   // of view
	top      int   // the first of view on screen
	selected string

	previews  map[string]preview
	previewed []string // previews' paths, oldest first
	loading   string   // the path whose preview is being read

	// The full-text search: seq numbers what was typed, so that a
	// search's answer to an older query is dropped.
	seq       int
	searching string   // the text being searched
	found     foundSet // the last answer
	fallback  bool     // the words matched no row, so their text was searched

	masked map[string]string // projectName's, by directory

	traced bool          // the first rows shown were told to Trace
	drawn  chan struct{} // closed once the first frame is made

	status        string
	width, height int
	chosen        *catalog.Row
}

type preview struct {
	msgs []ai.Message
	err  error
}

// foundSet is a full-text search's answer: the sessions' paths, in order.
type foundSet struct {
	text  string
	paths []string
	err   error
	done  bool
}

// listed is a place's rows, as its listing handed them.
type listed struct {
	harness catalog.Harness
	rows    []catalog.Row
}

type (
	rowsMsg    listed
	listedMsg  struct{ err error }
	previewMsg struct {
		path string
		preview
	}
	searchTick struct{ seq int }
	searchMsg  struct {
		seq int
		foundSet
	}
	statusMsg string
)

// New makes a picker of opts.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Cwd != "" {
		opts.Cwd = filepath.Clean(opts.Cwd)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{opts: opts, ctx: ctx, cancel: cancel, previews: map[string]preview{}, masked: map[string]string{},
		drawn: make(chan struct{}), width: 80, height: 24, query: []rune(opts.Query)}
	if len(opts.Rows) > 0 {
		m.items = merge(nil, "", opts.Rows, opts.Cwd)
		m.opts.Rows = nil
	}
	return m
}

// Chosen is the session chosen with Enter, if one was.
func (m *Model) Chosen() (catalog.Row, bool) {
	if m.chosen == nil {
		return catalog.Row{}, false
	}
	return *m.chosen, true
}

// Close stops what the picker still does in the background.
func (m *Model) Close() { m.cancel() }

// Init starts listing the sessions.
func (m *Model) Init() tea.Cmd {
	if m.opts.Source.List == nil {
		return m.refilter()
	}
	m.listing = true
	m.rowsCh, m.doneCh = make(chan listed), make(chan error, 1)
	shown := len(m.items) > 0
	add := func(h catalog.Harness, rows []catalog.Row) {
		select {
		case m.rowsCh <- listed{h, rows}:
		case <-m.ctx.Done():
		}
	}
	more := m.opts.MoreRows
	go func() {
		if shown {
			// Rows to show (a snapshot): they are drawn first, the
			// listing's work after.
			select {
			case <-m.drawn:
			case <-time.After(firstFrameWait):
			case <-m.ctx.Done():
			}
		}
		if more != nil {
			more(func(rows []catalog.Row) { add("", rows) })
		}
		m.doneCh <- m.opts.Source.List(m.ctx, add)
	}()
	return tea.Batch(m.nextRows(), m.refilter())
}

// nextRows waits for the next place's rows, or the end of the listing.
func (m *Model) nextRows() tea.Cmd {
	return func() tea.Msg {
		select {
		case rows := <-m.rowsCh:
			return rowsMsg(rows)
		case err := <-m.doneCh:
			return listedMsg{err}
		case <-m.ctx.Done():
			return nil
		}
	}
}

// Add puts the rows of a listing of harness h in the list, in place of
// those of h it held ("" adds them to every other).
func (m *Model) Add(h catalog.Harness, rows []catalog.Row) tea.Cmd {
	m.items = merge(m.items, h, rows, m.opts.Cwd)
	return m.refilter()
}

// trace tells Options.Trace of an event.
func (m *Model) trace(event string, n int) {
	if m.opts.Trace != nil {
		m.opts.Trace(fmt.Sprintf("%s %d", event, n))
	}
}

// listed hands Options.Listed the list's rows, in the background.
func (m *Model) listed() tea.Cmd {
	if m.opts.Listed == nil {
		return nil
	}
	rows := make([]catalog.Row, len(m.items))
	for k := range m.items {
		rows[k] = m.items[k].row()
	}
	listed := m.opts.Listed
	return func() tea.Msg {
		listed(rows)
		return nil
	}
}

// Update takes a message: a key, the terminal's size, what a listing, a
// preview or a search read.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		m.scroll()
		return m, nil
	case rowsMsg:
		return m, tea.Batch(m.Add(msg.harness, msg.rows), m.nextRows())
	case listedMsg:
		m.listing, m.listErr = false, msg.err
		m.trace("listed", len(m.items))
		return m, tea.Batch(m.refilter(), m.listed())
	case previewMsg:
		m.keepPreview(msg.path, msg.preview)
		if m.loading == msg.path {
			m.loading = ""
		}
		return m, m.wantPreview()
	case searchTick:
		if msg.seq != m.seq || m.opts.Source.Search == nil {
			return m, nil
		}
		return m, m.search(msg.seq)
	case searchMsg:
		if msg.seq != m.seq {
			return m, nil
		}
		m.searching, m.found = "", msg.foundSet
		return m, m.refilter()
	case statusMsg:
		m.status = string(msg)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		m.typed(msg.Content)
		return m, m.queryChanged()
	}
	return m, nil
}

// key does what key k does.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	name := k.String()
	if a, ok := keyAliases[name]; ok {
		name = a
	}
	m.status = ""
	switch name {
	case keyQuit:
		return m.quit()
	case keyBack:
		if len(m.query) == 0 {
			return m.quit()
		}
		m.query = nil
		return m.queryChanged()
	case keyChoose:
		if row, ok := m.current(); ok {
			m.chosen = &row
			return m.quit()
		}
		return nil
	case keyUp:
		m.move(-1)
	case keyDown:
		m.move(1)
	case keyPageUp:
		m.move(-m.listHeight())
	case keyPageDown:
		m.move(m.listHeight())
	case keyFirst:
		m.move(-len(m.view))
	case keyLast:
		m.move(len(m.view))
	case keyHarness, keyHarnessBk:
		m.cycleHarness(map[bool]int{true: 1, false: -1}[name == keyHarness])
		return m.refilter()
	case keyProject:
		if m.project != "" {
			m.project = ""
		} else if row, ok := m.current(); ok && row.Cwd != "" {
			m.project = row.Cwd
		}
		return m.refilter()
	case keySubagents:
		m.subagents = !m.subagents
		return m.refilter()
	case keyPager:
		return m.pager()
	case keyFork:
		return m.act(m.opts.Fork, "forking")
	case keyExport:
		return m.act(m.opts.Export, "exporting")
	case keyCopy:
		if row, ok := m.current(); ok {
			m.status = "copied the path (if the terminal takes OSC 52)"
			return tea.SetClipboard(row.Path)
		}
		return nil
	case keyErase:
		if n := len(m.query); n > 0 {
			m.query = m.query[:n-1]
			return m.queryChanged()
		}
		return nil
	case keyEraseWord:
		q := strings.TrimRightFunc(string(m.query), unicode.IsSpace)
		k := strings.LastIndexFunc(q, unicode.IsSpace)
		m.query = []rune(q[:k+1])
		return m.queryChanged()
	case keyEraseAll:
		m.query = nil
		return m.queryChanged()
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			m.typed(k.Text)
			return m.queryChanged()
		}
		return nil
	}
	return m.wantPreview()
}

// typed adds text to the query: its printable characters, a line's
// breaks as spaces.
func (m *Model) typed(text string) {
	for _, r := range text {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			m.query = append(m.query, ' ')
		case unicode.IsPrint(r):
			m.query = append(m.query, r)
		}
	}
}

func (m *Model) quit() tea.Cmd {
	m.cancel()
	return tea.Quit
}

// current is the selected row.
func (m *Model) current() (catalog.Row, bool) {
	if m.cursor < 0 || m.cursor >= len(m.view) {
		return catalog.Row{}, false
	}
	return m.items[m.view[m.cursor]].row(), true
}

// move moves the selection by d rows.
func (m *Model) move(d int) {
	if len(m.view) == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), len(m.view)-1)
	m.selected = m.items[m.view[m.cursor]].path
	m.scroll()
}

// scroll keeps the selection on screen.
func (m *Model) scroll() {
	h := m.listHeight()
	m.top = min(m.top, m.cursor)
	if m.cursor >= m.top+h {
		m.top = m.cursor - h + 1
	}
	m.top = max(0, min(m.top, len(m.view)-h))
}

// harnesses are the harnesses of the rows, in the order Tab goes.
func (m *Model) harnesses() []catalog.Harness {
	seen := map[catalog.Harness]bool{}
	var hs []catalog.Harness
	for _, it := range m.items {
		if !seen[it.harness] {
			seen[it.harness] = true
			hs = append(hs, it.harness)
		}
	}
	slices.Sort(hs)
	return hs
}

// cycleHarness shows the next (d 1) or previous (d -1) harness's
// sessions: every harness's, then each's.
func (m *Model) cycleHarness(d int) {
	hs := append([]catalog.Harness{""}, m.harnesses()...)
	k := slices.Index(hs, m.harness)
	m.harness = hs[((k+d)%len(hs)+len(hs))%len(hs)]
}

// queryChanged filters again, and asks for a search when the query is
// one.
func (m *Model) queryChanged() tea.Cmd {
	m.seq++
	m.fallback = false
	m.selected = "" // a new query selects its best match
	return m.refilter()
}

// shown reports whether it is in the rows the switches show.
func (m *Model) shown(it *item) bool {
	return (m.subagents || !it.subagent) && (m.harness == "" || it.harness == m.harness) &&
		(m.project == "" || it.cwd == m.project)
}

// refilter makes the list again for the query and the switches, keeping
// the selected row where it is still shown, and returns what that asks
// for: a preview, a search.
func (m *Model) refilter() tea.Cmd {
	q := ParseQuery(string(m.query))
	text := q.Text
	if !q.FullText() && m.fallback {
		text = strings.Join(q.Words, " ")
	}
	m.view = m.view[:0]
	var cmd tea.Cmd
	switch {
	case text != "":
		if m.found.done && m.found.text == text {
			m.view = m.inOrder(m.found.paths)
		} else {
			cmd = m.askSearch(text)
		}
	default:
		var fuzzies []int
		for k := range m.items {
			it := &m.items[k]
			if !m.shown(it) {
				continue
			}
			switch q.match(it) {
			case exact:
				m.view = append(m.view, k)
			case fuzzy:
				fuzzies = append(fuzzies, k)
			}
		}
		m.view = append(m.view, fuzzies...)
		if len(m.view) == 0 && len(q.Words) > 0 && !m.listing && m.opts.Source.Search != nil {
			// Nothing is called so: the words may be in what was said.
			m.fallback = true
			cmd = m.askSearch(strings.Join(q.Words, " "))
		}
	}
	m.cursor = 0
	for k, i := range m.view {
		if m.items[i].path == m.selected {
			m.cursor = k
			break
		}
	}
	if len(m.view) > 0 {
		m.selected = m.items[m.view[m.cursor]].path
	}
	m.scroll()
	return tea.Batch(cmd, m.wantPreview())
}

// inOrder are the shown items of paths, in their order.
func (m *Model) inOrder(paths []string) []int {
	at := make(map[string]int, len(m.items))
	for k, it := range m.items {
		at[it.path] = k
	}
	var out []int
	for _, p := range paths {
		if k, ok := at[p]; ok && m.shown(&m.items[k]) {
			out = append(out, k)
		}
	}
	return out
}

// askSearch asks for a search of text once typing pauses.
func (m *Model) askSearch(text string) tea.Cmd {
	if m.opts.Source.Search == nil {
		return nil
	}
	if m.searching == text {
		return nil
	}
	seq := m.seq
	return tea.Tick(searchPause, func(time.Time) tea.Msg { return searchTick{seq} })
}

// search runs the search of what is typed now.
func (m *Model) search(seq int) tea.Cmd {
	q := ParseQuery(string(m.query))
	text := q.Text
	if !q.FullText() {
		text = strings.Join(q.Words, " ")
	}
	if text == "" || text == m.searching || m.found.done && m.found.text == text {
		return nil
	}
	m.searching = text
	ctx, find := m.ctx, m.opts.Source.Search
	return func() tea.Msg {
		paths, err := find(ctx, text)
		return searchMsg{seq, foundSet{text: text, paths: paths, err: err, done: true}}
	}
}

// wantPreview reads the selected row's preview, when it has none and no
// other is being read.
func (m *Model) wantPreview() tea.Cmd {
	row, ok := m.current()
	if !ok || m.loading != "" || m.opts.Source.Preview == nil {
		return nil
	}
	if _, ok := m.previews[row.Path]; ok {
		return nil
	}
	m.loading = row.Path
	ctx, read := m.ctx, m.opts.Source.Preview
	return func() tea.Msg {
		msgs, err := read(ctx, row, previewMessages)
		return previewMsg{row.Path, preview{msgs, err}}
	}
}

// keepPreview keeps p, the preview of path, dropping the oldest past
// previewsKept.
func (m *Model) keepPreview(path string, p preview) {
	if _, ok := m.previews[path]; !ok {
		m.previewed = append(m.previewed, path)
	}
	m.previews[path] = p
	for len(m.previewed) > previewsKept {
		delete(m.previews, m.previewed[0])
		m.previewed = m.previewed[1:]
	}
}

// pager shows the selected session in the pager, then comes back.
func (m *Model) pager() tea.Cmd {
	row, ok := m.current()
	if !ok || m.opts.Pager == nil {
		return nil
	}
	return tea.ExecProcess(m.opts.Pager(row), func(err error) tea.Msg {
		if err != nil {
			return statusMsg("pager: " + err.Error())
		}
		return nil
	})
}

// act runs do on the selected session in the background and tells what
// it said.
func (m *Model) act(do func(context.Context, catalog.Row) (string, error), doing string) tea.Cmd {
	row, ok := m.current()
	if !ok || do == nil {
		return nil
	}
	m.status = doing + "…"
	ctx := m.ctx
	return func() tea.Msg {
		said, err := do(ctx, row)
		if err != nil {
			return statusMsg(doing + " failed: " + err.Error())
		}
		return statusMsg(said)
	}
}
