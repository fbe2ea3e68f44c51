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

// CallCost is a call's cost in mode, from prices, and whether it is known.
func CallCost(c Call, mode Mode, prices *Table) (float64, bool) {
	computed := func() (float64, bool) {
		p, ok := prices.Lookup(c.Provider, c.Model)
		if !ok {
			return 0, false
		}
		v := p.Cost(c.Tokens, c.Time)
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	switch mode {
	case Display:
		return c.Cost, c.HasCost
	case Calculate:
		return computed()
	}
	if c.HasCost && c.Cost > 0 {
		return c.Cost, true
	}
	if v, ok := computed(); ok {
		return v, true
	}
	return c.Cost, c.HasCost
}

// NewReport groups calls as opts say.
func NewReport(calls []LedgerCall, opts ReportOptions) Report {
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	prices := opts.Prices
	if prices == nil {
		prices = Prices()
	}
	since, until := dayOf(opts.Since, loc), dayOf(opts.Until, loc)
	rows := map[string]*Row{}
	models := map[string]map[string]*ModelRow{}
	r := Report{View: opts.View}
	for _, c := range calls {
		at := time.UnixMilli(int64(c.Time)).In(loc)
		day := at.Format(time.DateOnly)
		if since != "" && day < since || until != "" && day > until {
			continue
		}
		cost, known := CallCost(c.Call, cmp.Or(opts.Mode, Auto), prices)
		t := Totals{Tokens: c.Tokens, Cost: cost, Calls: 1, Malformed: c.MalformedUsageCounters}
		if !known {
			t.Cost, t.Unpriced = 0, 1
		}
		key := rowKey(opts.View, c, at)
		row := rows[key]
		if row == nil {
			row = &Row{Key: key, First: at}
			if opts.View == BySession {
				row.Session = c.Rollup
			}
			rows[key] = row
			models[key] = map[string]*ModelRow{}
		}
		row.add(t)
		if at.Before(row.First) {
			row.First = at
		}
		if at.After(row.Last) {
			row.Last = at
		}
		if !slices.Contains(row.Harnesses, c.Session.Harness) {
			row.Harnesses = append(row.Harnesses, c.Session.Harness)
		}
		m := models[key][c.Model]
		if m == nil {
			m = &ModelRow{Model: c.Model}
			models[key][c.Model] = m
		}
		m.add(t)
		r.Total.add(t)
	}
	for key, row := range rows {
		for _, m := range models[key] {
			row.Models = append(row.Models, *m)
		}
		slices.SortFunc(row.Models, func(a, b ModelRow) int { return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Model, b.Model)) })
		slices.Sort(row.Harnesses)
		r.Rows = append(r.Rows, *row)
	}
	slices.SortFunc(r.Rows, func(a, b Row) int {
		if opts.View.Periodic() {
			return cmp.Compare(a.Key, b.Key)
		}
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Tokens.Sum(), a.Tokens.Sum()), cmp.Compare(a.Key, b.Key))
	})
	return r
}

// dayOf is t's date in loc, "" for the zero time.
func dayOf(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).Format(time.DateOnly)
}

// rowKey is the row of view a call at at falls in.
func rowKey(v View, c LedgerCall, at time.Time) string {
	switch v {
	case Weekly:
		monday := at.AddDate(0, 0, -((int(at.Weekday()) + 6) % 7))
		return monday.Format(time.DateOnly)
	case Monthly:
		return at.Format("2006-01")
	case BySession:
		return c.Rollup.Harness + " " + c.Rollup.Path
	case ByModel:
		return c.Model
	case ByProject:
		return c.Session.Project
	case ByHarness:
		return c.Session.Harness
	}
	return at.Format(time.DateOnly)
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
