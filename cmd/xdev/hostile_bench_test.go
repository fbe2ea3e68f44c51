package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/session"
)

// hostileShapes are session files built to cost the most for their size,
// one shape each (issue 22, item 11): many entries, one line of many
// values, one deeply nested line, one long line. Each is a valid v3
// session omp resumes (the nested one past JSON.parse's depth, which omp
// skips as xdev does).
var hostileShapes = []struct {
	name  string
	write func(w *bufio.Writer)
}{
	// 300,000 tiny entries in one chain, never compacted (49 MB): the
	// index, the plan and the context are as long as the file.
	{"chain300k", func(w *bufio.Writer) {
		for i := 1; i <= 300_000; i++ {
			parent := "null"
			if i > 1 {
				parent = fmt.Sprintf(`"%08x"`, i-1)
			}
			if i%2 == 1 {
				fmt.Fprintf(w, `{"type":"message","id":"%08x","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}`+"\n", i, parent)
			} else {
				fmt.Fprintf(w, `{"type":"message","id":"%08x","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"y"}],"timestamp":1}}`+"\n", i, parent)
			}
		}
	}},
	// One assistant turn of 1,000,000 content blocks (27 MB on one line):
	// a value per few bytes.
	{"wide1m", func(w *bufio.Writer) {
		w.WriteString(`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n")
		w.WriteString(`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[`)
		for i := range 1_000_000 {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(`{"type":"text","text":"a"}`)
		}
		w.WriteString(`],"timestamp":1}}` + "\n")
	}},
	// One line nested 100,000 arrays deep (200 KB).
	{"deep100k", func(w *bufio.Writer) {
		w.WriteString(`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n")
		w.WriteString(`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"details":`)
		w.WriteString(strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000))
		w.WriteString(`,"timestamp":1}}` + "\n")
	}},
	// One text block of 50 MB on one line.
	{"line50m", func(w *bufio.Writer) {
		w.WriteString(`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n")
		w.WriteString(`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"`)
		w.WriteString(strings.Repeat("z", 50<<20))
		w.WriteString(`"}],"timestamp":1}}` + "\n")
	}},
}

// writeHostile writes the shapes as sessions of one project of a new data
// dir and returns it and their paths.
func writeHostile(b *testing.B) (data string, files map[string]string) {
	b.Helper()
	data = b.TempDir()
	dir := filepath.Join(session.SessionsDir(data), "--w--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	files = map[string]string{}
	for _, sh := range hostileShapes {
		p := filepath.Join(dir, sh.name+".jsonl")
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		w.WriteString(`{"type":"session","version":3,"id":"01a00000-0000-7000-8000-00000000000` + fmt.Sprint(len(files)) + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
		sh.write(w)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		files[sh.name] = p
	}
	return data, files
}

// BenchmarkHostile runs the reading commands as processes of their own
// (as BenchmarkCommands does) on each hostile shape, and verify over the
// data dir that holds them all, and reports each one's peak RSS and wall
// time. docs/performance.md has the figures and the bound they are held
// to. Run it with
//
//	go test -run '^$' -bench Hostile -benchtime 1x ./cmd/xdev
func BenchmarkHostile(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "xdev")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README installs it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	data, files := writeHostile(b)
	out := b.TempDir()
	run := func(name string, args []string) {
		b.Run(name, func(b *testing.B) {
			var peak int64
			var wall time.Duration
			for b.Loop() {
				rss, took := measure(b, bin, data, args, "", true)
				peak, wall = max(peak, rss), max(wall, took)
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
			b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
		})
	}
	for _, sh := range hostileShapes {
		f := files[sh.name]
		for _, c := range []struct {
			name string
			args []string
		}{
			{"show", []string{"show", f}},
			{"show-json", []string{"show", "--json", f}},
			{"show-tree", []string{"show", "--tree", f}},
			{"context", []string{"context", "--json", f}},
			{"verify", []string{"verify", f}},
			{"export-md", []string{"export", "-o", filepath.Join(out, "s.md"), f}},
			{"export-html", []string{"export", "-o", filepath.Join(out, "s.html"), f}},
		} {
			run(sh.name+"/"+c.name, c.args)
		}
	}
	run("all/verify-all", []string{"verify"})
	run("all/list", []string{"list", "--all"})
	run("all/search", []string{"search", "zzzz"})
}
