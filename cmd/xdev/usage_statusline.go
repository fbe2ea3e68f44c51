package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
	"github.com/xdev/xdev/internal/usage"
)

// statusInput is what Claude Code hands a statusLine command on stdin
// (its session, transcript and working directory; the rest is ignored).
type statusInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
}

// statusInputLimit bounds what is read of stdin; statusInputWait how
// long it is waited for (a terminal, or a pipe nobody writes, is no
// input).
const (
	statusInputLimit = 1 << 20
	statusInputWait  = 500 * time.Millisecond
)

// readStatusInput reads Claude Code's statusLine JSON from stdin, or nil
// when there is none: stdin a terminal, empty, not JSON, or silent.
func readStatusInput(e *env) *statusInput {
	if e.In == nil {
		return nil
	}
	if f, ok := e.In.(*os.File); ok && term.IsTerminal(f) {
		return nil
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(e.In, statusInputLimit))
		got <- b
	}()
	var b []byte
	select {
	case b = <-got:
	case <-time.After(statusInputWait):
		return nil
	}
	var in statusInput
	if len(b) == 0 || json.Unmarshal(b, &in) != nil {
		return nil
	}
	return &in
}

// query names the session in names to a status (catalog.UsageStatus):
// its id, and its transcript's path as given and as the file it names.
func (in *statusInput) query() catalog.StatusQuery {
	var q catalog.StatusQuery
	if in == nil {
		return q
	}
	q.ID = in.SessionID
	if in.TranscriptPath != "" {
		abs, _ := filepath.Abs(in.TranscriptPath)
		q.Paths = append(q.Paths, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			q.Paths = append(q.Paths, real)
		}
	}
	return q
}

// printStatusline prints one line: this session's cost, today's, and
// the current five-hour block's with the time left in it. The session is
// the one stdin names (by transcript path or id), else the one with the
// latest call.
func printStatusline(e *env, st usage.Status, in *statusInput, opts usage.ReportOptions, now time.Time) error {
	current := namedSession(st.Sessions, in)
	if current == nil {
		current = st.Latest()
	}
	loc := opts.Location
	today := now.In(loc).Format(time.DateOnly)
	var session, day usage.Totals
	if current != nil {
		addTotals(&session, current.Totals(opts.Mode))
	}
	for _, g := range st.Recent {
		if time.UnixMilli(g.Quarter*usage.Quarter).In(loc).Format(time.DateOnly) == today {
			addTotals(&day, g.Totals(opts.Mode))
		}
	}
	line := fmt.Sprintf("%s session · %s today", dollars(session), dollars(day))
	blocks := usage.Blocks(st.Recent)
	if n := len(blocks); n > 0 && blocks[n-1].Active(now) {
		b := blocks[n-1]
		var bt usage.Totals
		for _, g := range b.Groups {
			addTotals(&bt, g.Totals(opts.Mode))
		}
		left := b.End.Sub(now).Round(time.Minute)
		line += fmt.Sprintf(" · %s block (%dh%02dm left)", dollars(bt), int(left.Hours()), int(left.Minutes())%60)
	} else {
		line += " · no active block"
	}
	fmt.Fprintln(e.Out, line)
	return nil
}

// namedSession is the session of sessions (a status's) that in names, by
// its transcript's path or its id; nil for none. A path is compared as
// written, then as the file it names (through symlinks): only where no
// session is named so, and then with the sessions whose files have that
// file's name, so that a status line stats a file or two, not every
// session's.
func namedSession(sessions []usage.Group, in *statusInput) *usage.Group {
	if in == nil || in.TranscriptPath == "" && in.SessionID == "" {
		return nil
	}
	path := filepath.Clean(in.TranscriptPath)
	for k, g := range sessions {
		if in.TranscriptPath != "" && filepath.Clean(g.Rollup.Path) == path || in.SessionID != "" && g.Rollup.ID == in.SessionID {
			return &sessions[k]
		}
	}
	if in.TranscriptPath == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(in.TranscriptPath)
	if err != nil {
		return nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil
	}
	for k, g := range sessions {
		if filepath.Base(g.Rollup.Path) != filepath.Base(real) {
			continue
		}
		if gi, err := os.Stat(g.Rollup.Path); err == nil && os.SameFile(fi, gi) {
			return &sessions[k]
		}
	}
	return nil
}

func addTotals(t *usage.Totals, u usage.Totals) {
	t.Cost += u.Cost
	t.Calls += u.Calls
	t.Unpriced += u.Unpriced
}

// printPrices says where the built-in price table comes from; with
// --json, every model's price.
func (o *usageOptions) printPrices(e *env) error {
	t := usage.Prices()
	if o.asJSON {
		return writeJSON(e, t)
	}
	providers := map[string]bool{}
	for _, m := range t.Models {
		providers[m.Provider] = true
	}
	fmt.Fprintf(e.Out, "Prices of %d models of %d providers, from %s, built %s, in dollars per million tokens.\n",
		len(t.Models), len(providers), t.Source, t.Date)
	fmt.Fprintln(e.Out, "Built into the binary: nothing is fetched. 'xdev usage --prices --json' lists every model's.")
	return nil
}
