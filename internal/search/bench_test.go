package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// benchSizes are the data dirs the benchmarks index: -bench 'Index/^1000$'
// in CI, 10000 for the figures in docs/performance.md.
var benchSizes = []int{1000, 10000}

// indexedDir returns the cached generated data dir of n sessions and an
// index of it, fully refreshed, kept beside it for later runs.
func indexedDir(b *testing.B, n int) (string, *DB) {
	b.Helper()
	dir, err := corpus.CachedDir(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	db, err := Open(filepath.Join(corpus.CacheDir(), fmt.Sprintf("search-%d.db", n)), dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Refresh(context.Background(), RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	return dir, db
}

// BenchmarkIndex: the first index of a generated data dir (10,000
// sessions: 236 MB), from nothing. Reports the bytes of text indexed per
// second and the index's size as a share of that text.
func BenchmarkIndex(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir, err := corpus.CachedDir(n, 1)
			if err != nil {
				b.Fatal(err)
			}
			var text, size, read int64
			for b.Loop() {
				path := filepath.Join(b.TempDir(), "index.db")
				db, err := Open(path, dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				st, err := db.Refresh(context.Background(), RefreshOptions{})
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
				fi, _ := os.Stat(path)
				text, size, read = text+st.TextBytes, size+fi.Size(), read+st.Bytes
			}
			b.ReportMetric(float64(text)/b.Elapsed().Seconds()/1e6, "text-MB/s")
			b.ReportMetric(100*float64(size)/float64(text), "index-%-of-text")
			b.ReportMetric(float64(read)/1e6/float64(b.N), "MB-read")
		})
	}
}

// BenchmarkRefreshUnchanged: a refresh that finds nothing to do: one
// stat per file and one read of the files table.
func BenchmarkRefreshUnchanged(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			_, db := indexedDir(b, n)
			for b.Loop() {
				st, err := db.Refresh(context.Background(), RefreshOptions{})
				if err != nil || st.Unchanged != st.Files {
					b.Fatalf("%+v %v", st, err)
				}
			}
		})
	}
}

// BenchmarkRefreshAppend: one entry appended to a big session, then a
// refresh: it reads only the new bytes (and the 4 KiB before them).
func BenchmarkRefreshAppend(b *testing.B) {
	for _, size := range []int64{10 << 20, 500 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			src, err := corpus.CachedFile(corpus.Options{Size: size, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			// A data dir holding a copy of it, and its index, kept.
			dir := filepath.Join(corpus.CacheDir(), fmt.Sprintf("search-append-%d", size>>20))
			path := filepath.Join(session.SessionsDir(dir), "--work-project--", "big.jsonl")
			if _, err := os.Stat(path); err != nil {
				os.MkdirAll(filepath.Dir(path), 0o700)
				data, err := os.ReadFile(src)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o600); err != nil {
					b.Fatal(err)
				}
			}
			db, err := Open(dir+".db", dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Refresh(context.Background(), RefreshOptions{}); err != nil {
				b.Fatal(err)
			}
			s, err := session.Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var read int64
			for b.Loop() {
				b.StopTimer()
				m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent("appended " + corpus.Vocabulary(49999)), Timestamp: time.Now().UnixMilli()}
				if _, err := s.AppendMessage(m); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				st, err := db.Refresh(context.Background(), RefreshOptions{})
				if err != nil || st.Grown != 1 {
					b.Fatalf("%+v %v", st, err)
				}
				read += st.Bytes
			}
			b.ReportMetric(float64(read)/float64(b.N), "bytes-read/op")
		})
	}
}

// benchQueries are the warm queries the figures quote, of one to three
// words: vocabulary words from common (word 10: in about one session in
// three) to rare (word 20,000), two and three words, a phrase of the two
// commonest, an OR, and two of the common words every session holds.
func benchQueries() []string {
	v := corpus.Vocabulary
	return []string{v(10), v(200), v(2000), v(20000), v(50) + " " + v(300), v(30) + " " + v(100) + " " + v(1000),
		`"` + v(0) + " " + v(1) + `"`, v(500) + " OR " + v(600), "refactor parse"}
}

// BenchmarkQueryPrefix: prefix queries, one of the commonest words' first
// four letters (a prefix of 24 of the 25 commonest) and one of five.
func BenchmarkQueryPrefix(b *testing.B) { BenchmarkQuery(b) }

// BenchmarkQuery: warm queries on the indexed data dir, 20 hits each
// with snippets, by relevance and newest first; reports p50 and p99 (run
// it 200x or more: the first run of each query reads the index cold).
// Prefix is apart: a prefix of the commonest words matches most entries.
func BenchmarkQuery(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			_, db := indexedDir(b, n)
			qs := benchQueries()
			if strings.Contains(b.Name(), "QueryPrefix") {
				qs = []string{corpus.Vocabulary(5)[:4] + "*", corpus.Vocabulary(3000)[:5] + "*"}
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := Query{Text: qs[i%len(qs)], Newest: i/len(qs)%2 == 1}
				i++
				t := time.Now()
				if _, err := db.Search(context.Background(), q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
		})
	}
}
