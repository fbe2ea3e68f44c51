package usage

import (
	"slices"
	"time"
)

// Patch is r, a report of opts, with the groups was taken out and now
// put in: the report of the same ledger with a session's groups replaced
// by those it has now that it was counted again (a server keeps its
// reports so, where building them again read every group). Every
// total moves by the groups' (the tokens and counts exactly; the cost,
// a float, equal to a report made anew but in its last bits); a row's
// first and last calls and harnesses only widen, as they do where was's
// calls are among now's (a session that only grew); a row or a model no
// call falls in any more is dropped. r is not changed.
func (r Report) Patch(opts ReportOptions, was, now []Group) Report {
	out := Report{View: r.View, Total: r.Total, Rows: make([]Row, len(r.Rows), len(r.Rows)+len(now))}
	at := make(map[string]int, len(r.Rows))
	for k, row := range r.Rows {
		out.Rows[k] = row
		at[row.Key] = k
	}
	// row is the row of key, its slices its own (r's are left as they
	// were), made where there is none.
	copied := map[int]bool{}
	row := func(key string, first, last time.Time) *Row {
		k, ok := at[key]
		if !ok {
			k = len(out.Rows)
			at[key] = k
			out.Rows = append(out.Rows, Row{Key: key, First: first, Last: last})
		}
		if !copied[k] {
			copied[k] = true
			out.Rows[k].Models = slices.Clone(out.Rows[k].Models)
			out.Rows[k].Harnesses = slices.Clone(out.Rows[k].Harnesses)
		}
		return &out.Rows[k]
	}
	model := func(r *Row, id string) *ModelRow {
		if m := slices.IndexFunc(r.Models, func(m ModelRow) bool { return m.Model == id }); m >= 0 {
			return &r.Models[m]
		}
		r.Models = append(r.Models, ModelRow{Model: id})
		return &r.Models[len(r.Models)-1]
	}
	before, after := NewReport(was, opts), NewReport(now, opts)
	for _, w := range before.Rows {
		x := row(w.Key, w.First, w.Last)
		x.sub(w.Totals)
		for _, m := range w.Models {
			model(x, m.Model).sub(m.Totals)
		}
	}
	for _, n := range after.Rows {
		x := row(n.Key, n.First, n.Last)
		x.add(n.Totals)
		if n.First.Before(x.First) {
			x.First = n.First
		}
		if n.Last.After(x.Last) {
			x.Last = n.Last
		}
		for _, h := range n.Harnesses {
			if !slices.Contains(x.Harnesses, h) {
				x.Harnesses = append(x.Harnesses, h)
			}
		}
		if x.Session == nil {
			x.Session = n.Session
		}
		for _, m := range n.Models {
			model(x, m.Model).add(m.Totals)
		}
	}
	out.Total.sub(before.Total.Totals)
	out.Total.add(after.Total.Totals)
	for k := range copied {
		x := &out.Rows[k]
		x.Models = slices.DeleteFunc(x.Models, func(m ModelRow) bool { return m.Calls <= 0 })
		sortModels(x.Models)
		slices.Sort(x.Harnesses)
	}
	out.Rows = slices.DeleteFunc(out.Rows, func(r Row) bool { return r.Calls <= 0 })
	sortRows(out.View, out.Rows)
	return out
}
