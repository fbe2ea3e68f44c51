package usage

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateRules = flag.Bool("update", false, "rewrite testdata/rules.golden")

// rulesTable is a price table of its own, so that the golden costs follow
// the rules, not the built-in table's rates: a long-context tier, a
// time-based schedule, an all-zero entry, a second provider.
const rulesTable = `{"source":"test","date":"2026-12-04","models":[
{"provider":"anthropic","id":"claude-test","cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75,
 "longContext":{"input":6,"output":22.5,"cacheRead":0.6,"cacheWrite":7.5,"inputThreshold":200000}}},
{"provider":"zai","id":"glm-test","cost":{"input":1,"output":2,"cacheRead":0.1,"cacheWrite":0,
 "timeBased":{"offPeakMultiplier":0.5,"peakWindows":[{"weekdays":[1,2,3,4,5],"startMinute":0,"endMinute":720}],
 "effectiveRates":[{"input":2,"output":4,"cacheRead":0.2,"cacheWrite":0,"effectiveFrom":1767225600000}]}}},
{"provider":"openai","id":"gpt-test","cost":{"input":1.25,"output":10,"cacheRead":0.125,"cacheWrite":0}},
{"provider":"free","id":"zero-test","cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}]}`

// TestRulesVersionFollowsTheRules holds the costs and digest of fixed
// calls to testdata/rules.golden, which records the RulesVersion they were
// computed under. A change of what Lookup, Cost or DigestSession
// computes that leaves RulesVersion as it was fails here: a cache keyed
// by CacheVersion would go on answering with the old costs. Change the
// rule's name (lookupRule, costRule, digestRule) and rewrite the golden
// with -update.
func TestRulesVersionFollowsTheRules(t *testing.T) {
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte(rulesTable))
	z.Close()
	table, err := readTable(gz.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	const jan2026 = 1767225600000 // a Thursday, 00:00 UTC
	tok := func(in, out, read, write, write1h float64) Tokens {
		return Tokens{Input: in, Output: out, CacheRead: read, CacheWrite: write, CacheWrite1h: write1h}
	}
	calls := []Call{
		{Entry: EntryKey("a", jan2026), Time: jan2026, Model: RefModel("anthropic", "claude-test", ""), Tokens: tok(1000, 500, 20000, 3000, 0)},
		{Entry: EntryKey("a", jan2026), Time: jan2026, Model: RefModel("anthropic", "claude-test", ""), Tokens: tok(1000, 500, 20000, 3000, 0)}, // a copy
		{Entry: EntryKey("b", jan2026+60000), Time: jan2026 + 60000, Model: RefModel("anthropic", "claude-test", ""), Tokens: tok(150000, 800, 60000, 2000, 1500)},
		{Entry: EntryKey("c", jan2026+3600000), Time: jan2026 + 3600000, Model: RefModel("", "claude-test", ""), Tokens: tok(10, 10, 0, 0, 0)},
		{Entry: EntryKey("d", jan2026-86400000), Time: jan2026 - 86400000, Model: RefModel("zai", "glm-test", ""), Tokens: tok(5000, 700, 100, 0, 0)},
		{Entry: EntryKey("e", jan2026+3*3600000), Time: jan2026 + 3*3600000, Model: RefModel("zai", "glm-test", ""), Tokens: tok(5000, 700, 100, 0, 0)},
		{Entry: EntryKey("f", jan2026+2*86400000), Time: jan2026 + 2*86400000, Model: RefModel("openai", "gpt-test", ""), Tokens: tok(3000, 3000, 1000, 0, 0), Cost: 0.5, HasCost: true},
		{Entry: EntryKey("g", jan2026+3*86400000), Time: jan2026 + 3*86400000, Model: RefModel("free", "zero-test", ""), Tokens: tok(100, 100, 0, 0, 0)},
		{Request: RequestKey("r1"), Time: jan2026 + 4*86400000, Model: RefModel("openai", "gpt-test", ""), Tokens: tok(1, 2, 0, 0, 0)},
		{Request: RequestKey("r1"), Time: jan2026 + 4*86400000, Model: RefModel("openai", "gpt-test", ""), Tokens: tok(1, 2, 0, 0, 0)}, // the same request
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rules %s\n", RulesVersion())
	for i, c := range calls {
		n := c.Model.Name()
		p, ok := table.Lookup(n.Provider, n.Model)
		fmt.Fprintf(&b, "call %d: %s/%s priced %v cost %.12g\n", i, n.Provider, n.Model, ok, p.Cost(c.Tokens, c.Time))
	}
	for _, bk := range DigestSession(&Session{Harness: "xdev", Path: "/s.jsonl", ID: "s", Calls: calls}, table) {
		n := bk.Model.Name()
		fmt.Fprintf(&b, "bucket %d %s/%s calls %d tokens %+v cost %.12g %.12g %.12g unpriced %v\n",
			bk.Quarter, n.Provider, n.Model, bk.Calls, bk.Tokens, bk.Cost[0], bk.Cost[1], bk.Cost[2], bk.Unpriced)
	}
	got := b.String()
	path := filepath.Join("testdata", "rules.golden")
	if *updateRules {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/usage -run TestRulesVersionFollowsTheRules -update writes it)", err)
	}
	want := string(raw)
	wantVersion, wantBody, _ := strings.Cut(want, "\n")
	gotVersion, gotBody, _ := strings.Cut(got, "\n")
	switch {
	case gotBody != wantBody && gotVersion == wantVersion:
		t.Fatalf("the costs of fixed calls changed and RulesVersion did not: rename the rule that changed (lookupRule, costRule, digestRule), then -update\ngot:\n%s\nwant:\n%s", got, want)
	case gotVersion != wantVersion:
		t.Fatalf("RulesVersion changed (%s, golden %s): rewrite the golden with -update, checking its costs", gotVersion, wantVersion)
	}
}
