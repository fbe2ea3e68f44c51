package main

import (
	"flag"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
	"github.com/xdev/xdev/internal/usage"
)

var usageCommand = &command{
	name:          "usage",
	namesSessions: true,
	args:          "[daily|weekly|monthly|session|model|project|harness] [--since T] [--until T] [--from H,…] [--here] [--breakdown] [--json] | --statusline | --prices",
	summary:       "What every agent's sessions cost, each call counted once",
	example: `  xdev usage                        cost and tokens per day, every harness
  xdev usage monthly --breakdown    per month, and per model within each
  xdev usage session --since 7d     per session this week (subagents in their parent)
  xdev usage model --from claude,codex
  xdev usage --here --json          this project, in ccusage's JSON shape
  xdev usage --statusline           one line for Claude Code's statusLine
  xdev usage --prices               where the built-in prices come from`,
	options: func() options { return &usageOptions{} },
}

// usageOptions are the flags and arguments of `xdev usage`.
type usageOptions struct {
	store        *storeFlags
	sources      *sourceFlags
	db           *dbFlags
	view         usage.View
	since, until string
	from         string
	here         bool
	cwd          string
	breakdown    bool
	asJSON       bool
	mode         string
	timezone     string
	statusline   bool
	prices       bool
	args         []string
}

func (o *usageOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	o.db = addDBFlags(fs)
	fs.StringVar(&o.since, "since", "", "only calls from this day on: 7d, 2w, 2026-11-01")
	fs.StringVar(&o.until, "until", "", "only calls up to this day (inclusive)")
	fs.StringVar(&o.from, "from", "all", "whose sessions, comma-separated: "+catalog.HarnessChoices())
	fs.BoolVar(&o.here, "here", false, "only this directory's project")
	fs.StringVar(&o.cwd, "cwd", "", "only this project's sessions")
	fs.BoolVar(&o.breakdown, "breakdown", false, "a line per model within each row")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (ccusage's shape, with more fields)")
	fs.StringVar(&o.mode, "mode", "auto", "cost: auto (recorded, else computed), calculate (always computed) or display (recorded only)")
	fs.StringVar(&o.timezone, "timezone", "", "the time zone days are counted in (IANA name; default local)")
	fs.StringVar(&o.timezone, "z", "", "short for --timezone")
	fs.BoolVar(&o.statusline, "statusline", false, "print one status line (reads Claude Code's statusLine JSON on stdin)")
	fs.BoolVar(&o.prices, "prices", false, "say where the built-in price table comes from (--json: every model's price)")
}

func (o *usageOptions) setArgs(args []string) { o.args = args }

func (o *usageOptions) places() ([]catalog.Harness, error) {
	if o.from == "" || o.from == "all" {
		return catalog.Every, nil
	}
	var out []catalog.Harness
	for name := range strings.SplitSeq(o.from, ",") {
		h := catalog.Harness(strings.TrimSpace(name))
		if !slices.Contains(catalog.Every, h) {
			return nil, usagef("--from names %s, not %q", catalog.HarnessChoices(), name)
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

func (o *usageOptions) run(e *env) error {
	o.view = usage.Daily
	switch len(o.args) {
	case 0:
	case 1:
		v, err := usage.ParseView(o.args[0])
		if err != nil {
			return usagef("%v", err)
		}
		o.view = v
	default:
		return usagef("unexpected argument %q", o.args[1])
	}
	mode := usage.Mode(o.mode)
	if !slices.Contains([]usage.Mode{usage.Auto, usage.Calculate, usage.Display}, mode) {
		return usagef("--mode is auto, calculate or display, not %q", o.mode)
	}
	loc := time.Local
	if o.timezone != "" {
		var err error
		if loc, err = time.LoadLocation(o.timezone); err != nil {
			return usagef("--timezone: %v", err)
		}
	}
	if o.prices {
		return o.printPrices(e)
	}
	now := e.Now()
	since, err := parseWhen(o.since, now)
	if err != nil {
		return usagef("--since: %v", err)
	}
	until, err := parseWhen(o.until, now)
	if err != nil {
		return usagef("--until: %v", err)
	}
	places, err := o.places()
	if err != nil {
		return err
	}
	var in *statusInput
	if o.statusline {
		in = readStatusInput(e)
	}
	cwd := o.cwd
	switch {
	case !o.here || cwd != "":
	case in != nil && in.Cwd != "":
		cwd = in.Cwd // the directory Claude Code runs in, which a status line's process need not share
	default:
		if cwd, err = e.Getwd(); err != nil {
			return err
		}
	}
	if o.db.on() && o.from != "all" {
		return usagef("--db reports the database's sessions; --from chooses local ones")
	}
	// The ledger is built once and lives until the report is printed:
	// collecting garbage as the heap first grows would mark it over and
	// over. The soft limit (guardMemoryLimit's) keeps the process within
	// its memory bound.
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	ctx, cancel := interruptible()
	defer cancel()
	uo := catalog.UsageOptions{Harnesses: places, Cwd: cwd, Cache: catalog.UsageCacheDir()}
	switch {
	case o.statusline:
		// Today's calls and the current block's: a block that is still
		// going began within five hours, after one that began within ten.
		day := now.In(loc)
		uo.ModifiedSince = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
		if b := now.Add(-2 * usage.BlockLength); b.Before(uo.ModifiedSince) {
			uo.ModifiedSince = b
		}
	case !since.IsZero():
		s := since.In(loc)
		uo.ModifiedSince = time.Date(s.Year(), s.Month(), s.Day(), 0, 0, 0, 0, loc)
	}
	// A status line reads a status (usage.Status) in place of the
	// groups: where the groups are kept, a few KB of what is recent; a
	// report reads them one at a time into itself.
	opts := usage.ReportOptions{View: o.view, Since: since, Until: until, Location: loc, Mode: mode}
	var r usage.Report
	var status usage.Status
	var stats catalog.UsageStats
	if o.db.on() {
		db, err := o.db.open(e, ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		places = nil
		ledger, st, err := db.Usage(ctx, cwd)
		if err != nil {
			return err
		}
		stats = st
		groups, unread := ledger.Groups(nil)
		stats.Unread = unread
		if o.statusline {
			status = usage.NewStatus(groups, float64(uo.ModifiedSince.UnixMilli()))
		} else {
			r = usage.NewReport(groups, opts)
		}
	} else {
		c, err := o.sources.catalog(e, o.store)
		if err != nil {
			return err
		}
		if o.statusline {
			status, stats, err = c.UsageStatus(ctx, uo, uo.ModifiedSince, in.query())
		} else {
			r, stats, err = c.UsageReport(ctx, uo, opts)
		}
		if err != nil {
			return err
		}
		if stats.Sessions == 0 && uo.ModifiedSince.IsZero() && cwd == "" && !o.asJSON && !o.statusline {
			fmt.Fprintln(e.ErrOut, "No sessions here. "+lookedIn(c, places))
		}
	}
	for _, h := range places {
		if err := stats.Failed[h]; err != nil {
			fmt.Fprintf(e.ErrOut, "xdev usage: %s: %v\n", h, err)
		}
	}
	err = stats.Unread
	if err != nil {
		fmt.Fprintf(e.ErrOut, "xdev usage: %v\n", err)
	}
	if o.statusline {
		return printStatusline(e, status, in, opts, now)
	}
	if o.asJSON {
		err = writeJSON(e, usageJSON(r))
	} else {
		o.printTable(e, r)
		if stats.Skipped > 0 {
			fmt.Fprintf(e.ErrOut, "Skipped what could not be read: %s.\n", term.Plural(stats.Skipped, "line, record or session"))
		}
	}
	if err == nil && len(stats.Failed) > 0 {
		return exitCodeError{exitProblems}
	}
	return err
}

// printTable prints a report for a person: on a terminal, columns under
// a header with a bar of each row's cost and a total row; for a script,
// tab-separated rows (key, input, output, cache writes, cache reads,
// total tokens, cost, models), no header.
func (o *usageOptions) printTable(e *env, r usage.Report) {
	if len(r.Rows) == 0 {
		fmt.Fprintln(e.ErrOut, "No model calls recorded in these sessions.")
		return
	}
	label := map[usage.View]string{usage.Daily: "Date", usage.Weekly: "Week", usage.Monthly: "Month", usage.BySession: "Session",
		usage.ByModel: "Model", usage.ByProject: "Project", usage.ByHarness: "Harness"}[r.View]
	t := &term.Table{IO: e.IOStreams, Header: []string{label, "Models", "Input", "Output", "Cache write", "Cache read", "Total", "Cost", ""},
		Flex: []bool{r.View == usage.BySession || r.View == usage.ByProject, true, false, false, false, false, false, false, false}}
	maxCost := 0.0
	for _, row := range r.Rows {
		maxCost = max(maxCost, row.Cost)
	}
	add := func(key string, models []string, tot usage.Totals, bar string) {
		if !e.IsTTY {
			t.Add(key, tokens(tot.Tokens.Input), tokens(tot.Tokens.Output), tokens(tot.Tokens.CacheWrite), tokens(tot.Tokens.CacheRead),
				tokens(tot.Tokens.Sum()), strconv.FormatFloat(tot.Cost, 'f', 6, 64), strings.Join(models, ","))
			return
		}
		t.Add(key, strings.Join(models, ", "), humanTokens(tot.Tokens.Input), humanTokens(tot.Tokens.Output),
			humanTokens(tot.Tokens.CacheWrite), humanTokens(tot.Tokens.CacheRead), humanTokens(tot.Tokens.Sum()), dollars(tot), bar)
	}
	for _, row := range r.Rows {
		var models []string
		for _, m := range row.Models {
			models = append(models, m.Model)
		}
		add(rowLabel(r.View, row, e.IsTTY), models, row.Totals, costBar(row.Cost, maxCost))
		if o.breakdown {
			for _, m := range row.Models {
				add("  └ "+m.Model, nil, m.Totals, "")
			}
		}
	}
	if e.IsTTY {
		add("Total", nil, r.Total.Totals, "")
	}
	t.Print()
	if r.Total.Unpriced > 0 {
		fmt.Fprintf(e.ErrOut, "%s of models with no price (neither recorded nor in the price table): not in the cost, which is a lower bound.\n",
			term.Plural(r.Total.Unpriced, "call"))
	}
}

// rowLabel is what a row is called in a table.
func rowLabel(v usage.View, row usage.Row, tty bool) string {
	switch {
	case v == usage.BySession && row.Session != nil:
		s := row.Session
		if !tty {
			return s.Harness + ":" + s.ID
		}
		title := s.Title
		if title == "" {
			title = s.ID
		}
		return s.Harness + " " + term.OneLine(title)
	case v == usage.ByProject && tty:
		return orDash(term.HomePath(row.Key))
	}
	return orDash(row.Key)
}

func tokens(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// humanTokens is a count of tokens for a person: 1234 / 12.3k / 4.5M / 1.20B.
func humanTokens(n float64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(n/1e9, 'f', 2, 64) + "B"
	case n >= 1e6:
		return strconv.FormatFloat(n/1e6, 'f', 1, 64) + "M"
	case n >= 1e4:
		return strconv.FormatFloat(n/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(n, 'f', 0, 64)
}

// dollars is a cost for a person; one with unpriced calls is marked as
// a lower bound.
func dollars(t usage.Totals) string {
	s := "$" + strconv.FormatFloat(t.Cost, 'f', 2, 64)
	if t.Unpriced > 0 {
		s = "≥" + s
	}
	return s
}

// costBar is a bar of eighths, up to 12 cells, of cost against the
// largest row's.
func costBar(cost, largest float64) string {
	if largest <= 0 || cost <= 0 {
		return ""
	}
	const cells = 12
	eighths := int(math.Round(cost / largest * cells * 8))
	bar := strings.Repeat("█", eighths/8)
	if rest := eighths % 8; rest > 0 {
		bar += string([]rune("▏▎▍▌▋▊▉")[rest-1])
	}
	return bar
}
