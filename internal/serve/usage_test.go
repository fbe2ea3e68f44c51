package serve

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/xdev/xdev/internal/usage"
)

// TestOwnStringsKeepsNoneOfTheBody: a usage view outlives the cache body
// its ledger's strings are substrings of, so what it keeps of a report
// must be copies (equal, and of none of the body's bytes).
func TestOwnStringsKeepsNoneOfTheBody(t *testing.T) {
	body := strings.Repeat("-", 4096) + "/work/proj claude-sonnet-4-5 xdev 2026-12-02"
	f := strings.Fields(body[4096:])
	row := usage.Row{Key: f[0], Models: []usage.ModelRow{{Model: f[1]}}, Harnesses: []string{f[2]}, Session: &usage.Session{}}
	r := usage.Report{View: usage.ByProject, Rows: []usage.Row{row, {Key: f[3]}}, Total: row}
	got := ownStrings{}.report(r)
	lo := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	hi := lo + uintptr(len(body))
	check := func(what, s, want string) {
		t.Helper()
		if s != want {
			t.Errorf("%s is %q, want %q", what, s, want)
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
			t.Errorf("%s %q is kept as a substring of the body", what, s)
		}
	}
	for _, x := range []usage.Row{got.Rows[0], got.Total} {
		check("key", x.Key, f[0])
		check("model", x.Models[0].Model, f[1])
		check("harness", x.Harnesses[0], f[2])
		if x.Session != nil {
			t.Error("a row keeps its session")
		}
	}
	check("key", got.Rows[1].Key, f[3])
	if r.Rows[0].Models[0].Model != f[1] || r.Rows[0].Session == nil {
		t.Error("the report given was changed")
	}
}

// TestUsageSpan: the chart over time holds every day with calls (an
// archive years old, a year, a few weeks, one day, none), in at most
// maxColumns columns of a day, a week or a month; its columns sum to the
// days' total; asked for the last N days, it covers those. (The chart
// showed the last 60 days, where an old archive had $0.03 of $3,345.)
func TestUsageSpan(t *testing.T) {
	today := time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(20, 38))
	for draw := range 200 {
		// Calls on random days of a random span ending at a random time.
		length := 1 + r.IntN([]int{3, 40, 300, 1200, 3000}[draw%5])
		end := today.AddDate(0, 0, -r.IntN([]int{1, 30, 400}[draw%3]))
		var rows []usage.Row
		total := 0.0
		for d := range length {
			if r.IntN(3) == 0 && d != 0 && d != length-1 {
				continue
			}
			c := float64(r.IntN(1000)) / 100
			total += c
			rows = append(rows, usage.Row{Key: end.AddDate(0, 0, -d).Format("2006-01-02"), Totals: usage.Totals{Cost: c, Calls: 1}})
		}
		slices.SortFunc(rows, func(a, b usage.Row) int { return strings.Compare(a.Key, b.Key) })
		sp := spanOf(rows, today, 0)
		sum := 0.0
		for _, c := range sp.Columns {
			sum += c.Cost
		}
		if math.Abs(sum-total) > 1e-6 || len(sp.Columns) > maxColumns || len(sp.Columns) == 0 ||
			sp.From != rows[0].Key || sp.To < rows[len(rows)-1].Key {
			t.Errorf("draw %d: %d days to %s: %d columns of a %s, %s to %s, sum %.2f of %.2f",
				draw, length, end.Format("2006-01-02"), len(sp.Columns), sp.Unit, sp.From, sp.To, sum, total)
		}
		if svg := string(columns(sp.Columns)); !strings.Contains(svg, `text-anchor="end">`+sp.Columns[len(sp.Columns)-1].Key) {
			t.Errorf("draw %d: the last column's date is not anchored inside the chart", draw)
		}
		last := spanOf(rows, today, 30)
		if last.To != today.Format("2006-01-02") || last.From != today.AddDate(0, 0, -29).Format("2006-01-02") || len(last.Columns) != 30 {
			t.Errorf("draw %d: the last 30 days: %s to %s, %d columns", draw, last.From, last.To, len(last.Columns))
		}
	}
	if sp := spanOf(nil, today, 0); len(sp.Columns) != 60 || sp.Unit != "day" {
		t.Errorf("no calls: %d columns of a %s", len(sp.Columns), sp.Unit)
	}
}

// calls is the calls of the session at path, 0 for none.
func (m costMap) calls(path string) int {
	c, _ := m.of(path)
	return c.Calls
}
