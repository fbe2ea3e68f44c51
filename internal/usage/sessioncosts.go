package usage

import "cmp"

// A SessionCost is what one session's calls came to, as a report by
// session sums them (NewReport, BySession): its totals, and the model
// its row lists first, the one of the greatest cost (of equal costs, the
// first by name).
type SessionCost struct {
	Session SessionKey
	Totals
	Model string
}

// A SessionKey names a session by its harness and file, as a report by
// session keys its rows.
type SessionKey struct{ Harness, Path string }

// SessionCosts are the rows of a report by session (NewReport, BySession,
// in mode, over every day), in the order their sessions are first met:
// each session's totals and first model. A caller that wants only these
// (a server keeps every session's cost beside its listing) is spared
// the report's rows, their keys and their model lists: at 25,000
// sessions the report took 85 ms and 36 MB, these 15 ms and 8 MB
// (BenchmarkSessionCosts).
func SessionCosts(groups []Group, mode Mode) []SessionCost {
	mode = cmp.Or(mode, Auto)
	// A ledger's groups come session by session: the runs of one rollup
	// are at least as many as the sessions.
	n := 0
	for k := range groups {
		if k == 0 || groups[k].Rollup != groups[k-1].Rollup {
			n++
		}
	}
	at := make(map[SessionKey]int, n)
	out := make([]SessionCost, 0, n)
	models := make([][]ModelRow, 0, n) // each session's, by model id, in the order first met
	for k := range groups {
		g := &groups[k]
		key := SessionKey{Harness: g.Rollup.Harness, Path: g.Rollup.Path}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, SessionCost{Session: key})
			models = append(models, nil)
		}
		t := g.totals(mode)
		out[i].add(t)
		id := g.Model.ID()
		m := -1
		for j := range models[i] {
			if models[i][j].Model == id {
				m = j
				break
			}
		}
		if m < 0 {
			models[i] = append(models[i], ModelRow{Model: id})
			m = len(models[i]) - 1
		}
		models[i][m].add(t)
	}
	for i := range out {
		var best float64
		for j, m := range models[i] {
			// The report's order of a row's models (cmp.Compare: a NaN
			// below every cost).
			if d := cmp.Compare(m.Cost, best); j == 0 || d > 0 || d == 0 && m.Model < out[i].Model {
				out[i].Model, best = m.Model, m.Cost
			}
		}
	}
	return out
}
