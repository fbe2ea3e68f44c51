package serve

import (
	"context"
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
	costs                   map[string]sessionCost // by the session's path
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
// files changed since the last ledger where they are known.
func (s *Server) buildUsage(ctx context.Context, changed map[catalog.Harness][]string) *usageView {
	v := &usageView{made: time.Now()}
	groups, stats, err := s.cat.UsageGroups(ctx, catalog.UsageOptions{Harnesses: catalog.Every, Cache: s.cfg.UsageCache, Vouching: true, Changed: changed})
	if err != nil {
		v.err = err
		return v
	}
	v.failed, v.skipped, v.racy, v.recounted, v.walked = stats.Failed, stats.Skipped, stats.Racy, stats.Recounted, len(stats.Walked) > 0
	v.err = stats.Unread
	loc := s.cfg.Location
	own := ownStrings{}
	bySession := usage.SessionCosts(groups, usage.Auto)
	v.costs = make(map[string]sessionCost, len(bySession))
	for _, r := range bySession {
		v.costs[strings.Clone(r.Session.Path)] = sessionCost{Cost: r.Cost, Unpriced: r.Unpriced, Calls: r.Calls, Model: own.of(r.Model)}
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
