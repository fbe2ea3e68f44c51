package usage

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/omptest"
)

func TestPriceCost(t *testing.T) {
	flat := Price{Rates: Rates{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	long := flat
	long.LongContext = &LongContext{Rates: Rates{Input: 6, Output: 22.5, CacheRead: 0.6, CacheWrite: 7.5}, InputThreshold: 200_000}
	sched := Price{Rates: Rates{Input: 1, Output: 2}, TimeBased: &TimeBased{OffPeakMultiplier: 0.5,
		PeakWindows:    []PeakWindow{{Weekdays: []int{1, 2, 3, 4, 5}, StartMinute: 60, EndMinute: 240}},
		EffectiveRates: []EffectiveRates{{Rates: Rates{Input: 10, Output: 20}, EffectiveFrom: 1_800_000_000_000}}}}
	monday2am := 1_790_035_200_000.0 + 2*3_600_000 // 2026-09-21 is a Monday
	cases := []struct {
		name string
		p    Price
		t    Tokens
		at   float64
		want float64
	}{
		{"flat", flat, Tokens{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite: 1e6}, 0, 3 + 15 + 0.3 + 3.75},
		{"one-hour writes cost twice the input", flat, Tokens{CacheWrite: 1e6, CacheWrite1h: 4e5}, 0, 3.75*0.6 + 6*0.4},
		{"under the long-context threshold", long, Tokens{Input: 100_000, Output: 1e6}, 0, 0.3 + 15},
		{"over it, counting cache reads", long, Tokens{Input: 100_000, CacheRead: 100_001, Output: 1e6}, 0, 0.6 + 0.6*0.100001 + 22.5},
		{"off peak", sched, Tokens{Input: 1e6}, monday2am + 3*3_600_000, 0.5},
		{"peak", sched, Tokens{Input: 1e6}, monday2am, 1},
		{"effective later rates", sched, Tokens{Input: 1e6}, 1_800_000_000_000 + 86_400_000*3, 10 * 0.5},
	}
	for _, c := range cases {
		if got := c.p.Cost(c.t, c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLookup(t *testing.T) {
	tab := Prices()
	if len(tab.Models) < 5000 || tab.Source == "" || tab.Date == "" {
		t.Fatalf("the table: %d models, source %q, date %q", len(tab.Models), tab.Source, tab.Date)
	}
	cases := []struct {
		provider, model string
		ok              bool
	}{
		{"anthropic", "claude-sonnet-4-5", true},
		{"", "claude-sonnet-4-5", true}, // Claude Code names no provider
		{"", "anthropic/claude-sonnet-4-5", true},
		{"claude-code", "claude-sonnet-4-5", true}, // a provider the catalog calls otherwise
		{"openai", "no-such-model-anywhere", false},
		// Resellers only, at different prices, and all-zero entries:
		// which served the call is not known (issue 38: it was $0).
		{"", "qwen3.7-plus", false},
		{"anthropic", "qwen3.7-plus", false},
		{"aimlapi", "qwen3.7-plus", false},  // the provider's own entry is all zeros
		{"fireworks", "qwen3.7-plus", true}, // the provider named: its price
		{"github-copilot", "gpt-5", false},  // a subscription's zeros
		{"", "gpt-5", true},                 // its maker's price
		{"", "claude-haiku-4-5", true},      // maker and reseller agree
	}
	for _, c := range cases {
		p, ok := tab.Lookup(c.provider, c.model)
		if ok != c.ok || ok && p.Input == 0 && p.Output == 0 {
			t.Errorf("Lookup(%q, %q) = %+v, %v", c.provider, c.model, p, ok)
		}
	}
	// Every model of the table, named without a provider: a price is never
	// all zeros, and is its maker's or the one every reseller charges.
	for id, ks := range tab.byID {
		p, ok := tab.Lookup("", id)
		if !ok || strings.Contains(id, "/") { // "maker/model" is the maker's
			continue
		}
		if p.zero() {
			t.Errorf("Lookup(%q): an all-zero price", id)
		}
		agree, maker := true, false
		for _, k := range ks {
			m := tab.Models[k]
			maker = maker || rank(m.Provider, "") < 4 && !m.Price.zero()
			agree = agree && (m.Price.zero() || m.Price.same(p))
		}
		if !maker && !agree {
			t.Errorf("Lookup(%q): a reseller's price where resellers disagree", id)
		}
	}
	a, _ := tab.Lookup("", "claude-sonnet-4-5")
	b, _ := tab.Lookup("anthropic", "claude-sonnet-4-5")
	if a.Rates != b.Rates {
		t.Errorf("a model without its provider is not priced as its first party's: %+v, %+v", a, b)
	}
}

// TestCostMatchesOmp holds Cost to pi-catalog's own calculateUsageCost,
// run by Bun, on every model of the table, each with generated calls:
// long prompts past every tier, one-hour cache writes, times in and out of
// peak windows and before and after effective dates.
func TestCostMatchesOmp(t *testing.T) {
	type call struct {
		Provider  string         `json:"provider"`
		ID        string         `json:"id"`
		Usage     map[string]any `json:"usage"`
		Timestamp float64        `json:"timestamp"`
	}
	rng := rand.New(rand.NewPCG(26, 1))
	var calls []call
	var tokens []Tokens
	for _, m := range Prices().Models {
		tk := Tokens{Input: float64(rng.IntN(400_000)), Output: float64(rng.IntN(50_000)),
			CacheRead: float64(rng.IntN(300_000)), CacheWrite: float64(rng.IntN(50_000))}
		usage := map[string]any{"input": tk.Input, "output": tk.Output, "cacheRead": tk.CacheRead, "cacheWrite": tk.CacheWrite}
		if rng.IntN(4) == 0 {
			tk.CacheWrite1h = float64(rng.IntN(int(tk.CacheWrite) + 1))
			usage["cttl"] = map[string]any{"ephemeral1h": tk.CacheWrite1h, "ephemeral5m": tk.CacheWrite - tk.CacheWrite1h}
		}
		at := 1_780_000_000_000 + float64(rng.IntN(40_000_000))*1000
		calls = append(calls, call{m.Provider, m.ID, usage, at})
		tokens = append(tokens, tk)
	}
	b, _ := json.Marshal(calls)
	path := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var omp []*float64
	if err := json.Unmarshal(omptest.Run(t, t.TempDir(), "prices.ts", path), &omp); err != nil {
		t.Fatal(err)
	}
	if len(omp) != len(calls) {
		t.Fatalf("omp priced %d calls of %d", len(omp), len(calls))
	}
	bad := 0
	for k, c := range calls {
		m := Prices().Models[k]
		got := m.Price.Cost(tokens[k], c.Timestamp)
		switch {
		case omp[k] == nil:
			t.Errorf("%s/%s: omp's catalog does not have it", c.Provider, c.ID)
		case math.Abs(got-*omp[k]) > 1e-9*math.Max(1, math.Abs(*omp[k])):
			if bad++; bad <= 10 {
				t.Errorf("%s/%s at %v: %v, omp %v", c.Provider, c.ID, c.Timestamp, got, *omp[k])
			}
		}
	}
}

// TestTableIsTheCatalog: the built-in table has every model of the
// installed catalog (the one omp runs in the interop suite) with the same
// cost, and no other: a catalog upgrade without go generate fails here.
func TestTableIsTheCatalog(t *testing.T) {
	dir := filepath.Join(omptest.Require(t), "node_modules", "@oh-my-pi", "pi-catalog")
	b, err := os.ReadFile(filepath.Join(dir, "src", "models.json"))
	if err != nil {
		t.Fatal(err)
	}
	var catalog map[string]map[string]struct {
		Cost jsontext.Value `json:"cost"`
	}
	if err := json.Unmarshal(b, &catalog); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range Prices().Models {
		c, ok := catalog[m.Provider][m.ID]
		if !ok {
			t.Errorf("%s/%s is not in the catalog", m.Provider, m.ID)
			continue
		}
		n++
		// A cost member Price does not know (a new kind of tier) fails
		// here rather than being priced without.
		var want Price
		if err := json.Unmarshal(c.Cost, &want, json.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("%s/%s: %v", m.Provider, m.ID, err)
		}
		if x, y := mustJSON(t, m.Price), mustJSON(t, want); x != y {
			t.Errorf("%s/%s: %s, the catalog %s", m.Provider, m.ID, x, y)
		}
	}
	total := 0
	for _, ms := range catalog {
		total += len(ms)
	}
	if n != total {
		t.Errorf("the table has %d of the catalog's %d models: run go generate ./internal/usage", n, total)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
