package serve

import (
	"fmt"
	"html/template"
	"net/http"
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
	DailyRows, ModelRows, ProjectRows  []usage.Row
	HarnessRows                        []usage.Row
	Error                              string
	Failed                             []string
	Skipped                            int
	Days                               int
}

// chartRows is how many bars a chart by model or project shows.
const chartRows = 12

// serveUsage is the usage page: cost per day (the last 60), by model, by
// project and by harness, as charts and tables.
func (s *Server) serveUsage(w http.ResponseWriter, r *http.Request) {
	v := s.use.Load()
	p := &usagePage{base: base{Title: "Usage", Nav: "usage"}, Ready: !v.made.IsZero(), Made: v.made, Skipped: v.skipped, Days: usageDays}
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
	p.DailyRows = days(v.daily.Rows, s.cfg.Location)
	p.Daily = columns(p.DailyRows)
	p.ModelRows, p.ProjectRows, p.HarnessRows = byCost(v.models.Rows), byCost(v.projects.Rows), byCost(v.harnesses.Rows)
	p.Models = bars(p.ModelRows, func(r usage.Row) string { return r.Key })
	p.Projects = bars(p.ProjectRows, func(r usage.Row) string { return shortPath(r.Key) })
	p.Harnesses = bars(p.HarnessRows, func(r usage.Row) string { return r.Key })
	render(w, "usage.html", p)
}

// days are the daily rows of the last usageDays days, a row for each day
// (one with no calls is empty), oldest first.
func days(rows []usage.Row, loc *time.Location) []usage.Row {
	byKey := map[string]usage.Row{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	now := time.Now().In(loc)
	latest := ""
	for _, r := range rows {
		latest = max(latest, r.Key)
	}
	if last, err := time.ParseInLocation("2006-01-02", latest, loc); err == nil && now.Sub(last) > usageDays*24*time.Hour {
		now = last
	}
	out := make([]usage.Row, 0, usageDays)
	for d := usageDays - 1; d >= 0; d-- {
		key := now.AddDate(0, 0, -d).Format("2006-01-02")
		r, ok := byKey[key]
		if !ok {
			r = usage.Row{Key: key}
		}
		out = append(out, r)
	}
	return out
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

// columns draws the daily costs as an SVG column chart.
func columns(rows []usage.Row) template.HTML {
	const w, h, pad = 720, 160, 20
	top := 0.0
	for _, r := range rows {
		top = max(top, r.Cost)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="Cost per day">`, w, h+pad)
	if top == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="muted">no calls in these days</text>`, w/2-60, h/2)
	}
	bw := float64(w) / float64(max(1, len(rows)))
	for k, r := range rows {
		bh := 0.0
		if top > 0 {
			bh = r.Cost / top * float64(h-pad)
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %s</title></rect>`,
			float64(k)*bw+1, float64(h)-bh, bw-2, bh, template.HTMLEscapeString(r.Key), template.HTMLEscapeString(costText(r.Cost, r.Calls, r.Unpriced)))
		if k%10 == 0 || k == len(rows)-1 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="axis">%s</text>`, float64(k)*bw, h+pad-4, template.HTMLEscapeString(r.Key[5:]))
		}
	}
	if top > 0 {
		fmt.Fprintf(&b, `<text x="0" y="12" class="axis">%s</text>`, template.HTMLEscapeString(fmt.Sprintf("$%.2f", top)))
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
