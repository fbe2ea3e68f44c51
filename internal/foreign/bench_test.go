package foreign

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/fakeharness"
)

var benchMB = flag.Int("import.mb", 20, "size in MB of the transcripts BenchmarkImport writes")

// bigTranscript writes a transcript of about mb MB by repeating the
// lines of src, with each Claude uuid made unique per copy.
func bigTranscript(b *testing.B, src, dst string, mb int) {
	data, err := os.ReadFile(src)
	if err != nil {
		b.Skip(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	os.MkdirAll(filepath.Dir(dst), 0o700)
	f, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(lines[0] + "\n")
	for n, k := 0, 0; n < mb<<20; k++ {
		for _, l := range lines[1:] {
			l = strings.ReplaceAll(l, `uuid":"`, `uuid":"`+strings.Repeat("x", k%7)+string(rune('a'+k%26)))
			n += len(l) + 1
			w.WriteString(l + "\n")
		}
	}
	w.Flush()
	f.Close()
}

// peakHeap samples the heap every few milliseconds while fn runs and
// returns the most it saw in use.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}

// BenchmarkImport streams a large Claude Code and Codex transcript into a
// new session, reporting MB/s and the peak heap: memory follows the
// entry count, not the transcript's size. -import.mb sets the size; give
// it after the package: go test -bench Import ./internal/foreign -import.mb=100.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	cases := []struct {
		harness, src, dst string
	}{
		{HarnessClaude, realClaude + "/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "claude/projects/-work-big/0b16b16b-0000-4000-8000-000000000001.jsonl"},
		{HarnessCodex, realCodex + "/2026/02/23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
			"codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-019d9999-0000-7000-8000-000000000001.jsonl"},
	}
	for _, c := range cases {
		b.Run(c.harness, func(b *testing.B) {
			path := filepath.Join(dir, c.dst)
			bigTranscript(b, c.src, path, *benchMB)
			root := filepath.Join(dir, c.harness)
			src, err := NewSource(c.harness, root)
			if err != nil {
				b.Fatal(err)
			}
			s, err := src.At(path)
			if err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(path)
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			for b.Loop() {
				out := b.TempDir()
				peak = max(peak, peakHeap(func() {
					if _, _, err := ImportStream(out, s.Provenance(), src.Stream(s, ForResume)); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.SetBytes(fi.Size())
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(fi.Size())/(1<<20), "transcript-MiB")
		})
	}
}

// BenchmarkEnsureFirst opens sessions never opened before, of a Claude
// Code directory of 5,000 transcripts searched in place, as a first view
// of each one's page does: each is converted, and its row put in the
// manifest, spliced in or (whole: ensureWholeWay, as it was) with every
// row read and written again.
func BenchmarkEnsureFirst(b *testing.B) {
	for _, whole := range []bool{false, true} {
		b.Run(map[bool]string{false: "spliced", true: "whole"}[whole], func(b *testing.B) {
			m, list := benchMirror(b)
			ensure := m.Ensure
			if whole {
				ensure = m.ensureWholeWay // as it was
			}
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				if _, err := ensure(context.Background(), list[k%len(list)]); err != nil {
					b.Fatal(err)
				}
				k++
			}
		})
	}
}

// benchMirror is a mirror of a Claude Code directory of 5,000
// transcripts, refreshed, and its sessions.
func benchMirror(b *testing.B) (*Mirror, []Session) {
	d := fakeharness.New(b.TempDir(), time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	d.Step = func() time.Duration { return time.Second }
	for k := range 5000 {
		if _, err := d.Transcript(fmt.Sprintf("-work-p%02d", k%40), fmt.Sprintf("prompt %d of the benchmark", k)); err != nil {
			b.Fatal(err)
		}
	}
	src, err := NewSource(HarnessClaude, d.Claude)
	if err != nil {
		b.Fatal(err)
	}
	m := &Mirror{Dir: b.TempDir(), Source: src}
	if _, err := m.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	list, err := src.List(true)
	if err != nil {
		b.Fatal(err)
	}
	return m, list
}

// BenchmarkEnsureOpened opens again a session opened before, of a
// Claude Code directory of 5,000 transcripts, as every view of its page
// does: its mirror file is current, and finding that is one manifest row.
func BenchmarkEnsureOpened(b *testing.B) {
	m, list := benchMirror(b)
	ctx := context.Background()
	first, err := m.Ensure(ctx, list[2500])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if f, err := m.Ensure(ctx, list[2500]); err != nil || f.Path != first.Path {
			b.Fatalf("%v %v", f, err)
		}
	}
}
