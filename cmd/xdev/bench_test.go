package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// BenchmarkCommands runs every xdev command as a process of its own, as a
// user runs it, on generated sessions of 10, 104 and 500 MB, and of 10 and
// 100 MB never compacted (internal/corpus)
// in a data dir that also holds 3,000 small sessions, and reports the
// process's peak RSS (the kernel's ru_maxrss) and its wall time.
//
// The command is started by a launcher, this test binary run again (see
// rssLauncherEnv), because Linux charges a child started with CLONE_VM, as
// Go starts children, with its parent's peak RSS at exec: measured from
// the benchmark itself, every command would seem to take as much memory as
// the benchmark ever did. The fresh launcher's few MiB are the floor.
//
// Run it with
//
//	go test -run '^$' -bench Commands -benchtime 1x ./cmd/xdev
//
// docs/performance.md has the figures. Commands that write (retitle,
// append, branch, title) work on a copy of the file; the others read the
// shared corpus, which must not change.
func BenchmarkCommands(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "xdev")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README installs it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	small, err := corpus.CachedDir(3000, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name        string
		bytes       int64
		uncompacted bool
	}{{"10MB", 10 << 20, false}, {"104MB", 104 << 20, false}, {"500MB", 500 << 20, false},
		// Sessions never compacted: their context is the whole file.
		{"10MB-uncompacted", 10 << 20, true}, {"100MB-uncompacted", 100 << 20, true}} {
		if !benchSizeWanted(b, size.name) {
			continue
		}
		file, err := corpus.CachedFile(corpus.Options{Size: size.bytes, Seed: 1, Uncompacted: size.uncompacted})
		if err != nil {
			b.Fatal(err)
		}
		data := linkDataDir(b, small, file)
		big := filepath.Join(session.SessionsDir(data), "-big", filepath.Base(file))
		early := middleEntry(b, big)
		out := b.TempDir()
		cases := []struct {
			name string
			args []string
			// copy: run on a copy of the big file, which stands for "@"
			copy bool
		}{
			{"list", []string{"list", "--all"}, false},
			{"show", []string{"show", big}, false},
			{"show-json", []string{"show", "--json", big}, false},
			{"show-raw", []string{"show", "--raw", big}, false},
			{"show-tree", []string{"show", "--tree", big}, false},
			{"show-tree-json", []string{"show", "--tree", "--json", big}, false},
			{"context", []string{"context", "--json", big}, false},
			{"verify", []string{"verify", big}, false},
			{"verify-all", []string{"verify"}, false},
			{"export-md", []string{"export", "-o", filepath.Join(out, "s.md"), big}, false},
			{"export-html", []string{"export", "-o", filepath.Join(out, "s.html"), big}, false},
			{"fork", []string{"fork", big}, false},
			{"fork-at", []string{"fork", "--at", early, big}, false},
			{"retitle", []string{"retitle", "@", "A new title"}, true},
			{"branch", []string{"branch", "@", early}, true},
			{"append", []string{"append", "@"}, true},
		}
		for _, c := range cases {
			b.Run(size.name+"/"+c.name, func(b *testing.B) {
				var stdin string
				if c.name == "append" {
					stdin = `{"type":"message","message":{"role":"user","content":"one more","timestamp":1}}` + "\n"
				}
				var peak int64
				var wall time.Duration
				for b.Loop() {
					args := c.args
					if c.copy {
						b.StopTimer()
						cp := filepath.Join(b.TempDir(), "copy.jsonl")
						copyFile(b, big, cp)
						args = slices.Clone(args)
						args[slices.Index(args, "@")] = cp
						b.StartTimer()
					}
					rss, took := measure(b, bin, data, args, stdin, strings.HasPrefix(c.name, "verify"))
					peak, wall = max(peak, rss), max(wall, took)
				}
				b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
				b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
			})
		}
	}
}

// measure runs xdev with args, in data dir data, through the launcher
// (see rssLauncherEnv) and returns its peak RSS in KiB and its wall time.
// A non-zero exit fails the benchmark unless problems is set (verify
// exits 3 when it finds some).
func measure(b *testing.B, bin, data string, args []string, stdin string, problems bool) (int64, time.Duration) {
	b.Helper()
	cmd := exec.Command(os.Args[0], append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "XDEV_DATA_DIR="+data, "XDEV_FORCE_TTY=0", rssLauncherEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if err != nil {
		b.Fatalf("xdev %v: %v\n%s", args, err, stderr.String())
	}
	var rss, code int64
	if _, err := fmt.Sscan(stdout.String(), &rss, &code); err != nil {
		b.Fatalf("launcher printed %q: %v", stdout.String(), err)
	}
	if code != 0 && !(problems && code == exitProblems) {
		b.Fatalf("xdev %v: exit %d\n%s", args, code, stderr.String())
	}
	return rss, took
}

// benchSizeWanted reports whether -bench selects this size, so that a run
// of the 10 MB figures does not write the 500 MB corpus first.
func benchSizeWanted(b *testing.B, name string) bool {
	pattern := flag.Lookup("test.bench").Value.String()
	parts := strings.Split(pattern, "/")
	if len(parts) < 2 {
		return true
	}
	ok, err := regexp.MatchString(parts[1], name)
	return err != nil || ok
}

// rssLauncherEnv makes this test binary a launcher: it runs the command
// in its arguments, with stdout discarded and stderr passed on, and prints
// the command's peak RSS in KiB and its exit code.
const rssLauncherEnv = "XDEV_BENCH_RSS_LAUNCHER"

func init() {
	if os.Getenv(rssLauncherEnv) == "" {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, cmd.ProcessState.ExitCode())
	os.Exit(0)
}

// linkDataDir makes a data dir whose sessions are hard links to the small
// generated ones plus big, in a project of its own, so the shared corpus
// is listed and verified in place without being copied.
func linkDataDir(b *testing.B, small, big string) string {
	b.Helper()
	data := b.TempDir()
	err := filepath.WalkDir(session.SessionsDir(small), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(small, p)
		dst := filepath.Join(data, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		return os.Link(p, dst)
	})
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(session.SessionsDir(data), "-big")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.Link(big, filepath.Join(dir, filepath.Base(big))); err != nil {
		b.Fatal(err)
	}
	return data
}

// middleEntry returns the id of the first entry in the second half of
// the file: a branch point that copies half the history.
func middleEntry(b *testing.B, path string) string {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	buf := make([]byte, 1<<20)
	n, _ := f.ReadAt(buf, fi.Size()/2)
	m := regexp.MustCompile(`\n\{"type":"message","id":"([0-9a-f]{8})"`).FindSubmatch(buf[:n])
	if m == nil {
		b.Fatal("no message entry in the middle of the file")
	}
	return string(m[1])
}

func copyFile(b testing.TB, src, dst string) {
	b.Helper()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
