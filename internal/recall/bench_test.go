package recall

import (
	"flag"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/testplace"
)

var (
	benchSessions = flag.Int("recall.n", 10000, "sessions in the data dir of BenchmarkTools")
	benchEnv      = flag.Bool("recall.env", false, "BenchmarkTools on the machine the environment names (HOME, XDG_CACHE_HOME, XDEV_DATA_DIR), "+
		"the harnesses at their default places: a running xdev serve's (interop/omp/bench-mcp.sh)")
)

// BenchmarkTools times each tool as a client calls it (the Go SDK's,
// in memory) over a data dir of -recall.n generated sessions and every
// real fixture, warm (the indexes built, the caches written), and
// reports each one's p50 and p99:
//
//	go test -run '^$' -bench Tools -benchtime 50x ./internal/recall
func BenchmarkTools(b *testing.B) {
	var cat *catalog.Catalog
	p := &testplace.Place{}
	if *benchEnv {
		var err error
		p.Data = os.Getenv(session.DataDirEnv)
		if cat, err = catalog.New(catalog.Config{DataDir: p.Data, DataDirHarness: catalog.Xdev, ResolveWritesCache: true}); err != nil {
			b.Fatal(err)
		}
	} else {
		dir, err := corpus.CachedDir(*benchSessions, 1)
		if err != nil {
			b.Fatal(err)
		}
		p = testplace.New(b)
		testplace.CopyRealFixtures(b, p.Roots)
		p.Data = dir
		cat = p.Catalog(b)
	}
	m := &machine{Place: p, cs: connect(b, New(Options{Catalog: cat, UsageCache: catalog.UsageCacheDir()}))}
	var list ListResult
	m.must(b, "list_sessions", map[string]any{"harness": "xdev", "limit": 1}, &list)
	var hits SearchResult
	m.must(b, "search_sessions", map[string]any{"query": corpus.Vocabulary(40)}, &hits) // the first: every index built
	id, entry := list.Sessions[0].ID, hits.Hits[0].EntryID
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"search-rare", "search_sessions", map[string]any{"query": corpus.Vocabulary(8000)}},
		{"search-common", "search_sessions", map[string]any{"query": corpus.Vocabulary(40)}},
		{"list", "list_sessions", map[string]any{}},
		{"list-project", "list_sessions", map[string]any{"project": list.Sessions[0].Project}},
		{"get_session", "get_session", map[string]any{"session": hits.Hits[0].Path, "around": entry}},
		{"get_session-no-cost", "get_session", map[string]any{"session": id, "no_cost": true}},
		{"get_context", "get_context", map[string]any{"session": id}},
		{"usage_summary", "usage_summary", map[string]any{"by": "model"}},
	} {
		m.call(b, c.tool, c.args) // warm
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := m.call(b, c.tool, c.args); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)].Microseconds())/1000, "p99-ms")
		})
	}
}
