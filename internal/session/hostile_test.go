package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// TestNewerVersionNotWritten: a header claiming v99 is read as v3 (omp
// does the same) but never written to.
func TestNewerVersionNotWritten(t *testing.T) {
	path := writeFile(t, t.TempDir(), "v99.jsonl", strings.Replace(testHeader, `"version":3`, `"version":99`, 1)+testUser("00000001", "", "hi"))
	sum := fileSum(t, path)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.BuildContext().Messages) != 1 {
		t.Error("v99 file did not load")
	}
	_, err = s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("x"), Timestamp: 1})
	if !errors.Is(err, ErrNewerVersion) {
		t.Errorf("append to v99: %v", err)
	}
	if _, err := s.SetTitle("t", TitleManual); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("retitle v99: %v", err)
	}
	unchanged(t, path, sum)
}

// TestGigabyteLine: a 1 GB line (a sparse file, so the test writes little)
// is skipped and counted without being held: what Open allocates is bounded
// by MaxLineBytes, not by the line.
func TestGigabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1 GB")
	}
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(testHeader + testUser("00000001", "", "before"))
	off, _ := f.Seek(0, 1)
	const gb = 1 << 30
	if err := f.Truncate(off + gb); err != nil { // a line of 1 GB of NULs
		t.Fatal(err)
	}
	f.Seek(0, 2)
	f.WriteString("\n" + testUser("00000002", "00000001", "after"))
	f.Close()
	for _, c := range []struct {
		full  bool
		max   int
		bound uint64
	}{{false, 0, 256 << 20}, {true, 0, 512 << 20}, {false, 1 << 20, 32 << 20}, {true, 1 << 20, 32 << 20}} {
		full := c.full
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Open(path, &OpenOptions{Full: full, MaxLineBytes: c.max})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if n := len(s.BuildContext().Messages); n != 2 || s.Malformed() != 1 {
			t.Errorf("full=%v: %d messages, %d malformed; want 2 and 1", full, n, s.Malformed())
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > c.bound {
			t.Errorf("full=%v max=%d: Open allocated %d MiB in all for a 1 GB line", full, c.max, grew>>20)
		}
	}
}

// TestSymlinks: the data dir is never left through a link. List and the
// blob scan report or read around them; a blob that is a link is refused.
func TestSymlinks(t *testing.T) {
	data := t.TempDir()
	outside := t.TempDir()
	secret := writeFile(t, outside, "secret.jsonl", testHeader+testUser("00000001", "", "outside"))
	proj := filepath.Join(SessionsDir(data), "-proj")
	os.MkdirAll(proj, 0o700)
	os.Symlink(secret, filepath.Join(proj, "link.jsonl"))
	os.Symlink(outside, filepath.Join(SessionsDir(data), "-linked-project"))
	infos, err := List(data, &ListOptions{Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Err == nil || !strings.Contains(i.Err.Error(), "symlink; not followed") || i.ID != "" {
			t.Errorf("symlink listed as %+v", i)
		}
	}
	if len(infos) != 2 {
		t.Errorf("%d entries listed, want the 2 links reported", len(infos))
	}

	// A blob that links elsewhere never reaches a context.
	blobs := NewBlobStore(BlobsDir(data))
	ref, _ := blobs.Put([]byte("real image bytes"))
	digest := strings.TrimPrefix(ref, BlobRefPrefix)
	os.Remove(filepath.Join(BlobsDir(data), digest))
	os.WriteFile(filepath.Join(outside, "img"), []byte("real image bytes"), 0o600)
	os.Symlink(filepath.Join(outside, "img"), filepath.Join(BlobsDir(data), digest))
	if _, err := blobs.Get(ref); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Get through a symlinked blob: %v", err)
	}
	path := writeFile(t, proj, "img.jsonl", testHeader+strings.Replace(testUser("00000001", "", "x"),
		`"content":"x"`, `"content":[{"type":"image","data":"`+ref+`","mimeType":"image/png"},{"type":"image","data":"blob:sha256:../../../etc/passwd","mimeType":"image/png"}]`, 1))
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ctx := s.BuildContext(); ctx.MissingBlobs != 2 {
		t.Errorf("%d blobs missing, want both refused", ctx.MissingBlobs)
	}
}

// TestLongLineReadOnce: a 16 MiB line costs its reader about its size in
// allocations each time it is read, not the doubling copies of a growing
// buffer, nor copies of its strings: a forward index and a backward
// windowed Open read it once; a streamed context (the windowed Open that
// finds it too large, the index, the plan's two reads, the token
// estimate's and the message's) six times, and nothing more (before: 5,
// 6 and 17 times).
func TestLongLineReadOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("counts allocations, which the race detector adds to")
	}
	const size = 16 << 20
	text := strings.Repeat("z", size)
	path := writeFile(t, t.TempDir(), "long.jsonl", testHeader+testUser("00000001", "", "before")+
		`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"`+text+`"}],"timestamp":1}}`+"\n")
	for _, c := range []struct {
		name  string
		times float64
		read  func() error
	}{
		{"index", 1.3, func() error {
			x, err := OpenIndex(path, nil)
			if err == nil {
				x.Close()
			}
			return err
		}},
		{"open", 1.3, func() error {
			s, err := Open(path, &OpenOptions{MaxWindowBytes: 1})
			if !errors.Is(err, ErrWindowTooLarge) {
				return fmt.Errorf("open past its window: %v", err)
			}
			_ = s
			return nil
		}},
		{"streamed context", 6.3, func() error {
			r, err := ReadContext(path, &OpenOptions{MaxWindowBytes: 1})
			if err != nil {
				return err
			}
			defer r.Close()
			n := 0
			err = r.Each(func(m *ai.Message) error {
				if len(m.Content.Blocks) == 1 && m.Content.Blocks[0].Text == text {
					n++
				}
				return nil
			})
			if err == nil && n != 1 {
				err = fmt.Errorf("the long text came back %d times", n)
			}
			return err
		}},
	} {
		var err error
		if got := allocatedBy(func() { err = c.read() }); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if bound := uint64(c.times * size); got > bound {
			t.Errorf("%s allocated %.1f times the line (%d MiB), over %.1f", c.name, float64(got)/size, got>>20, c.times)
		}
	}
}

// TestBlankLineRuns: runs of blank lines of every kind, anywhere among the
// entries, are counted as lines (the entries keep their line numbers, the
// context its messages) and cost a backward Open about a block, not a
// record and a parse a line: a megabyte of newlines took 256 MB before.
func TestBlankLineRuns(t *testing.T) {
	kinds := []string{"\n", "\r\n", " \n", "\t \r\n"}
	dir := t.TempDir()
	for i, kind := range kinds {
		for _, n := range []int{1, 2, 1000, 300_000} {
			for _, where := range []string{"between", "after"} {
				name := fmt.Sprintf("%d-%d-%s.jsonl", i, n, where)
				run := strings.Repeat(kind, n)
				body := testHeader + testUser("00000001", "", "hi") + run + testUser("00000002", "00000001", "there")
				if where == "after" {
					body += run
				}
				path := writeFile(t, dir, name, body)
				var s *Store
				var err error
				grew := allocatedBy(func() { s, err = Open(path, nil) })
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := len(s.BuildContext().Messages); got != 2 {
					t.Errorf("%s: %d messages, want 2", name, got)
				}
				x, err := OpenIndex(path, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if l := x.Line(x.Len() - 1); l != 3+n {
					t.Errorf("%s: the last entry is on line %d, want %d", name, l, 3+n)
				}
				x.Close()
				if bound := uint64(8 << 20); !raceEnabled && grew > bound {
					t.Errorf("%s: Open allocated %d MiB for %d KiB of blank lines", name, grew>>20, len(run)>>10)
				}
			}
		}
	}
}

// allocatedBy is how many bytes f allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
