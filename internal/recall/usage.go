package recall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/when"
)

// UsageArgs are usage_summary's arguments.
type UsageArgs struct {
	By      string `json:"by,omitempty" jsonschema:"rows by daily (default), weekly, monthly, session, model, project or harness"`
	Since   string `json:"since,omitempty" jsonschema:"calls from this day on: 7d, 2w, 2026-11-01"`
	Until   string `json:"until,omitempty" jsonschema:"calls up to this day (inclusive)"`
	Harness string `json:"harness,omitempty" jsonschema:"only this harness's sessions (the enum, from catalog.Every)"`
	Project string `json:"project,omitempty" jsonschema:"only sessions of this project: its directory"`
	Paging
}

// UsageResult is usage_summary's output.
type UsageResult struct {
	By     string     `json:"by"`
	Rows   []UsageRow `json:"rows"`
	Total  UsageRow   `json:"total"`
	Failed []string   `json:"failed,omitempty" jsonschema:"harnesses that could not be read, and why"`
	Budget Budget     `json:"budget"`
}

// A UsageRow is a group of calls: their tokens and cost.
type UsageRow struct {
	Key        string   `json:"key" jsonschema:"the day, week (its Monday), month, session file, model, project or harness"`
	Session    string   `json:"session,omitempty" jsonschema:"in a report by session: its id"`
	Calls      int      `json:"calls"`
	Input      float64  `json:"input_tokens"`
	Output     float64  `json:"output_tokens"`
	CacheWrite float64  `json:"cache_write_tokens"`
	CacheRead  float64  `json:"cache_read_tokens"`
	Cost       float64  `json:"cost_usd"`
	Unpriced   int      `json:"unpriced_calls,omitempty" jsonschema:"calls of models with no price: not in the cost, which is then a lower bound"`
	Models     []string `json:"models,omitempty"`
}

func (s *server) usage(ctx context.Context, a UsageArgs) (UsageResult, string, error) {
	out := UsageResult{Rows: []UsageRow{}}
	b, limit, from, err := a.page("usage_summary")
	if err != nil {
		return out, "", err
	}
	by := a.By
	if by == "" {
		by = "daily"
	}
	view, err := usage.ParseView(by)
	if err != nil {
		return out, "", fmt.Errorf("by: %v", err)
	}
	out.By = by
	now := s.now()
	since, err := when.Parse(a.Since, now)
	if err != nil {
		return out, "", fmt.Errorf("since: %v", err)
	}
	until, err := when.Parse(a.Until, now)
	if err != nil {
		return out, "", fmt.Errorf("until: %v", err)
	}
	hs := catalog.Every // the places a ledger reads
	if a.Harness != "" {
		if err := checkHarness(a.Harness); err != nil {
			return out, "", err
		}
		hs = []catalog.Harness{catalog.Harness(a.Harness)}
	}
	uo := catalog.UsageOptions{Harnesses: hs, Cwd: a.Project, Cache: s.cache}
	if !since.IsZero() {
		s := since.Local()
		uo.ModifiedSince = time.Date(s.Year(), s.Month(), s.Day(), 0, 0, 0, 0, time.Local)
	}
	r, stats, err := s.cat.UsageReport(ctx, uo, usage.ReportOptions{View: view, Since: since, Until: until})
	if err != nil {
		return out, "", err
	}
	for h, err := range stats.Failed {
		out.Failed = append(out.Failed, fmt.Sprintf("%s: %v", h, err))
	}
	if stats.Unread != nil {
		return out, "", stats.Unread
	}
	out.Total = usageRow(r.Total)
	b.reserve(frame + sizeOf(out))
	var text strings.Builder
	next := ""
	for i := from; i < len(r.Rows); i++ {
		if i == from+limit {
			next = cursorOf("usage_summary", i)
			break
		}
		v := usageRow(r.Rows[i])
		line := fmt.Sprintf("- %s: $%.4f, %d calls, %.0f in / %.0f out / %.0f cache write / %.0f cache read tokens · %s\n",
			v.Key, v.Cost, v.Calls, v.Input, v.Output, v.CacheWrite, v.CacheRead, strings.Join(v.Models, ", "))
		if !b.take(sizeOf(v) + len(line)) {
			next = cursorOf("usage_summary", i)
			break
		}
		out.Rows = append(out.Rows, v)
		text.WriteString(line)
	}
	out.Budget = b.report(next)
	head := fmt.Sprintf("Usage by %s: total $%.4f over %d calls", by, out.Total.Cost, out.Total.Calls)
	if out.Total.Unpriced > 0 {
		head += fmt.Sprintf(" (a lower bound: %d calls of models with no price)", out.Total.Unpriced)
	}
	return out, head + "\n" + text.String() + moreText(out.Budget), nil
}

func usageRow(r usage.Row) UsageRow {
	v := UsageRow{Key: r.Key, Calls: r.Calls, Input: r.Tokens.Input, Output: r.Tokens.Output, CacheWrite: r.Tokens.CacheWrite,
		CacheRead: r.Tokens.CacheRead, Cost: r.Cost, Unpriced: r.Unpriced}
	if r.Session != nil {
		v.Session = r.Session.ID
	}
	for _, m := range r.Models {
		v.Models = append(v.Models, m.Model)
	}
	return v
}

func moreText(b Budget) string {
	if b.NextCursor == "" {
		return ""
	}
	return fmt.Sprintf("More: call again with cursor %q.\n", b.NextCursor)
}
