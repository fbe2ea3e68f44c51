package pick

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/term"
)

// The layout: a query line, the list, the preview beside it (a terminal
// of at least sideBySide columns) or under it, and a status line.
const sideBySide = 120

var (
	styleSelected = lipgloss.NewStyle().Reverse(true)
	styleDim      = lipgloss.NewStyle().Faint(true)
	styleBold     = lipgloss.NewStyle().Bold(true)
	styleRole     = map[ai.Role]lipgloss.Style{
		ai.RoleUser:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("4")),
		ai.RoleAssistant: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("2")),
	}
	harnessColors = []color.Color{lipgloss.Color("1"), lipgloss.Color("2"), lipgloss.Color("3"), lipgloss.Color("4"),
		lipgloss.Color("5"), lipgloss.Color("6")}
)

// View draws the picker: every line its terminal's width, so that the
// frame never wraps, whatever a title holds.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Frame())
	if !m.traced && len(m.view) > 0 {
		m.traced = true
		m.trace("rows", len(m.view))
	}
	select {
	case <-m.drawn:
	default:
		close(m.drawn)
	}
	v.AltScreen = true
	v.WindowTitle = "xdev pick"
	return v
}

// Frame is the picker's screen as text with styles, one line per row of
// the terminal.
func (m *Model) Frame() string {
	w, h := m.width, m.height
	lines := make([]string, 0, h)
	lines = append(lines, m.queryLine(w))
	body := max(h-2, 0)
	if w >= sideBySide {
		lw := w * 45 / 100
		list := m.listLines(lw, body)
		prev := m.previewLines(w-lw-1, body)
		for k := range body {
			lines = append(lines, list[k]+styleDim.Render("│")+prev[k])
		}
	} else {
		lh := m.listHeight()
		lines = append(lines, m.listLines(w, lh)...)
		if ph := body - lh - 1; ph >= 0 {
			lines = append(lines, styleDim.Render(strings.Repeat("─", w)))
			lines = append(lines, m.previewLines(w, ph)...)
		}
	}
	lines = append(lines, m.statusLine(w))
	return strings.Join(lines[:min(len(lines), h)], "\n")
}

// listHeight is how many rows the list shows.
func (m *Model) listHeight() int {
	body := max(m.height-2, 1)
	if m.width >= sideBySide {
		return body
	}
	return max(body/2, 1)
}

// fit is s escaped, cut and padded to n columns.
func fit(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return term.Pad(term.Fit(steady(term.Escape(s)), n), n)
}

func (m *Model) queryLine(w int) string {
	var where []string
	where = append(where, fmt.Sprintf("%d/%d", len(m.view), m.total()))
	if m.harness != "" {
		where = append(where, m.harness.Name())
	}
	if m.project != "" {
		where = append(where, secrets.Mask(term.HomePath(m.project)))
	}
	if m.subagents {
		where = append(where, "+subagents")
	}
	if m.listing {
		where = append(where, "listing…")
	}
	right := " " + strings.Join(where, " · ")
	rw := min(term.DisplayWidth(term.Escape(right)), w/2)
	prompt := "❯ " + string(m.query)
	left := fit(prompt+"█", w-rw)
	return styleBold.Render(left) + styleDim.Render(fit(right, rw))
}

// total is how many sessions the switches show, before the query.
func (m *Model) total() int {
	n := 0
	for k := range m.items {
		if m.shown(&m.items[k]) {
			n++
		}
	}
	return n
}

func (m *Model) statusLine(w int) string {
	s := m.status
	switch q := ParseQuery(string(m.query)); {
	case s != "":
	case m.searching != "":
		s = "searching the sessions' text for " + strconv.Quote(m.searching) + "…"
	case m.found.done && m.found.err != nil && (q.FullText() || m.fallback):
		s = "search: " + m.found.err.Error()
	case m.fallback && len(m.view) > 0:
		s = "no title or first message holds it: sessions whose text does"
	case len(m.view) == 0 && m.listErr != nil:
		s = "listing: " + m.listErr.Error()
	case len(m.view) == 0 && !m.listing && len(m.query) > 0:
		s = "no session matches (/word searches what was said)"
	case len(m.view) == 0 && !m.listing:
		s = "no sessions here"
	default:
		for _, h := range help {
			if term.DisplayWidth(h) <= w {
				return styleDim.Render(fit(h, w))
			}
		}
	}
	// What a command or an error said may name a path or quote a key.
	return styleDim.Render(fit(secrets.Mask(s), w))
}

// listLines are n lines of w columns: the rows on screen. A row is its
// harness, its age, its project and its title, in columns; a terminal
// too narrow for them shows the title alone.
func (m *Model) listLines(w, n int) []string {
	out := make([]string, 0, n)
	now := m.opts.Now()
	hw, aw, pw := min(9, w/6), 4, min(18, w/5)
	tw := w - 2 - hw - 1 - aw - 1 - pw - 1
	for k := m.top; k < len(m.view) && len(out) < n; k++ {
		it := &m.items[m.view[k]]
		selected := k == m.cursor
		mark := map[[2]bool]string{{false, false}: "  ", {false, true}: " ↳", {true, false}: "› ", {true, true}: "›↳"}[[2]bool{selected, it.subagent}]
		title := it.title
		if title == "" && it.message != "" {
			title = `"` + term.OneLine(it.message) + `"`
		}
		if title == "" {
			title = "(untitled)"
		}
		if tw < 8 {
			line := fit(mark+title, w)
			if selected {
				line = styleSelected.Render(line)
			}
			out = append(out, line)
			continue
		}
		harness, when, project := fit(string(it.harness), hw), fit(age(time.Unix(0, it.modified), now), aw), fit(m.projectName(it.cwd), pw)
		title = fit(title, tw)
		if selected {
			out = append(out, styleSelected.Render(mark+harness+" "+when+" "+project+" "+title))
			continue
		}
		hs := lipgloss.NewStyle().Foreground(harnessColors[harnessHue(it.harness)])
		out = append(out, mark+hs.Render(harness)+" "+styleDim.Render(when)+" "+project+" "+title)
	}
	for len(out) < n {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}

// projectName is what the list calls the project of a session made in
// dir: its last element, masked (a directory may be named by a key).
func (m *Model) projectName(dir string) string {
	if dir == "" {
		return "—"
	}
	if name, ok := m.masked[dir]; ok {
		return name
	}
	name := secrets.Mask(filepath.Base(dir))
	if len(m.masked) > maskedKept {
		clear(m.masked)
	}
	m.masked[dir] = name
	return name
}

// maskedKept bounds the masked project names kept.
const maskedKept = 4096

// harnessHue is a harness's colour, the same on every row.
func harnessHue(h catalog.Harness) int {
	n := 0
	for _, c := range h {
		n += int(c)
	}
	return n % len(harnessColors)
}

// age is how long ago t was, in a few columns.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	case d < 14*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24)) + "d"
	case d < 60*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24/7)) + "w"
	case d < 365*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24/30)) + "mo"
	}
	return strconv.Itoa(int(d.Hours()/24/365)) + "y"
}

// messageBytes bounds how much of one message the preview wraps: it
// shows a few lines of each.
const messageBytes = 4 << 10

// linesPerMessage bounds the lines of one message in the preview.
const linesPerMessage = 8

// previewLines are n lines of w columns: the selected session's head
// (title, where, how to resume it) and its last messages, the newest at
// the bottom.
func (m *Model) previewLines(w, n int) []string {
	out := make([]string, 0, n)
	pad := func(s string) string { return term.Pad(s, w) }
	row, ok := m.current()
	if ok && n > 0 {
		title := row.Title
		if title == "" {
			title = "(untitled)"
		}
		out = append(out, styleBold.Render(fit(title, w)))
		meta := row.Harness.Name() + " · " + term.HomePath(row.Cwd) + " · " + term.Size(row.Size)
		out = append(out, styleDim.Render(fit(secrets.Mask(meta), w)))
		x := catalog.ResumeOf(row)
		resume := "resume: " + x.Shell()
		if x.Argv == nil {
			resume = "no resume: " + x.Why
		}
		out = append(out, styleDim.Render(fit(secrets.Mask(resume), w)))
	}
	var body []string
	switch p, have := m.previews[row.Path]; {
	case !ok:
	case !have:
		body = []string{styleDim.Render(pad("reading…"))}
	case p.err != nil:
		body = []string{fit(secrets.Mask("cannot read it: "+p.err.Error()), w)}
	case len(p.msgs) == 0:
		body = []string{styleDim.Render(pad("no messages"))}
	default:
		for k := range p.msgs {
			body = append(body, messageLines(&p.msgs[k], w)...)
		}
	}
	if room := n - len(out); len(body) > room {
		body = body[len(body)-max(room, 0):]
	}
	out = append(out, body...)
	for len(out) < n {
		out = append(out, strings.Repeat(" ", w))
	}
	return out[:n]
}

// messageLines are a message as the preview shows it: a line naming who
// spoke, then the start of what was said, masked, escaped, wrapped to w
// columns.
func messageLines(msg *ai.Message, w int) []string {
	who := string(msg.Role)
	if msg.ToolName != "" {
		who += " · " + msg.ToolName
	}
	st, ok := styleRole[msg.Role]
	if !ok {
		st = styleDim
	}
	out := []string{st.Render(fit(who, w))}
	text := messageText(msg)
	if len(text) > messageBytes {
		text = text[:messageBytes]
	}
	text = secrets.Mask(text)
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		line = steady(term.Escape(strings.ReplaceAll(strings.TrimRight(line, " \t\r"), "\t", "    ")))
		for wrapped := range strings.SplitSeq(ansi.Wrap(line, max(w-2, 1), ""), "\n") {
			lines = append(lines, "  "+wrapped)
		}
		if len(lines) > linesPerMessage {
			break
		}
	}
	if len(lines) > linesPerMessage {
		lines = append(lines[:linesPerMessage-1], "  …")
	}
	for _, l := range lines {
		out = append(out, term.Pad(term.Fit(l, w), w))
	}
	return out
}

// messageText is what a message says: its text, else its tool calls'
// names, a command and its output, a summary.
func messageText(msg *ai.Message) string {
	if t := msg.Text(); strings.TrimSpace(t) != "" {
		return t
	}
	var calls []string
	for _, b := range msg.Content.Blocks {
		if b.Type == ai.BlockToolCall {
			calls = append(calls, "→ "+b.Name)
		}
	}
	if len(calls) > 0 {
		return strings.Join(calls, "\n")
	}
	return strings.TrimSpace(strings.Join([]string{msg.Command, msg.Code, msg.Output, msg.Summary}, "\n"))
}
