package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/session"
)

var big = flag.Bool("big", false, "also check the 500 MB corpus file (needs ~3 GB of RAM for the full load)")

func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	sa, err := Write(&a, Options{Size: 1 << 20, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := Write(&b, Options{Size: 1 << 20, Seed: 7})
	if !bytes.Equal(a.Bytes(), b.Bytes()) || sa != sb {
		t.Error("same seed, different sessions")
	}
	var c bytes.Buffer
	Write(&c, Options{Size: 1 << 20, Seed: 8})
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("different seeds, same session")
	}
	if sa.Bytes != int64(a.Len()) || sa.Bytes < 1<<20 {
		t.Errorf("stats %+v for %d bytes", sa, a.Len())
	}
}

// TestWindowedEqualsFull is the windowing proof on generated sessions: for
// every file, Open (windowed) and Open (full) build the same context, the
// windowed load keeps less, and neither changes a byte.
func TestWindowedEqualsFull(t *testing.T) {
	type file struct {
		name string
		opts Options
	}
	files := []file{{"10MB", Options{Size: 10 << 20, Seed: 1}}}
	if testscale.Long() {
		files = append(files, file{"104MB", Options{Size: 104 << 20, Seed: 2}})
	}
	for seed := range uint64(testscale.N(12, 12)) {
		files = append(files, file{"small-" + string(rune('a'+seed)), Options{Size: int64(300<<10) * int64(seed+1), Seed: 100 + seed}})
	}
	if *big {
		files = append(files, file{"500MB", Options{Size: 500 << 20, Seed: 3}})
	}
	if testing.Short() {
		files = slices.DeleteFunc(files, func(f file) bool { return !strings.HasPrefix(f.name, "small") })
	}
	dir := t.TempDir()
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(dir, f.name+".jsonl")
			st, err := WriteFile(path, f.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(path)
			sum := sha(t, path)
			w, err := session.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			wctx := contextOf(t, w)
			ws := w.WindowStats()
			w = nil
			full, err := session.Open(path, &session.OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if full.Malformed() != 0 || len(full.Entries()) != st.Entries {
				t.Errorf("full load: %d entries (%d malformed), wrote %d", len(full.Entries()), full.Malformed(), st.Entries)
			}
			if got := contextOf(t, full); got != wctx {
				t.Errorf("windowed and full contexts differ")
			}
			if st.Compactions > 0 && (!ws.Engaged || ws.Retained >= ws.Seen) {
				t.Errorf("window did not engage: %+v", ws)
			}
			if sha(t, path) != sum {
				t.Errorf("%s changed", path)
			}
			t.Logf("%d bytes, %d entries, %d compactions, %d branches; window kept %d of %d", st.Bytes, st.Entries, st.Compactions, st.Branches, ws.Retained, ws.Seen)
		})
	}
}

func contextOf(t *testing.T, s *session.Store) string {
	t.Helper()
	ctx := s.BuildContext()
	b, err := json.Marshal(ctx.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return ctx.LeafID + "|" + ctx.Model() + "|" + ctx.ThinkingLevel + "|" + string(b)
}

func sha(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestWriteDir(t *testing.T) {
	data := t.TempDir()
	st, err := WriteDir(data, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := session.List(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 200 || st.Sessions != 200 || st.Subagents != 10 {
		t.Fatalf("listed %d, stats %+v", len(infos), st)
	}
	for _, i := range infos {
		if i.Err != nil || i.Title == "" || i.Subagent {
			t.Errorf("%+v", i)
		}
	}
	all, _ := session.List(data, &session.ListOptions{Subagents: true})
	if len(all) != 210 {
		t.Errorf("with subagents: %d", len(all))
	}
	for _, i := range infos[:20] {
		s, err := session.Open(i.Path, nil)
		if err != nil || s.Malformed() != 0 || len(s.BuildContext().Messages) == 0 {
			t.Errorf("%s: %v", i.Path, err)
		}
	}
}

func TestBackwardLoadUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if _, err := WriteFile(path, Options{Size: 2 << 20, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.WindowStats(); !st.Backward || !st.Engaged {
		t.Errorf("window stats %+v: the backward windowed load was not used", st)
	}
}

// TestTailSeed: sessions of different sizes with one TailSeed end in the
// same window: the same messages reach the context.
func TestTailSeed(t *testing.T) {
	dir := t.TempDir()
	var texts []string
	for i, size := range []int64{1 << 20, 3 << 20} {
		path := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		if _, err := WriteFile(path, Options{Size: size, Seed: uint64(i + 1), TailSeed: 99}); err != nil {
			t.Fatal(err)
		}
		s, err := session.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, m := range s.BuildContext().Messages {
			b.WriteString(string(m.Role) + ":" + m.Text() + "\n")
		}
		texts = append(texts, b.String())
	}
	if texts[0] != texts[1] || len(texts[0]) < 1000 {
		t.Errorf("the windows differ (%d and %d bytes of text)", len(texts[0]), len(texts[1]))
	}
}

// TestTitlesAreText: every title the generator writes is valid UTF-8
// without a replacement character, and starts with one of its words,
// capitalized: the words are not all ASCII, and a cut by bytes would
// split a character (issue 22).
func TestTitlesAreText(t *testing.T) {
	for seed := range uint64(300) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
		for range 20 {
			title := g.title()
			if !utf8.ValidString(title) || strings.ContainsRune(title, utf8.RuneError) {
				t.Fatalf("seed %d: title %q is not text", seed, title)
			}
			first, _, _ := strings.Cut(title, " ")
			r, n := utf8.DecodeRuneInString(first)
			if !slices.ContainsFunc(words, func(w string) bool {
				wr, wn := utf8.DecodeRuneInString(w)
				return unicode.ToUpper(wr) == r && w[wn:] == first[n:]
			}) {
				t.Fatalf("seed %d: title %q does not start with a word", seed, title)
			}
		}
	}
}

// TestWriteHome checks a small home: the same options write the same
// files, every line of every harness's file is one JSON value, the
// sessions add up to at least the bytes asked for, and each harness has
// its share.
func TestWriteHome(t *testing.T) {
	opts := HomeOptions{Sessions: 60, Bytes: 4 << 20, Seed: 3, Largest: 1 << 20, Projects: 7}
	digests := func(home string) map[string][32]byte {
		t.Helper()
		files := map[string][32]byte{}
		err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for n, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				if strings.Contains(path, ".omp") && n == 0 {
					continue // omp's title slot
				}
				if !json.Valid(line) {
					t.Fatalf("%s:%d: not JSON: %.100s", path, n+1, line)
				}
			}
			rel, _ := filepath.Rel(home, path)
			files[rel] = sha256.Sum256(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	st, err := WriteHome(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteHome(b, opts); err != nil {
		t.Fatal(err)
	}
	da, db := digests(a), digests(b)
	if len(da) != opts.Sessions+1 || !maps.Equal(da, db) {
		t.Errorf("%d files, then %d; equal: %v", len(da), len(db), maps.Equal(da, db))
	}
	if st.TotalSize < opts.Bytes+opts.Largest {
		t.Errorf("%d bytes written, %d asked for", st.TotalSize, opts.Bytes+opts.Largest)
	}
	for _, h := range []string{"omp", "claude", "codex"} {
		if st.Sessions[h] < opts.Sessions/10 {
			t.Errorf("%d %s sessions of %d", st.Sessions[h], h, opts.Sessions)
		}
	}
	if _, err := WriteHome(a, opts); err == nil {
		t.Error("WriteHome wrote over an existing home")
	}
}
