package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"

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

// printStatusline prints one line: this session's cost, today's, and
// the current five-hour block's with the time left in it. The session is
// the one stdin names (by transcript path or id), else the one with the
// latest call.
func printStatusline(e *env, groups []usage.Group, in *statusInput, opts usage.ReportOptions, now time.Time) error {
	var current *usage.Session
	var latest float64
	for _, g := range groups {
		s := g.Rollup
		switch {
		case in != nil && (in.TranscriptPath != "" && samePath(s.Path, in.TranscriptPath) || in.SessionID != "" && s.ID == in.SessionID):
			current, latest = s, 1e300
		case g.Last > latest:
			current, latest = s, g.Last
		}
	}
	loc := opts.Location
	today := now.In(loc).Format(time.DateOnly)
	var session, day usage.Totals
	for _, g := range groups {
		t := g.Totals(opts.Mode)
		if current != nil && g.Rollup == current {
			addTotals(&session, t)
		}
		if time.UnixMilli(g.Quarter*usage.Quarter).In(loc).Format(time.DateOnly) == today {
			addTotals(&day, t)
		}
	}
	line := fmt.Sprintf("%s session · %s today", dollars(session), dollars(day))
	blocks := usage.Blocks(groups)
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

func addTotals(t *usage.Totals, u usage.Totals) {
	t.Cost += u.Cost
	t.Calls += u.Calls
	t.Unpriced += u.Unpriced
}

// samePath reports whether two names are one file.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
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
