package serve

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/usage"
)

// A usageView is what the pages show of the usage ledger: each session's
// cost, and the reports of the usage page. The ledger itself is not
// kept: it is rebuilt from its cache (internal/catalog's usage cache),
// which is what keeps a rebuild fast and the server small.
type usageView struct {
	costs                   costMap // by the session's path
	daily, models, projects usage.Report
	harnesses               usage.Report
	made                    time.Time
	err                     error
	failed                  map[catalog.Harness]error
	skipped                 int
	// racy: sessions written too recently to be trusted to the cache by
	// their stamp, which a ledger from it reads again (with their
	// harness's walk) until a rebuild finds them settled.
	racy int
	// recounted: the sessions counted again into the ledger kept, where
	// one was not built whole (catalog.UsageStats.Recounted).
	recounted int
	// walked: the places were walked, where the watcher did not tell
	// every change by its file (catalog.UsageOptions.Changed).
	walked bool
}

// sessionCost is a session's row of the report by session: its calls
// and those of the subagents it spawned.
type sessionCost struct {
	Cost     float64
	Unpriced int
	Calls    int
	Model    string // the model of most cost
}

// rebuildUsage builds the usage view and keeps it, vouches for the cache
// it wrote (usageLive), and tells the pages. It returns the view, and
// the generation of changes it began at.
func (s *Server) rebuildUsage(ctx context.Context) (*usageView, uint64) {
	gen, asks, changed := s.usageLive.starting()
	s.building(true)
	v := s.buildUsage(ctx, changed)
	s.building(false)
	s.use.Store(v)
	s.usageBuilt.Add(1)
	s.usageLive.built(gen, v.err == nil && len(v.failed) == 0, asks)
	s.events.publish(event{name: "usage", data: "1"})
	return v, gen
}

// buildUsage builds the usage view of every harness, writing the whole
// cache for the CLI to take (catalog.UsageOptions.Vouching), of the
// files changed since the last ledger where they are known: where the
// groups kept take them by counting a few sessions again, the last view
// is patched with those sessions' groups before and after
// (catalog.UsageRecounts), rather than made again of every group (at
// 25,001 sessions, 10 MB of groups read, 30 MB allocated).
func (s *Server) buildUsage(ctx context.Context, changed map[catalog.Harness][]string) *usageView {
	opts := catalog.UsageOptions{Harnesses: catalog.Every, Cache: s.cfg.UsageCache, Vouching: true, Changed: changed}
	if last := s.use.Load(); changed != nil && last.patchable() {
		if rs, stats, ok := s.cat.UsageRecounts(ctx, opts); ok {
			return last.patched(rs, stats, s.cfg.Location)
		}
	}
	v := &usageView{made: time.Now()}
	groups, stats, err := s.cat.UsageGroups(ctx, opts)
	if err != nil {
		v.err = err
		return v
	}
	v.failed, v.skipped, v.racy, v.recounted, v.walked = stats.Failed, stats.Skipped, stats.Racy, stats.Recounted, len(stats.Walked) > 0
	v.err = stats.Unread
	loc := s.cfg.Location
	own := ownStrings{}
	bySession := usage.SessionCosts(groups, usage.Auto)
	v.costs.base = make(map[string]sessionCost, len(bySession))
	for _, r := range bySession {
		v.costs.base[strings.Clone(r.Session.Path)] = sessionCost{Cost: r.Cost, Unpriced: r.Unpriced, Calls: r.Calls, Model: own.of(r.Model)}
	}
	v.daily = own.report(usage.NewReport(groups, usage.ReportOptions{View: usage.Daily, Location: loc}))
	v.models = own.report(usage.NewReport(groups, usage.ReportOptions{View: usage.ByModel, Location: loc}))
	v.projects = own.report(usage.NewReport(groups, usage.ReportOptions{View: usage.ByProject, Location: loc}))
	v.harnesses = own.report(usage.NewReport(groups, usage.ReportOptions{View: usage.ByHarness, Location: loc}))
	return v
}

// ownStrings copies the strings a view keeps, once each. The ledger's
// names and paths are substrings of the usage cache's body, read whole
// (9 MB at 10,000 sessions): a view that kept one of them would keep all
// of it between rebuilds, for the few KB of names it shows.
type ownStrings map[string]string

func (o ownStrings) of(s string) string {
	if c, ok := o[s]; ok {
		return c
	}
	c := strings.Clone(s)
	o[c] = c
	return c
}

// report is r with every string its own and no session: the usage
// page's reports are by period, model, project and harness.
func (o ownStrings) report(r usage.Report) usage.Report {
	row := func(x usage.Row) usage.Row {
		x.Key, x.Session = o.of(x.Key), nil
		x.Models = append([]usage.ModelRow(nil), x.Models...)
		for k := range x.Models {
			x.Models[k].Model = o.of(x.Models[k].Model)
		}
		x.Harnesses = append([]string(nil), x.Harnesses...)
		for k := range x.Harnesses {
			x.Harnesses[k] = o.of(x.Harnesses[k])
		}
		return x
	}
	rows := make([]usage.Row, len(r.Rows))
	for k, x := range r.Rows {
		rows[k] = row(x)
	}
	r.Rows, r.Total = rows, row(r.Total)
	return r
}

// patchable reports whether v is the view of the groups the server kept
// last (a ledger of every harness, read whole), which a recount of a few
// sessions may patch.
func (v *usageView) patchable() bool {
	return !v.made.IsZero() && v.err == nil && len(v.failed) == 0 && v.racy == 0
}

// patched is v with the sessions counted again in rs (their groups
// before and after) patched in, of the stats of the ledger kept now: the
// view UsageGroups' groups would make but for the costs' last bits
// (usage.Report.Patch). v is not changed: a page may be reading it.
func (v *usageView) patched(rs []catalog.UsageRecount, st catalog.UsageStats, loc *time.Location) *usageView {
	n := *v
	n.made = time.Now()
	n.failed, n.skipped, n.racy, n.recounted, n.walked = st.Failed, st.Skipped, st.Racy, st.Recounted, false
	n.err = st.Unread
	if len(rs) == 0 {
		return &n
	}
	var was, now []usage.Group
	for _, r := range rs {
		was, now = append(was, r.Was...), append(now, r.Now...)
	}
	own := ownStrings{}
	patch := func(r usage.Report, view usage.View) usage.Report {
		return own.report(r.Patch(usage.ReportOptions{View: view, Location: loc}, was, now))
	}
	n.daily, n.models = patch(v.daily, usage.Daily), patch(v.models, usage.ByModel)
	n.projects, n.harnesses = patch(v.projects, usage.ByProject), patch(v.harnesses, usage.ByHarness)
	costs := map[string]sessionCost{}
	for _, r := range usage.SessionCosts(now, usage.Auto) {
		costs[strings.Clone(r.Session.Path)] = sessionCost{Cost: r.Cost, Unpriced: r.Unpriced, Calls: r.Calls, Model: own.of(r.Model)}
	}
	n.costs = v.costs.with(costs)
	return &n
}

// A costMap is the sessions' costs by path: a base, made with a view
// built whole, and the costs of the sessions counted again since over
// it, so that a view patched for one session copies a few of them, not
// 25,000.
type costMap struct {
	base, over map[string]sessionCost
}

// maxCostsOver is the most costs over the base: past it, a patch makes
// a new base of them all.
const maxCostsOver = 1024

// of is the cost of the session at path.
func (m costMap) of(path string) (sessionCost, bool) {
	if c, ok := m.over[path]; ok {
		return c, true
	}
	c, ok := m.base[path]
	return c, ok
}

// with is m with costs over it, m unchanged.
func (m costMap) with(costs map[string]sessionCost) costMap {
	over := maps.Clone(m.over)
	if over == nil {
		over = map[string]sessionCost{}
	}
	maps.Copy(over, costs)
	if len(over) <= maxCostsOver {
		return costMap{base: m.base, over: over}
	}
	base := maps.Clone(m.base)
	maps.Copy(base, over)
	return costMap{base: base}
}
