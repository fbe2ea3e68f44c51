package serve

import (
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/usage"
)

type usagePage struct {
	base
	Ready                              bool
	Made                               time.Time
	Total                              usage.Row
	Daily, Models, Projects, Harnesses template.HTML // the charts
	ModelRows, ProjectRows             []usage.Row
	Span                               span // the chart over time
	HarnessRows                        []usage.Row
	Error                              string
	Failed                             []string
	Skipped                            int
	Days                               int // the last days asked for (?days=N), 0 for the span of the calls
}

// chartRows is how many bars a chart by model or project shows.
const chartRows = 12

// serveUsage is the usage page: cost over time (the span of days that
// holds calls, or the last N days ?days=N asks for, in columns of a day, a
// week or a month so that there are at most maxColumns), by model, by
// project and by harness, as charts and tables.
func (s *Server) serveUsage(w http.ResponseWriter, r *http.Request) {
	s.wantUsage()
	v := s.use.Load()
	p := &usagePage{base: base{Title: "Usage", Nav: "usage"}, Ready: !v.made.IsZero(), Made: v.made, Skipped: v.skipped}
	if !p.Ready {
		p.Notice = "The usage ledger is being read; this page fills in when it is done."
		render(w, "usage.html", p)
		return
	}
	if v.err != nil {
		p.Error = v.err.Error()
	}
	for h, err := range v.failed {
		p.Failed = append(p.Failed, fmt.Sprintf("%s: %v", h.Name(), err))
	}
	p.Total = v.harnesses.Total
	last, _ := strconv.Atoi(r.URL.Query().Get("days"))
	p.Days = max(0, min(last, 3660))
	p.Span = spanOf(v.daily.Rows, time.Now().In(s.cfg.Location), p.Days)
	p.Daily = columns(p.Span.Columns)
	p.ModelRows, p.ProjectRows, p.HarnessRows = byCost(v.models.Rows), byCost(v.projects.Rows), byCost(v.harnesses.Rows)
	p.Models = bars(p.ModelRows, func(r usage.Row) string { return r.Key })
	p.Projects = bars(p.ProjectRows, func(r usage.Row) string { return shortPath(r.Key) })
	p.Harnesses = bars(p.HarnessRows, func(r usage.Row) string { return r.Key })
	render(w, "usage.html", p)
}

// maxColumns is the most columns the chart over time draws.
const maxColumns = 62

// A span is what the chart over time shows: its first and last days, the
// width of a column ("day", "week", "month", "year") and the columns, oldest
// first, each keyed by its first day.
type span struct {
	From, To string
	Unit     string
	Columns  []usage.Row
}

// spanOf lays the daily rows out as columns: over the last `days` days to
// today when days > 0, else over the days that hold calls (from the first
// to the last, or to today when that is within the chart), in days, weeks
// (from Monday), months or years, whichever gives at most maxColumns. Every
// day's cost is in exactly one column: the columns sum to the total.
func spanOf(rows []usage.Row, today time.Time, days int) span {
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	to := day(today)
	from := to.AddDate(0, 0, -59)
	if days > 0 {
		from = to.AddDate(0, 0, -(days - 1))
	} else if len(rows) > 0 {
		first, last := rows[0].Key, rows[0].Key
		for _, r := range rows {
			first, last = min(first, r.Key), max(last, r.Key)
		}
		f, err1 := time.Parse("2006-01-02", first)
		l, err2 := time.Parse("2006-01-02", last)
		if err1 == nil && err2 == nil {
			from = f
			if to.Sub(l) > 60*24*time.Hour {
				to = l // an archive: its days, not the empty weeks since
			}
		}
	}
	n := int(to.Sub(from).Hours()/24) + 1
	unit, start, next := "day", from, func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
	switch {
	case n <= maxColumns:
	case n <= maxColumns*7:
		unit = "week"
		start = from.AddDate(0, 0, -((int(from.Weekday()) + 6) % 7))
		next = func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
	case (to.Year()-from.Year())*12+int(to.Month()-from.Month())+1 <= maxColumns:
		unit = "month"
		start = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
		next = func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
	default:
		unit = "year"
		start = time.Date(from.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		next = func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }
	}
	sp := span{From: from.Format("2006-01-02"), To: to.Format("2006-01-02"), Unit: unit}
	for c := start; !c.After(to); c = next(c) {
		sp.Columns = append(sp.Columns, usage.Row{Key: c.Format("2006-01-02")})
	}
	for _, r := range rows {
		d, err := time.Parse("2006-01-02", r.Key)
		if err != nil || d.Before(from) || d.After(to) {
			continue
		}
		k := sort.Search(len(sp.Columns), func(i int) bool { return sp.Columns[i].Key > r.Key }) - 1
		if k < 0 {
			continue
		}
		c := &sp.Columns[k].Totals
		c.Cost += r.Cost
		c.Calls += r.Calls
		c.Unpriced += r.Unpriced
		c.Malformed += r.Malformed
		c.Tokens.Add(r.Tokens)
	}
	return sp
}

// byCost are rows by cost, the most first.
func byCost(rows []usage.Row) []usage.Row {
	out := append([]usage.Row(nil), rows...)
	for i := 1; i < len(out); i++ {
		for k := i; k > 0 && out[k].Cost > out[k-1].Cost; k-- {
			out[k], out[k-1] = out[k-1], out[k]
		}
	}
	return out
}

// columns draws the columns of a span as an SVG column chart, with the
// top cost on the left and about six dates under it, the first and last
// anchored inside the chart so that none is cut off.
func columns(rows []usage.Row) template.HTML {
	const w, h, pad, left = 720, 160, 20, 56
	top := 0.0
	for _, r := range rows {
		top = max(top, r.Cost)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="Cost over time">`, w, h+pad)
	if top == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="muted" text-anchor="middle">no calls in these days</text>`, w/2, h/2)
	}
	bw := float64(w-left) / float64(max(1, len(rows)))
	every := max(1, (len(rows)+5)/6)
	for k, r := range rows {
		bh := 0.0
		if top > 0 {
			bh = r.Cost / top * float64(h-pad)
		}
		x := left + float64(k)*bw
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %s</title></rect>`,
			x+1, float64(h)-bh, max(bw-2, 1), bh, template.HTMLEscapeString(r.Key), template.HTMLEscapeString(costText(r.Cost, r.Calls, r.Unpriced)))
		if k%every == 0 || k == len(rows)-1 {
			anchor, lx := "middle", x+bw/2
			switch {
			case k == len(rows)-1:
				anchor, lx = "end", x+bw
			case k == 0:
				anchor, lx = "start", x
			case k > len(rows)-1-every/2:
				continue // too near the last label
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="axis" text-anchor="%s">%s</text>`, lx, h+pad-4, anchor, template.HTMLEscapeString(r.Key))
		}
	}
	if top > 0 {
		fmt.Fprintf(&b, `<text x="0" y="%d" class="axis">%s</text>`, pad, template.HTMLEscapeString(costText(top, 1, 0)))
		fmt.Fprintf(&b, `<text x="0" y="%d" class="axis">$0</text>`, h)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// bars draws rows (by cost, the most first) as an SVG bar chart of their
// first chartRows, each labelled by label.
func bars(rows []usage.Row, label func(usage.Row) string) template.HTML {
	if len(rows) > chartRows {
		rows = rows[:chartRows]
	}
	const w, lw, rh = 720, 260, 22
	top := 0.0
	for _, r := range rows {
		top = max(top, r.Cost)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img">`, w, max(1, len(rows))*rh)
	for k, r := range rows {
		y := k * rh
		bl := 0.0
		if top > 0 {
			bl = r.Cost / top * float64(w-lw-90)
		}
		name := label(r)
		if len([]rune(name)) > 38 {
			name = string([]rune(name)[:37]) + "…"
		}
		fmt.Fprintf(&b, `<text x="0" y="%d" class="label">%s</text>`, y+15, template.HTMLEscapeString(name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d"><title>%s</title></rect>`, lw, y+3, bl, rh-6, template.HTMLEscapeString(label(r)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="value">%s</text>`, float64(lw)+bl+6, y+15, template.HTMLEscapeString(costText(r.Cost, r.Calls, r.Unpriced)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
