package main

import (
	"github.com/xdev/xdev/internal/usage"
)

// usageRowJSON is one row of `xdev usage --json`: the fields of ccusage's
// report rows (period, the four token counts, totalTokens, totalCost,
// modelsUsed, modelBreakdowns), so that a script written for ccusage
// reads it, and what ccusage lacks: reasoning tokens, one-hour cache
// writes, calls, calls without a price, the harnesses, first and last
// activity, and in a report by session the session.
type usageRowJSON struct {
	Period string `json:"period"`
	usageTotalsJSON
	ModelsUsed      []string         `json:"modelsUsed"`
	ModelBreakdowns []usageModelJSON `json:"modelBreakdowns"`
	Harnesses       []string         `json:"harnesses"`
	FirstActivity   jsonTime         `json:"firstActivity"`
	LastActivity    jsonTime         `json:"lastActivity"`

	SessionID string `json:"sessionId,omitempty"`
	Harness   string `json:"harness,omitempty"`
	Path      string `json:"path,omitempty"`
	Project   string `json:"projectPath,omitempty"`
	Title     string `json:"title,omitempty"`
}

type usageTotalsJSON struct {
	InputTokens           int64   `json:"inputTokens"`
	OutputTokens          int64   `json:"outputTokens"`
	CacheCreationTokens   int64   `json:"cacheCreationTokens"`
	CacheReadTokens       int64   `json:"cacheReadTokens"`
	TotalTokens           int64   `json:"totalTokens"`
	TotalCost             float64 `json:"totalCost"`
	ReasoningTokens       int64   `json:"reasoningTokens"`
	CacheCreation1hTokens int64   `json:"cacheCreation1hTokens"`
	Calls                 int     `json:"calls"`
	UnpricedCalls         int     `json:"unpricedCalls"`
	MalformedCounters     int     `json:"malformedCounters,omitzero"`
}

// usageModelJSON is a model's part of a row, as ccusage's modelBreakdowns.
type usageModelJSON struct {
	ModelName           string  `json:"modelName"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	Cost                float64 `json:"cost"`
	ReasoningTokens     int64   `json:"reasoningTokens"`
	Calls               int     `json:"calls"`
	UnpricedCalls       int     `json:"unpricedCalls"`
}

func totalsJSON(t usage.Totals) usageTotalsJSON {
	return usageTotalsJSON{InputTokens: int64(t.Tokens.Input), OutputTokens: int64(t.Tokens.Output),
		CacheCreationTokens: int64(t.Tokens.CacheWrite), CacheReadTokens: int64(t.Tokens.CacheRead),
		TotalTokens: int64(t.Tokens.Sum()), TotalCost: t.Cost, ReasoningTokens: int64(t.Tokens.Reasoning),
		CacheCreation1hTokens: int64(t.Tokens.CacheWrite1h), Calls: t.Calls, UnpricedCalls: t.Unpriced, MalformedCounters: t.Malformed}
}

// usageJSON is a report as `xdev usage --json` prints it: the rows under
// the view's name ("daily", "weekly", "monthly", "session", "model",
// "project", "harness"), and "totals".
func usageJSON(r usage.Report) map[string]any {
	rows := make([]usageRowJSON, 0, len(r.Rows))
	for _, row := range r.Rows {
		j := usageRowJSON{Period: row.Key, usageTotalsJSON: totalsJSON(row.Totals), Harnesses: row.Harnesses,
			FirstActivity: jsonTime(row.First), LastActivity: jsonTime(row.Last), ModelsUsed: []string{}, ModelBreakdowns: []usageModelJSON{}}
		for _, m := range row.Models {
			j.ModelsUsed = append(j.ModelsUsed, m.Model)
			j.ModelBreakdowns = append(j.ModelBreakdowns, usageModelJSON{ModelName: m.Model, InputTokens: int64(m.Tokens.Input),
				OutputTokens: int64(m.Tokens.Output), CacheCreationTokens: int64(m.Tokens.CacheWrite), CacheReadTokens: int64(m.Tokens.CacheRead),
				Cost: m.Cost, ReasoningTokens: int64(m.Tokens.Reasoning), Calls: m.Calls, UnpricedCalls: m.Unpriced})
		}
		if s := row.Session; s != nil {
			j.Period, j.SessionID, j.Harness, j.Path, j.Project, j.Title = s.ID, s.ID, s.Harness, s.Path, s.Project, s.Title
		}
		rows = append(rows, j)
	}
	return map[string]any{string(r.View): rows, "totals": totalsJSON(r.Total.Totals)}
}
