package session_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/heapsample"
	"github.com/xdev/xdev/internal/session"
)

// The benchmarks read generated sessions (internal/corpus), cached between
// runs in corpus.CacheDir() because the 500 MB file takes seconds
// to write. Run them with
//
//	go test -run '^$' -bench . -benchtime 10x ./internal/session
//
// docs/performance.md has the figures and the side-by-side with omp.

// corpusFile returns a generated session of size bytes (see
// corpus.CachedFile).
func corpusFile(b *testing.B, size int64, seed uint64) string {
	return corpusFileOpts(b, corpus.Options{Size: size, Seed: seed})
}

func corpusFileOpts(b *testing.B, opts corpus.Options) string {
	b.Helper()
	path, err := corpus.CachedFile(opts)
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// corpusDir returns a data dir of n generated small sessions.
func corpusDir(b *testing.B, n int) string {
	b.Helper()
	dir, err := corpus.CachedDir(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

const mib = 1 << 20

// BenchmarkOpen: Open plus BuildContext, windowed, of generated sessions
// of 10, 104 and 500 MB (and, under SameWindow, of 104 and 500 MB sessions
// that end in the same window, so that only the file's size differs). Metrics: MB/s; peak-heap-MiB, the largest Go heap
// in use during the load (sampled every 2 ms, and at the end); live-MiB,
// the heap the open store keeps after a GC.
func BenchmarkOpen(b *testing.B) {
	for _, c := range []struct {
		name string
		size int64
		tail uint64
	}{
		{"10MB", 10 << 20, 0}, {"104MB", 104 << 20, 0}, {"500MB", 500 << 20, 0},
		{"SameWindow/104MB", 104 << 20, 99}, {"SameWindow/500MB", 500 << 20, 99},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := corpusFileOpts(b, corpus.Options{Size: c.size, Seed: 1, TailSeed: c.tail})
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			var peak, live uint64
			var stats session.WindowStats
			for b.Loop() {
				runtime.GC()
				h := heapsample.Start()
				s, err := session.Open(path, nil)
				if err != nil {
					b.Fatal(err)
				}
				ctx := s.BuildContext()
				peak = max(peak, h.Finish())
				if len(ctx.Messages) == 0 {
					b.Fatal("empty context")
				}
				if stats = s.WindowStats(); !stats.Backward {
					b.Fatalf("the windowed load fell back to the full one: %+v", stats)
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = max(live, ms.HeapInuse)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(peak)/mib, "peak-heap-MiB")
			b.ReportMetric(float64(live)/mib, "live-MiB")
			b.ReportMetric(float64(stats.Retained), "entries-kept")
			b.ReportMetric(float64(stats.Seen), "entries-seen")
		})
	}
}

// BenchmarkOpenFull is the same load without windowing, for comparison.
func BenchmarkOpenFull(b *testing.B) {
	path := corpusFile(b, 104<<20, 1)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		s, err := session.Open(path, &session.OpenOptions{Full: true})
		if err != nil {
			b.Fatal(err)
		}
		s.BuildContext()
	}
}

// BenchmarkList10k: List over 10,000 small sessions in 40 projects.
func BenchmarkList10k(b *testing.B) {
	dir := corpusDir(b, 10000)
	var n int
	for b.Loop() {
		infos, err := session.List(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		n = len(infos)
	}
	if n != 10000 {
		b.Fatalf("listed %d sessions", n)
	}
	b.ReportMetric(float64(n), "sessions")
}

// BenchmarkList10kStatus is BenchmarkList10k reading each file's tail for
// its Status too, as `xdev list` and omp's picker do.
func BenchmarkList10kStatus(b *testing.B) {
	dir := corpusDir(b, 10000)
	for b.Loop() {
		infos, err := session.List(dir, &session.ListOptions{Status: true})
		if err != nil || len(infos) != 10000 || infos[0].Status == "" {
			b.Fatalf("%v, %d sessions", err, len(infos))
		}
	}
}

// BenchmarkAppend: one message entry appended, measured one by one.
//   - burst: appends back to back, as an agent writes an assistant message
//     and its tool results; the lockfile is taken once per burst.
//   - isolated: each append alone (the lock linger has lapsed), so each
//     pays for creating and removing omp's lockfile.
//   - locked-each: burst with no linger, so every append takes and
//     removes omp's lockfile, as omp's own appends do.
//   - durable: burst with an fdatasync per entry (SyncEveryEntry).
//
// Metrics: p50-µs and p99-µs of the individual appends.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name     string
		isolated bool
		linger   time.Duration
		sync     session.SyncMode
	}{
		{"burst", false, session.DefaultLockLinger, session.SyncNever},
		{"locked-each", false, -1, session.SyncNever},
		{"isolated", true, session.DefaultLockLinger, session.SyncNever},
		{"durable", false, session.DefaultLockLinger, session.SyncEveryEntry},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sessions", "-p", "a.jsonl")
			s, err := session.Create(path, session.NewOptions{Cwd: "/p", Sync: c.sync, Lock: session.LockOptions{Linger: c.linger}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent("a short user message, as most entries are"), Timestamp: 1}
			var lat []time.Duration
			for b.Loop() {
				if c.isolated {
					b.StopTimer()
					time.Sleep(session.DefaultLockLinger + time.Millisecond)
					b.StartTimer()
				}
				t0 := time.Now()
				if _, err := s.AppendMessage(m); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}
