package pick

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
)

func TestMain(m *testing.M) {
	searchPause = 0
	os.Exit(m.Run())
}

// now is the tests' clock.
var now = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// harnessCycle are the harnesses the generated rows are of, in turn.
var harnessCycle = []catalog.Harness{catalog.Xdev, catalog.Claude, catalog.Codex, catalog.Gemini, catalog.Opencode}

// rows are n sessions, an hour apart, newest first, of the harnesses in
// turn and of four projects, the first row's titled first.
func rows(n int, title func(k int) string) []catalog.Row {
	out := make([]catalog.Row, n)
	for k := range out {
		h := harnessCycle[k%len(harnessCycle)]
		out[k] = catalog.Row{Harness: h, ID: fmt.Sprintf("%08x-0000-4000-8000-%012d", k+1, k), Title: title(k),
			Cwd: fmt.Sprintf("/work/project-%d", k%4), Path: fmt.Sprintf("/sessions/%s/%03d.jsonl", h, k),
			Modified: now.Add(-time.Duration(k+1) * time.Hour), Size: int64(1000 * (k + 1)),
			FirstMessage: fmt.Sprintf("first message of session %d", k)}
	}
	return out
}

func titled(k int) string { return fmt.Sprintf("Session %d", k) }

// staticSource hands the model rows (in two batches, as two places),
// previews of two messages naming the session, and searches that find
// the rows whose path found says.
func staticSource(rs []catalog.Row, found func(text string) []string) Source {
	return Source{
		List: func(ctx context.Context, add func(catalog.Harness, []catalog.Row)) error {
			half := len(rs) / 2
			add("", rs[:half])
			add("", rs[half:])
			return nil
		},
		Preview: func(ctx context.Context, row catalog.Row, n int) ([]ai.Message, error) {
			return []ai.Message{
				{Role: ai.RoleUser, Content: ai.TextContent("question about " + row.Title)},
				{Role: ai.RoleAssistant, Content: ai.Content{Blocks: []ai.Block{ai.Text("answer in " + filepath.Base(row.Path))}}},
			}, nil
		},
		Search: func(ctx context.Context, text string) ([]string, error) {
			if found == nil {
				return nil, nil
			}
			return found(text), nil
		},
	}
}

// driver runs a model as Bubble Tea would, without a terminal: each
// message's command is run, and the messages it makes are given back to
// the model, until none is left (a Tick's wait is waited).
type driver struct {
	t    testing.TB
	m    *Model
	quit bool
	// ticks are the searches asked for while keys are typed, given to
	// the model once typing pauses (at the end of keys).
	typing bool
	ticks  []tea.Msg
}

func newDriver(t testing.TB, opts Options, w, h int) *driver {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return now }
	}
	d := &driver{t: t, m: New(opts)}
	t.Cleanup(d.m.Close)
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(d.m.Init())
	return d
}

// send gives the model msg and runs what it asks for.
func (d *driver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil || d.quit {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
	case tea.QuitMsg:
		d.quit = true
	case searchTick:
		if d.typing {
			d.ticks = append(d.ticks, msg)
			return
		}
		d.send(msg)
	default:
		if fmt.Sprintf("%T", msg) == "tea.sequenceMsg" || fmt.Sprintf("%T", msg) == "tea.setClipboardMsg" {
			return
		}
		d.send(msg)
	}
}

// keys sends each key: a name of keys.go's, or text typed.
func (d *driver) keys(keys ...string) {
	d.typing = true
	for _, k := range keys {
		d.send(keyPress(k))
	}
	d.typing = false
	ticks := d.ticks
	d.ticks = nil
	for _, msg := range ticks {
		d.send(msg)
	}
}

func keyPress(k string) tea.KeyPressMsg {
	named := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
		"tab": {Code: tea.KeyTab}, "shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "backspace": {Code: tea.KeyBackspace},
	}
	if key, ok := named[k]; ok {
		return tea.KeyPressMsg(key)
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// titles are the titles of the rows the list shows, in order.
func (d *driver) titles() []string {
	var out []string
	for _, k := range d.m.view {
		out = append(out, d.m.items[k].title)
	}
	return out
}

// selected is the selected row's title.
func (d *driver) selected() string {
	r, _ := d.m.current()
	return r.Title
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

func equal(a, b []string) bool { return slices.Equal(a, b) }

func nowFunc() time.Time { return now }
