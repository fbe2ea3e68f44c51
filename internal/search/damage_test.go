package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/filelock"
)

// TestDamagedIndexNeverAnswers damages an index many ways (random bit
// flips, runs of zeroed bytes, zeroed pages, a cut-off file), each on a
// fresh copy, and asks it what the undamaged one answered: every answer
// is right (the damage was on a page no answer reads, or it was found by
// a page checksum or by SQLite and the index rebuilt), never short, and
// never an error; and --reindex works on every damaged copy.
func TestDamagedIndexNeverAnswers(t *testing.T) {
	dir := writeDir(t, 40, 9)
	good := filepath.Join(t.TempDir(), "good.db")
	db, err := Open(good, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	refresh(t, db, RefreshOptions{})
	words := []string{corpus.Vocabulary(0), corpus.Vocabulary(5), corpus.Vocabulary(40), corpus.Vocabulary(300), corpus.Vocabulary(2000)}
	want := map[string][]string{}
	for _, w := range words {
		want[w] = listed(t, db, Query{Text: w})
	}
	db.conn.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	pristine, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	r := rand.New(rand.NewPCG(22, 5))
	damage := []struct {
		name string
		fn   func(b []byte) []byte
	}{
		{"flip a bit", func(b []byte) []byte {
			for range 1 + r.IntN(3) {
				i := r.IntN(len(b))
				b[i] ^= 1 << r.IntN(8)
			}
			return b
		}},
		{"flip 20 bits", func(b []byte) []byte {
			for range 20 {
				i := r.IntN(len(b))
				b[i] ^= 1 << r.IntN(8)
			}
			return b
		}},
		{"zero 512-byte runs", func(b []byte) []byte {
			for range 20 {
				i := r.IntN(len(b) - 512)
				clear(b[i : i+512])
			}
			return b
		}},
		{"zero pages", func(b []byte) []byte {
			for range 1 + r.IntN(len(b)/page) {
				i := r.IntN(len(b)/page) * page
				clear(b[i : i+page])
			}
			return b
		}},
		{"cut short", func(b []byte) []byte { return b[:r.IntN(len(b))] }},
	}
	probes, rebuilt := 0, 0
	for _, d := range damage {
		for k := range testscale.N(6, 24) {
			probes++
			path := filepath.Join(t.TempDir(), "index.db")
			os.WriteFile(path, d.fn(slices.Clone(pristine)), 0o600)
			db, err := Open(path, dir, nil)
			if err != nil {
				t.Fatalf("%s #%d: open: %v", d.name, k, err)
			}
			if _, err := db.Refresh(context.Background(), RefreshOptions{}); err != nil {
				t.Fatalf("%s #%d: refresh: %v", d.name, k, err)
			}
			for _, w := range words {
				got, err := db.Sessions(context.Background(), Query{Text: w})
				if err != nil {
					t.Fatalf("%s #%d: %q: %v", d.name, k, w, err)
				}
				var paths []string
				for _, s := range got {
					paths = append(paths, s.Path)
				}
				slices.Sort(paths)
				if !slices.Equal(paths, want[w]) {
					t.Errorf("%s #%d: %q finds %d sessions, the undamaged index %d", d.name, k, w, len(paths), len(want[w]))
				}
			}
			if db.Notice != "" {
				rebuilt++
			}
			db.Close()
			// --reindex works whatever the file holds.
			os.WriteFile(path, d.fn(slices.Clone(pristine)), 0o600)
			os.Remove(path + "-wal")
			db, err = Open(path, dir, nil)
			if err == nil {
				_, err = db.Refresh(context.Background(), RefreshOptions{Reindex: true})
			}
			if err != nil {
				t.Errorf("%s #%d: --reindex: %v", d.name, k, err)
			}
			if db != nil {
				db.Close()
			}
		}
	}
	t.Logf("%d probes, %d found damaged and rebuilt", probes, rebuilt)
	if rebuilt == 0 {
		t.Error("no probe found damage")
	}
}

// TestEveryZeroedPageIsFound zeroes each page of an index in turn, the
// damage a crash or a lost block leaves and the one page checksums
// cannot see (the checksum of zeros is zeros): whichever page it is (the
// files table, entries, FTS5's index and doclists), every answer, listed
// by session (read from FTS5 and files alone) or as hits (through
// entries), is the undamaged index's.
func TestEveryZeroedPageIsFound(t *testing.T) {
	dir := writeDir(t, 16, 12)
	good := filepath.Join(t.TempDir(), "good.db")
	db, err := Open(good, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	refresh(t, db, RefreshOptions{})
	queries := []Query{{Text: corpus.Vocabulary(0)}, {Text: corpus.Vocabulary(7)}, {Text: corpus.Vocabulary(90)},
		{Text: corpus.Vocabulary(1)}, {Text: corpus.Vocabulary(3), Role: RoleUser}}
	answer := func(db *DB) (string, error) {
		var b strings.Builder
		for _, q := range queries {
			ss, err := db.Sessions(context.Background(), q)
			if err != nil {
				return "", err
			}
			for _, s := range ss {
				fmt.Fprintf(&b, "%s %d\n", filepath.Base(s.Path), s.Hits)
			}
			q.Limit = 1000
			hits, err := db.Search(context.Background(), q)
			if err != nil {
				return "", err
			}
			for _, h := range hits {
				fmt.Fprintf(&b, "%s:%d %s\n", filepath.Base(h.Path), h.Line, h.Snippet)
			}
		}
		return b.String(), nil
	}
	want, err := answer(db)
	if err != nil {
		t.Fatal(err)
	}
	db.conn.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	pristine, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	rebuilt := 0
	for p := 1; p < len(pristine)/page; p += testscale.Step() { // page 1 (the header) is another test's
		b := slices.Clone(pristine)
		clear(b[p*page : (p+1)*page])
		path := filepath.Join(t.TempDir(), "index.db")
		os.WriteFile(path, b, 0o600)
		db, err := Open(path, dir, nil)
		if err != nil {
			t.Fatalf("page %d zeroed: open: %v", p+1, err)
		}
		if _, err := db.Refresh(context.Background(), RefreshOptions{}); err != nil {
			t.Fatalf("page %d zeroed: refresh: %v", p+1, err)
		}
		got, err := answer(db)
		if err != nil {
			t.Fatalf("page %d zeroed: %v", p+1, err)
		}
		if got != want {
			t.Errorf("page %d zeroed: the answers differ from the undamaged index's", p+1)
		}
		if db.Notice != "" {
			rebuilt++
		}
		db.Close()
	}
	t.Logf("%d pages zeroed one at a time, %d found damaged and rebuilt", len(pristine)/page-1, rebuilt)
}

// TestIndexPathNotFollowed: a symlink at the index's path (to a device,
// to a file) is refused, never followed, and its target's mode and bytes
// are left alone.
func TestIndexPathNotFollowed(t *testing.T) {
	dir := writeDir(t, 2, 1)
	work := t.TempDir()
	target := filepath.Join(work, "target")
	os.WriteFile(target, []byte("someone's file"), 0o644)
	for _, to := range []string{target, os.DevNull} {
		path := filepath.Join(work, "index.db")
		os.Remove(path)
		if err := os.Symlink(to, path); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(to)
		_, err := Open(path, dir, nil)
		if !errors.Is(err, ErrCacheDir) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a symlink to %s at the index path: %v", to, err)
		}
		after, _ := os.Stat(to)
		if before.Mode() != after.Mode() {
			t.Errorf("%s: mode %v became %v", to, before.Mode(), after.Mode())
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "someone's file" {
		t.Errorf("the target holds %q", b)
	}
}

// TestLockWaitSaid: a refresh that waits for another process's lock says
// so after a second, and gives up at its bound with an error naming the
// holder.
func TestLockWaitSaid(t *testing.T) {
	dir := writeDir(t, 2, 1)
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The holder: another process, as another xdev would be.
	holder := exec.Command("flock", path+".lock", "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Skipf("no flock(1): %v", err)
	}
	defer holder.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	var said []int
	start := time.Now()
	_, err = Open(path, dir, &OpenOptions{Waiting: func(h int) { said = append(said, h) }, LockTimeout: 1500 * time.Millisecond})
	var busy *filelock.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("waited %v: %v, want a BusyError", time.Since(start), err)
	}
	if len(said) != 1 {
		t.Errorf("the wait was said %d times, want once", len(said))
	}
}

// TestFailedFirstBuildLeavesNothing: a first build that fails part-way
// (here, the file size limit stands for a full disk) leaves no stub index
// behind, and says what failed, naming the index: whatever write fails,
// a page the cache spills mid-transaction, a commit or a checkpoint, at
// limits from 8 KiB (the schema) to 1 MiB. The whole index is about 2.5
// MiB, and the limit holds each file, the index and its write-ahead log
// apart: under 1.25 MiB the two cannot hold it between them.
func TestFailedFirstBuildLeavesNothing(t *testing.T) {
	if dir := os.Getenv("SEARCH_FSIZE_CHILD"); dir != "" {
		limit, _ := strconv.ParseUint(os.Getenv("SEARCH_FSIZE_LIMIT"), 10, 64)
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit})
		db, err := Open(filepath.Join(dir, "index.db"), filepath.Join(dir, "data"), nil)
		if err == nil {
			_, err = db.Refresh(context.Background(), RefreshOptions{})
		}
		fmt.Println(err)
		return
	}
	data := filepath.Join(t.TempDir(), "data")
	if _, err := corpus.WriteDir(data, 150, 3); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	limits := []uint64{8 << 10, 1 << 20}
	for range testscale.N(8, 24) {
		limits = append(limits, 32<<10+rng.Uint64N(1<<20-32<<10))
	}
	for _, limit := range limits {
		work := t.TempDir()
		if err := os.Symlink(data, filepath.Join(work, "data")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestFailedFirstBuildLeavesNothing$")
		cmd.Env = append(os.Environ(), "SEARCH_FSIZE_CHILD="+work, fmt.Sprintf("SEARCH_FSIZE_LIMIT=%d", limit))
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), filepath.Join(work, "index.db")) || !strings.Contains(string(out), "cannot write the search index") {
			t.Errorf("limit %d: the failed build says %q", limit, out)
		}
		for _, p := range []string{"index.db", "index.db-wal", "index.db-shm"} {
			if _, err := os.Stat(filepath.Join(work, p)); err == nil {
				t.Errorf("limit %d: a failed first build left %s", limit, p)
			}
		}
	}
}
