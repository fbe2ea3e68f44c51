package session

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// writeSyntheticSession writes a session of about size bytes that looks like
// a real one: tool calls with outputs of 1-20 KB (a few of 200 KB) full of
// quotes, backslashes and non-ASCII, and a compaction every 150-300
// entries. Deterministic for a given seed.
func writeSyntheticSession(tb testing.TB, path string, size int64, seed int64) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewSource(seed))
	slot, _ := MarshalTitleSlot("Synthetic session", TitleAuto, "2026-01-01T00:00:00.000Z")
	w.Write(slot)
	w.WriteString(testHeader)
	code := `func f(s string) error { return fmt.Errorf("bad \"%s\" at C:\\path — ünï", s) }` + "\n"
	var written int64
	n, parent, lastCompaction, kept := 0, "", 0, ""
	entry := func(body string) string {
		n++
		id := fmt.Sprintf("%08x", n)
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		line := `{"type":` + body[:strings.IndexByte(body, ',')] + `,"id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:00.000Z"` + body[strings.IndexByte(body, ','):] + "\n"
		w.WriteString(line)
		written += int64(len(line))
		parent = id
		return id
	}
	for written < size {
		if n-lastCompaction > 150+r.Intn(150) && kept != "" {
			entry(`"compaction","summary":"Summary so far","firstKeptEntryId":"` + kept + `","tokensBefore":150000}`)
			lastCompaction = n
			kept = ""
		}
		u := entry(`"message","message":{"role":"user","content":"please fix the bug","timestamp":1}}`)
		if kept == "" && n-lastCompaction > 100 {
			kept = u
		}
		entry(`"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c` + fmt.Sprint(n) + `","name":"read","arguments":{"path":"a.go"}}],"provider":"anthropic","model":"m","usage":{"input":1000,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":1100,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}}`)
		out := 1000 + r.Intn(19000)
		if r.Intn(100) == 0 {
			out = 200000
		}
		body := strings.Repeat(code, out/len(code)+1)[:out]
		body = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(body)
		entry(`"message","message":{"role":"toolResult","toolCallId":"c` + fmt.Sprint(n-1) + `","toolName":"read","content":[{"type":"text","text":"` + body + `"}],"isError":false,"timestamp":1}}`)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

func benchmarkOpen(b *testing.B, size int64) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	writeSyntheticSession(b, path, size, 1)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	var peak uint64
	for range b.N {
		s, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := s.BuildContext()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if len(ctx.Messages) == 0 || !s.WindowStats().Engaged {
			b.Fatalf("context %d messages, window %+v", len(ctx.Messages), s.WindowStats())
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-inuse-MiB")
}

// BenchmarkOpen104MB: Open plus BuildContext of a 104 MB session.
func BenchmarkOpen104MB(b *testing.B) { benchmarkOpen(b, 104<<20) }

// BenchmarkAppend: one message entry appended under the lockfile, unsynced.
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "sessions", "-p", "a.jsonl")
	s, err := Create(path, NewOptions{Cwd: "/p"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent("a short user message"), Timestamp: 1}
	b.ResetTimer()
	for range b.N {
		if _, err := s.AppendMessage(m); err != nil {
			b.Fatal(err)
		}
	}
}
