package pgstore

// Benchmarks of the PostgreSQL store against a throwaway server on this
// machine (loopback TCP). docs/performance.md has the figures; they were
// taken with the server as a team runs it (XDEV_PG_FSYNC=on: fsync and
// synchronous commit on):
//
//	XDEV_PG_FSYNC=on go test -run '^$' -bench . -benchtime 1x -pg.n 10000 ./internal/pgstore
//
// CI runs them at the smallest size (-pg.n 200, -pg.mb 5).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/heapsample"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

var (
	benchN  = flag.Int("pg.n", 1000, "sessions in the benchmarks' data dir (10000 for the figures)")
	benchMB = flag.Int("pg.mb", 104, "size of the large session, in MB")
)

const mib = 1 << 20

// benchDir is a data dir of the generated corpus, a private copy (a push
// never writes to it, but BenchmarkSyncAppend appends).
func benchDir(b *testing.B, n int) string {
	b.Helper()
	src, err := corpus.CachedDir(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	copyDir(b, session.SessionsDir(src), session.SessionsDir(dir))
	return dir
}

// bigFile is a data dir holding one generated session of size bytes.
func bigFile(b *testing.B, size int64) (dir, path string) {
	b.Helper()
	src, err := corpus.CachedFile(corpus.Options{Size: size, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	dir = b.TempDir()
	path = filepath.Join(session.SessionsDir(dir), "--big--", "2026-11-30T00-00-00-000Z_big.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return dir, path
}

// BenchmarkPush: the first push of the generated data dir (-pg.n
// sessions), into an empty database. Reports MB/s and sessions/s.
func BenchmarkPush(b *testing.B) {
	dir := benchDir(b, *benchN)
	var st PushStats
	for b.Loop() {
		b.StopTimer()
		db := openDB(b)
		b.StartTimer()
		var err error
		if st, err = db.Push(context.Background(), dir, PushOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if st.New != st.Files {
		b.Fatalf("pushed %+v", st)
	}
	b.SetBytes(st.Bytes)
	b.ReportMetric(float64(st.New)/(b.Elapsed().Seconds()/float64(b.N)), "sessions/s")
}

// BenchmarkSyncAppend: a push after one entry was appended to one
// session of the pushed data dir: a listing of the data dir's files, one
// query for what this machine pushed before, and the one file's new line.
func BenchmarkSyncAppend(b *testing.B) {
	ctx := context.Background()
	dir := benchDir(b, *benchN)
	db := openDB(b)
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		b.Fatal(err)
	}
	files, _ := session.Files(dir)
	i := 0
	for b.Loop() {
		b.StopTimer()
		s, err := session.Open(files[i%len(files)].Path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.AppendMessage(userMsg(fmt.Sprint("one more ", i))); err != nil {
			b.Fatal(err)
		}
		s.Close()
		i++
		b.StartTimer()
		st, err := db.Push(ctx, dir, PushOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if st.Appended != 1 || st.Lines != 1 {
			b.Fatalf("push after one append: %+v", st)
		}
	}
	b.ReportMetric(float64(len(files)), "files")
}

// BenchmarkOpenLarge: open and build the context of the large generated
// session (-pg.mb), from the database and, for the ratio, from its file.
// Metrics: peak-heap-MiB, the largest heap during the open, both ways.
func BenchmarkOpenLarge(b *testing.B) {
	ctx := context.Background()
	dir, path := bigFile(b, int64(*benchMB)<<20)
	db := openDB(b)
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		b.Fatal(err)
	}
	list, err := db.List(ctx, ListOptions{})
	if err != nil || len(list) != 1 {
		b.Fatal(list, err)
	}
	for _, from := range []string{"database", "file"} {
		b.Run(from, func(b *testing.B) {
			var peak uint64
			b.SetBytes(list[0].Size)
			for b.Loop() {
				runtime.GC()
				h := heapsample.Start()
				var s *session.Store
				var err error
				if from == "file" {
					s, err = session.Open(path, nil)
				} else {
					s, err = db.OpenSession(ctx, list[0], nil)
				}
				if err != nil {
					b.Fatal(err)
				}
				if len(s.BuildContext().Messages) == 0 || !s.WindowStats().Backward {
					b.Fatalf("%s: empty context, or not windowed: %+v", from, s.WindowStats())
				}
				peak = max(peak, h.Finish())
			}
			b.ReportMetric(float64(peak)/mib, "peak-heap-MiB")
		})
	}
}

// BenchmarkAppend: one entry appended through the store (DB.Append) to
// a stored session, one at a time. Metrics: the p50 and p99 of each
// append's latency.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	s := storeSession(b, db, "--bench--/append.jsonl")
	var lat []time.Duration
	i := 0
	for b.Loop() {
		line := fmt.Appendf(nil, `{"type":"message","id":"%08x","parentId":null,"timestamp":"2026-11-30T00:00:00.000Z","message":{"role":"user","content":"entry %d","timestamp":1}}`, i, i)
		t := time.Now()
		if err := db.Append(ctx, s, line); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	reportLatency(b, lat)
}

// BenchmarkSearch: 1-3 word queries over the pushed data dir, of words
// of every frequency (the local index's benchQueries' vocabulary ranks).
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	dir := benchDir(b, *benchN)
	db := openDB(b)
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		b.Fatal(err)
	}
	var queries []string
	for _, k := range []int{3, 30, 300, 3000, 30000} {
		queries = append(queries, corpus.Vocabulary(k), corpus.Vocabulary(k)+" "+corpus.Vocabulary(k+1),
			corpus.Vocabulary(k)+" "+corpus.Vocabulary(k*2%corpus.VocabularySize)+" "+corpus.Vocabulary(7))
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := db.Search(ctx, Query{Text: queries[i%len(queries)], Limit: 20}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkVsOmp puts xdev's store beside omp's own SqlSessionStorage
// (omp 18.2.3 on Bun's SQL client, interop/omp/scripts/sql.ts) on the
// same server, on the large session: resume it (open and build the
// context), then append entries one at a time. Each side's figures and
// omp's over xdev's ratio are reported in one run.
func BenchmarkVsOmp(b *testing.B) {
	omptest.Require(b)
	ctx := context.Background()
	dir, path := bigFile(b, int64(*benchMB)<<20)
	url := pgtest.NewDB(b)
	db, err := Open(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		b.Fatal(err)
	}
	tbl, _ := db.OmpTable("")
	if _, err := tbl.Push(ctx, dir, OmpPushOptions{Root: "/omp/sessions"}); err != nil {
		b.Fatal(err)
	}
	key := "/omp/sessions/--big--/" + filepath.Base(path)
	const appends = 20
	for b.Loop() {
		var omp struct {
			ResumeMs float64   `json:"resumeMs"`
			AppendMs []float64 `json:"appendMs"`
		}
		if _, err := db.pool.Exec(ctx, "CHECKPOINT"); err != nil {
			b.Fatal(err)
		}
		list, _ := db.List(ctx, ListOptions{})
		t := time.Now()
		s, err := db.OpenSession(ctx, list[0], nil)
		if err != nil {
			b.Fatal(err)
		}
		s.BuildContext()
		resume := time.Since(t)
		var lat []float64
		for i := range appends {
			t := time.Now()
			if err := db.Append(ctx, list[0], fmt.Appendf(nil, `{"type":"custom","customType":"bench","data":{"i":%d}}`, i)); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, float64(time.Since(t).Microseconds())/1000)
		}
		// omp's side second: each of its appends rewrites the 104 MB row,
		// and the server's checkpoint of that must not fall in xdev's time.
		out := omptest.Run(b, b.TempDir(), "sql.ts", url, "bench", key, fmt.Sprint(appends))
		if err := json.Unmarshal(bytes.TrimSpace(out), &omp); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		if _, err := db.pool.Exec(ctx, "CHECKPOINT"); err != nil {
			b.Fatal(err)
		}
		sort.Float64s(lat)
		sort.Float64s(omp.AppendMs)
		xr, or := float64(resume.Microseconds())/1000, omp.ResumeMs
		xa, oa := lat[len(lat)/2], omp.AppendMs[len(omp.AppendMs)/2]
		b.ReportMetric(xr, "xdev-resume-ms")
		b.ReportMetric(or, "omp-resume-ms")
		b.ReportMetric(or/xr, "resume-omp/xdev")
		b.ReportMetric(xa, "xdev-append-p50-ms")
		b.ReportMetric(oa, "omp-append-p50-ms")
		b.ReportMetric(oa/xa, "append-omp/xdev")
		b.Logf("%d MB session: resume xdev %.0f ms, omp %.0f ms (%.1fx); append p50 xdev %.2f ms, omp %.2f ms (%.1fx)",
			*benchMB, xr, or, or/xr, xa, oa, oa/xa)
	}
}
