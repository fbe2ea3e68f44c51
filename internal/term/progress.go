package term

import (
	"fmt"
	"strings"
	"time"
)

// A Progress reports long work (done of total) on stderr, when stderr is
// a terminal: a progress line in a log file would be noise.
type Progress struct {
	IO    *IOStreams
	What  string
	last  time.Time
	shown bool
}

// Update shows done of total, at most ten times a second.
func (p *Progress) Update(done, total int) {
	now := p.IO.Now()
	if !p.IO.ErrIsTTY || (now.Sub(p.last) < 100*time.Millisecond && done != total) {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.IO.RawErr, "\r%s %d/%d…", Escape(p.What), done, total)
}

// Done clears the line, if one was shown.
func (p *Progress) Done() {
	if p.shown {
		fmt.Fprint(p.IO.RawErr, "\r\033[K")
	}
}

// A Meter is a progress bar (a fraction of the work, and a note) on
// stderr, when stderr is a terminal, shown once the work has taken a
// moment (300 ms).
type Meter struct {
	IO    *IOStreams
	What  string
	start time.Time
	last  time.Time
	shown bool
}

// Update shows frac (0 to 1) of the work done and note, at most ten
// times a second; final is the last update, always shown once the meter
// shows.
func (m *Meter) Update(frac float64, note string, final bool) {
	now := m.IO.Now()
	if m.start.IsZero() {
		m.start = now
	}
	if !m.IO.ErrIsTTY || now.Sub(m.start) < 300*time.Millisecond || now.Sub(m.last) < 100*time.Millisecond && !final {
		return
	}
	m.last, m.shown = now, true
	const width = 24
	n := min(width, max(0, int(frac*width)))
	fmt.Fprintf(m.IO.RawErr, "\r%s [%s%s] %3.0f%% %s", Escape(m.What), strings.Repeat("█", n),
		strings.Repeat("·", width-n), frac*100, Escape(note))
}

// Done clears the line, if one was shown.
func (m *Meter) Done() {
	if m.shown {
		fmt.Fprint(m.IO.RawErr, "\r\033[K")
	}
}
