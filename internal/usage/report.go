package usage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// A View is how a report groups calls.
type View string

// The views.
const (
	Daily     View = "daily"
	Weekly    View = "weekly" // weeks from Monday
	Monthly   View = "monthly"
	BySession View = "session" // a subagent's calls in the session that spawned it
	ByModel   View = "model"
	ByProject View = "project"
	ByHarness View = "harness"
)

// Views are the views, in the order help lists them.
var Views = []View{Daily, Weekly, Monthly, BySession, ByModel, ByProject, ByHarness}

// Periodic reports whether v groups by time (and lists oldest first).
func (v View) Periodic() bool { return v == Daily || v == Weekly || v == Monthly }

// A Mode says where a call's cost comes from.
type Mode string

// The modes, as ccusage names them.
const (
	// Auto is the cost the session recorded where it recorded one (not
	// zero), else the cost computed from the price table.
	Auto Mode = "auto"
	// Calculate is always the cost computed from the price table.
	Calculate Mode = "calculate"
	// Display is only the cost the session recorded.
	Display Mode = "display"
)

// ReportOptions say how a report groups, filters and prices.
type ReportOptions struct {
	View View
	// Since and Until keep the calls of these days (inclusive, in
	// Location; zero for no bound).
	Since, Until time.Time
	Location     *time.Location // time.Local when nil
	Mode         Mode           // Auto when empty
	Prices       *Table         // Prices() when nil
}

// A Report is the calls of a ledger grouped into rows, with their total.
type Report struct {
	View  View
	Rows  []Row
	Total Row
}

// A Row is a group of calls: their tokens and cost, and per model.
type Row struct {
	// Key is what the row groups by: the period (2006-01-02, the week's
	// Monday, 2006-01), the session's file, the model, the project or
	// the harness.
	Key string
	Totals
	Models      []ModelRow // by cost, then name
	Harnesses   []string
	First, Last time.Time // the first and last call's times
	// Session is the row's session, in a report by session.
	Session *Session
}

// A ModelRow is a row's calls of one model.
type ModelRow struct {
	Model string
	Totals
}

// Totals are the tokens and cost of some calls.
type Totals struct {
	Tokens Tokens
	Cost   float64
	Calls  int
	// Unpriced counts the calls whose cost is not known (a model the
	// price table does not have, and no cost recorded): their cost is
	// not in Cost, which is then a lower bound.
	Unpriced int
	// Malformed counts the usage counters that were not numbers.
	Malformed int
}

func (t *Totals) add(u Totals) {
	t.Tokens.Add(u.Tokens)
	t.Cost += u.Cost
	t.Calls += u.Calls
	t.Unpriced += u.Unpriced
	t.Malformed += u.Malformed
}

// sub takes u out of t, where add put it in.
func (t *Totals) sub(u Totals) {
	t.Tokens.Add(Tokens{-u.Tokens.Input, -u.Tokens.Output, -u.Tokens.CacheRead, -u.Tokens.CacheWrite, -u.Tokens.CacheWrite1h, -u.Tokens.Reasoning})
	t.Cost -= u.Cost
	t.Calls -= u.Calls
	t.Unpriced -= u.Unpriced
	t.Malformed -= u.Malformed
}

// A Pricer prices calls in a mode from a table, each model looked up
// once.
type Pricer struct {
	mode   Mode
	prices *Table
	memo   map[ModelRef]pricerModel
}

type pricerModel struct {
	price Price
	ok    bool
}

// NewPricer prices in mode from prices (Auto and Prices() when empty).
func NewPricer(mode Mode, prices *Table) *Pricer {
	if prices == nil {
		prices = Prices()
	}
	return &Pricer{mode: cmp.Or(mode, Auto), prices: prices, memo: map[ModelRef]pricerModel{}}
}

// Cost is a call's cost, and whether it is known: in Display mode the
// recorded cost; in Calculate mode the cost of its tokens at its model's
// price; in Auto mode as omp-stats' resolveStoredCost: the recorded cost
// when not zero (or its model's price is time-based, which a session
// records as it was at the time), else the computed one, else the
// recorded zero.
func (p *Pricer) Cost(c Call) (float64, bool) {
	m, seen := p.memo[c.Model]
	if !seen && p.mode != Display {
		m.price, m.ok = p.prices.Lookup(c.Model.Provider(), c.Model.ID())
		p.memo[c.Model] = m
	}
	computed := func() (float64, bool) {
		if !m.ok {
			return 0, false
		}
		v := m.price.Cost(c.Tokens, c.Time)
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	switch p.mode {
	case Display:
		return c.Cost, c.HasCost
	case Calculate:
		return computed()
	}
	// A time-based price is frozen per call, free ones too (omp-stats'
	// resolveStoredCost).
	if c.HasCost && (c.Cost > 0 || m.ok && m.price.TimeBased != nil) {
		return c.Cost, true
	}
	if v, ok := computed(); ok {
		return v, true
	}
	return c.Cost, c.HasCost
}

// NewReport groups the ledger's groups as opts say. Times are the
// calls' as their buckets hold them: a row's first and last activity
// exact, its day that of the call's quarter hour (the same in every
// zone).
func NewReport(groups []Group, opts ReportOptions) Report {
	rp := NewReporter(opts)
	for k := range groups {
		rp.Add(&groups[k])
	}
	return rp.Report()
}

// A Reporter makes NewReport's report of groups added one at a time, so
// that groups read one by one need never be held together: it keeps of
// a group only its sessions' names (and in a report by session its
// Rollup), never its Bucket.
type Reporter struct {
	opts         ReportOptions
	mode         Mode
	loc          *time.Location
	since, until string
	periods      periodNames
	rows         map[string]*reportRow
	total        Row
	// The last group's rollup and row key: a session's groups come
	// together, and a report by session would make its key for each.
	lastRollup *Session
	lastKey    string
}

// reportRow is a row being made: refs are the models of its Models, one
// each (two providers' models of one id are merged by Report).
type reportRow struct {
	Row
	refs []ModelRef
}

// NewReporter makes a reporter of opts.
func NewReporter(opts ReportOptions) *Reporter {
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	return &Reporter{opts: opts, mode: cmp.Or(opts.Mode, Auto), loc: loc, since: dayOf(opts.Since, loc), until: dayOf(opts.Until, loc),
		periods: periodNames{loc: loc}, rows: map[string]*reportRow{}}
}

// Add adds a group to the report.
func (rp *Reporter) Add(g *Group) {
	p := rp.periods.of(g.Quarter)
	if rp.since != "" && p.day < rp.since || rp.until != "" && p.day > rp.until {
		return
	}
	t := g.totals(rp.mode)
	var key string
	if rp.opts.View == BySession && g.Rollup == rp.lastRollup {
		key = rp.lastKey
	} else {
		key = rowKey(rp.opts.View, g, p)
		rp.lastRollup, rp.lastKey = g.Rollup, key
	}
	row := rp.rows[key]
	first, last := time.UnixMilli(int64(g.First)).In(rp.loc), time.UnixMilli(int64(g.Last)).In(rp.loc)
	if row == nil {
		row = &reportRow{Row: Row{Key: key, First: first, Last: last}}
		if rp.opts.View == BySession {
			row.Session = g.Rollup
		}
		rp.rows[key] = row
	}
	row.add(t)
	if first.Before(row.First) {
		row.First = first
	}
	if last.After(row.Last) {
		row.Last = last
	}
	if !slices.Contains(row.Harnesses, g.Session.Harness) {
		row.Harnesses = append(row.Harnesses, g.Session.Harness)
	}
	m := slices.Index(row.refs, g.Model)
	if m < 0 {
		m = len(row.refs)
		row.refs = append(row.refs, g.Model)
		row.Models = append(row.Models, ModelRow{Model: g.Model.ID()})
	}
	row.Models[m].add(t)
	rp.total.add(t)
}

// Report is the report of the groups added, its rows in the view's
// order. The reporter is not to be used after.
func (rp *Reporter) Report() Report {
	r := Report{View: rp.opts.View, Total: rp.total, Rows: make([]Row, 0, len(rp.rows))}
	for key, row := range rp.rows {
		// Two providers' models of one id are one model to a person.
		row.Models = mergeModels(row.Models)
		sortModels(row.Models)
		slices.Sort(row.Harnesses)
		r.Rows = append(r.Rows, row.Row)
		delete(rp.rows, key) // the copy is the report's
	}
	sortRows(r.View, r.Rows)
	return r
}

// sortModels puts a row's models in a report's order: by cost, then
// name.
func sortModels(ms []ModelRow) {
	slices.SortFunc(ms, func(a, b ModelRow) int { return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Model, b.Model)) })
}

// sortRows puts a report's rows in its view's order: oldest first by
// time, else by cost, then tokens, then key.
func sortRows(v View, rows []Row) {
	slices.SortFunc(rows, func(a, b Row) int {
		if v.Periodic() {
			return cmp.Compare(a.Key, b.Key)
		}
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Tokens.Sum(), a.Tokens.Sum()), cmp.Compare(a.Key, b.Key))
	})
}

// mergeModels adds up the rows of one model id.
func mergeModels(ms []ModelRow) []ModelRow {
	at := map[string]int{}
	out := ms[:0]
	for _, m := range ms {
		if k, ok := at[m.Model]; ok {
			out[k].add(m.Totals)
			continue
		}
		at[m.Model] = len(out)
		out = append(out, m)
	}
	return out
}

// A period is the day, week and month a quarter hour falls in.
type period struct{ day, week, month string }

// periodNames names the periods of quarter hours in a zone, each day
// once (a year of quarter hours named one by one took 37 MB at 25,000
// sessions; its days, a few KB).
type periodNames struct {
	loc  *time.Location
	memo map[int]period // by year, month and day, yyyymmdd
}

func (d *periodNames) of(q int64) period {
	at := time.UnixMilli(q * Quarter).In(d.loc)
	y, m, day := at.Date()
	key := y*10000 + int(m)*100 + day
	if p, ok := d.memo[key]; ok {
		return p
	}
	if d.memo == nil {
		d.memo = map[int]period{}
	}
	monday := at.AddDate(0, 0, -((int(at.Weekday()) + 6) % 7))
	p := period{at.Format(time.DateOnly), monday.Format(time.DateOnly), at.Format("2006-01")}
	d.memo[key] = p
	return p
}

// dayOf is t's date in loc, "" for the zero time.
func dayOf(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).Format(time.DateOnly)
}

// rowKey is the row of view a group falls in.
func rowKey(v View, g *Group, p period) string {
	switch v {
	case Weekly:
		return p.week
	case Monthly:
		return p.month
	case BySession:
		return g.Rollup.Harness + " " + g.Rollup.Path
	case ByModel:
		return g.Model.ID()
	case ByProject:
		return g.Session.Project
	case ByHarness:
		return g.Session.Harness
	}
	return p.day
}

// ParseView is the view named s.
func ParseView(s string) (View, error) {
	for _, v := range Views {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("no usage view %q (daily, weekly, monthly, session, model, project or harness)", s)
}
