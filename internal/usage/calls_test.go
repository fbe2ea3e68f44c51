package usage

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/realfixtures"
)

// ompCall is one call as interop/omp/scripts/usage.ts prints omp-stats'.
type ompCall struct {
	File        string   `json:"file"`
	EntryID     string   `json:"entryId"`
	Model       string   `json:"model"`
	Provider    string   `json:"provider"`
	API         string   `json:"api"`
	Timestamp   float64  `json:"timestamp"`
	Input       float64  `json:"input"`
	Output      float64  `json:"output"`
	CacheRead   float64  `json:"cacheRead"`
	CacheWrite  float64  `json:"cacheWrite"`
	TotalTokens float64  `json:"totalTokens"`
	Cost        *float64 `json:"cost"`
}

// TestSessionCallsMatchOmpStats: the calls read from omp-format sessions
// (the bundled samples of every entry type, the real pi sessions, and a
// hand-made file of malformed usage) are those omp's own statistics
// (omp-stats' parseSessionFile, run by Bun) read, call for call: id,
// model, provider, api, time, every counter, total and recorded cost.
func TestSessionCallsMatchOmpStats(t *testing.T) {
	files, _ := filepath.Glob("../session/testdata/omp/sessions/-proj/*.jsonl")
	real, ok := realfixtures.Find()
	if !ok {
		realfixtures.Absent(t, "../shared/fixtures/real")
	}
	pi, _ := filepath.Glob(filepath.Join(real, "pi-*.jsonl"))
	files = append(append(files, pi...), "testdata/hostile.jsonl")
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	for k, f := range files {
		files[k], _ = filepath.Abs(f)
	}
	var omp []ompCall
	if err := json.Unmarshal(omptest.Run(t, t.TempDir(), "usage.ts", files...), &omp); err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]ompCall{}
	for _, c := range omp {
		byFile[c.File] = append(byFile[c.File], c)
	}
	total := 0
	for _, f := range files {
		calls, err := SessionCalls(f)
		if err != nil {
			t.Fatal(err)
		}
		want := byFile[f]
		if len(calls) != len(want) {
			t.Errorf("%s: %d calls, omp-stats %d", filepath.Base(f), len(calls), len(want))
			continue
		}
		for k, c := range calls {
			w := want[k]
			got := ompCall{File: f, EntryID: w.EntryID, Model: c.Model.ID(), Provider: c.Model.Provider(), API: c.Model.API(), Timestamp: c.Time,
				Input: c.Tokens.Input, Output: c.Tokens.Output, CacheRead: c.Tokens.CacheRead, CacheWrite: c.Tokens.CacheWrite,
				TotalTokens: c.Total}
			if c.HasCost {
				got.Cost = &c.Cost
			}
			if c.Entry != EntryKey(w.EntryID, w.Timestamp) {
				t.Errorf("%s, call %d: not entry %s's", filepath.Base(f), k, w.EntryID)
			}
			gotCost, wantCost := deref(got.Cost), deref(w.Cost)
			got.Cost, w.Cost = nil, nil
			if a, b := fmt.Sprintf("%+v %v", got, gotCost), fmt.Sprintf("%+v %v", w, wantCost); a != b {
				t.Errorf("%s, call %d:\n xdev %s\n  omp %s", filepath.Base(f), k, a, b)
			}
			total++
		}
	}
	if total < 20 {
		t.Errorf("only %d calls compared", total)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSessionCallsMalformed: what omp-stats keeps or drops of malformed
// usage, xdev reads alike, and counts the counters it could not read; a
// negative counter, which omp-stats keeps, reads as 0 and is counted.
func TestSessionCallsMalformed(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "neg.jsonl")
	os.WriteFile(f, []byte(`{"type":"session","version":3,"id":"neg","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}`+"\n"+
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-10-01T10:00:02.000Z","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":-5,"output":3,"cacheRead":0,"cacheWrite":0},"timestamp":1}}`+"\n"), 0o600)
	calls, err := SessionCalls(f)
	if err != nil || len(calls) != 1 {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
	if c := calls[0]; c.Tokens.Input != 0 || c.MalformedUsageCounters != 1 || c.Total != 3 {
		t.Errorf("a negative counter: %+v", c)
	}
	hostile, err := SessionCalls("testdata/hostile.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range hostile {
		bad += c.MalformedUsageCounters
	}
	// A string input and an infinite one; the model-less message is no
	// call, the torn line no entry.
	if len(hostile) != 4 || bad != 2 {
		t.Errorf("hostile.jsonl: %d calls, %d malformed counters; want 4 and 2", len(hostile), bad)
	}
}

// FuzzCallOf: any entry reads as a call or none, never a panic, and a
// call's counters, total and cost are finite and its counters not
// negative.
func FuzzCallOf(f *testing.F) {
	if b, err := os.ReadFile("testdata/hostile.jsonl"); err == nil {
		for _, l := range bytes.Split(b, []byte{'\n'}) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v, err := jsonx.Parse(line)
		if err != nil {
			return
		}
		c, ok := callOf(v)
		// The members a call is made of, read in one pass, make the same
		// call (or none).
		if e, err := callEnvelope(line); err != nil {
			t.Fatalf("callEnvelope(%q): %v, where Parse reads it", line, err)
		} else if c2, ok2 := callOf(e); ok2 != ok || c2 != c {
			t.Fatalf("callOf(callEnvelope(%q)) = %+v, %v; of the line decoded whole %+v, %v", line, c2, ok2, c, ok)
		}
		if !ok {
			return
		}
		for _, x := range []float64{c.Tokens.Input, c.Tokens.Output, c.Tokens.CacheRead, c.Tokens.CacheWrite, c.Tokens.CacheWrite1h} {
			if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("a counter %v: %+v", x, c)
			}
		}
		if math.IsNaN(c.Total) || math.IsInf(c.Total, 0) || math.IsNaN(c.Cost) || math.IsInf(c.Cost, 0) {
			t.Fatalf("%+v", c)
		}
	})
}
