package catalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
)

// BenchmarkUsage builds the usage ledger of a generated Claude Code dir
// of 1,000 sessions (corpus.WriteClaude: 25,000 calls, a tenth of the
// sessions resumed) and its report groups: cold (an empty cache, every
// file read) and warm (the cache the run before left). The 10,000-session
// figures, beside ccusage, are interop/omp/bench-usage.sh's
// (docs/performance.md, "Usage").
func BenchmarkUsage(b *testing.B) {
	dir := b.TempDir()
	claude := filepath.Join(dir, "claude")
	if err := corpus.WriteClaude(claude, 1000, 1); err != nil {
		b.Fatal(err)
	}
	b.Setenv("HOME", filepath.Join(dir, "home"))
	c, err := New(Config{DataDir: filepath.Join(dir, "agent"), Explicit: true, Roots: map[Harness]string{Claude: claude}})
	if err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	run := func(b *testing.B) {
		l, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: []Harness{Claude}, Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Groups(nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(cache)
			b.StartTimer()
			run(b)
		}
	})
	b.Run("warm", func(b *testing.B) {
		run(b)
		for b.Loop() {
			run(b)
		}
	})
}
