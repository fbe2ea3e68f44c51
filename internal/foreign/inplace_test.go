package foreign

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// TestIndexInPlaceAsMirror: an index that reads Claude Code's and Codex's
// transcripts in place finds, for every word they hold, the entries an
// index of their mirror files finds (the same session, entry, role, tool,
// model, time, source line, branch and context flags), each with a
// snippet holding the word. On the real transcripts, on generated ones of
// every record shape (escapes, torn lines, junk, text after a record),
// and on each spoiled at random (junk, blank and torn lines, which move
// every line after them).
func TestIndexInPlaceAsMirror(t *testing.T) {
	type root struct {
		harness, dir string
	}
	var roots []root
	if hasReal(t, "Claude Code and Codex sessions") {
		roots = append(roots, root{HarnessClaude, claudeRoot(t)}, root{HarnessCodex, codexRoot(t)})
	}
	roots = append(roots, root{HarnessClaude, generatedClaudeRoot(t, 40)}, root{HarnessCodex, generatedCodexRoot(t, 40)})
	rng := rand.New(rand.NewPCG(5, 6))
	for _, r := range roots {
		for round := range 3 {
			dir := r.dir
			if round > 0 {
				dir = filepath.Join(t.TempDir(), "copy")
				copyTree(t, r.dir, dir)
				spoilTranscripts(t, rng, dir)
				if r.harness == HarnessCodex && round == 2 {
					compressRollouts(t, dir) // read from their start
				}
			}
			name := fmt.Sprintf("%s %s round %d", r.harness, filepath.Base(r.dir), round)
			compareInPlace(t, name, r.harness, dir, rng)
		}
	}
}

// compareInPlace indexes the harness's sessions at root both ways and
// compares the hits of words they hold.
func compareInPlace(t *testing.T, name, harness, root string, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	src, err := NewSource(harness, root)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	inPlace := &Mirror{Dir: filepath.Join(tmp, "in-place"), Source: src}
	files := &Mirror{Dir: filepath.Join(tmp, "files"), Source: mirroredFiles{src}}
	if !inPlace.InPlace() || files.InPlace() {
		t.Fatal("the mirrors are not of the kinds compared")
	}
	open := func(m *Mirror) *search.DB {
		if _, err := m.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		db, err := search.Open(filepath.Join(m.Dir, "index.db"), m.Dir, &search.OpenOptions{Source: m.IndexSource()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := db.Refresh(ctx, search.RefreshOptions{Harness: harness}); err != nil {
			t.Fatal(err)
		}
		return db
	}
	a, b := open(inPlace), open(files)
	if mf, _ := session.Files(inPlace.Dir); len(mf) != 0 {
		t.Fatalf("%s: an index in place made %d mirror files", name, len(mf))
	}

	// Every word of the mirror files' searchable text, a sample of them.
	mirrorFiles, err := session.Files(files.Dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var words []string
	for _, f := range mirrorFiles {
		session.ReadFrom(f.Path, session.Cursor{}, searchtext.ReadOptions, func(rd session.Read) error {
			if rd.Entry == nil {
				return nil
			}
			d := searchtext.Of(rd.Entry)
			for _, w := range searchtext.Tokenize(d.Text + " " + d.Thinking) {
				if !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
			return nil
		})
	}
	if len(words) == 0 {
		t.Fatalf("%s: no words", name)
	}
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	words = words[:min(len(words), 120)]

	type key struct {
		Path, EntryID, Role, Tool, Model, SessionID, Title, Cwd string
		Line                                                    int
		TS                                                      int64
		OnBranch, InContext                                     bool
	}
	// A fork's copies are one hit, in whichever file comes first (by
	// path, which differs): the hit's files are compared.
	keyOf := func(h search.Hit, path string, line int, name func(string) string) key {
		paths := []string{path}
		for _, p := range h.AlsoIn {
			paths = append(paths, name(p))
		}
		slices.Sort(paths)
		k := key{strings.Join(paths, " "), h.EntryID, h.Role, h.Tool, h.Model, h.SessionID, h.Title, h.Cwd, line, h.Timestamp.UnixMilli(), h.OnActiveBranch, h.InContext}
		if len(paths) > 1 {
			// The session, its line and flags are the first file's.
			k.SessionID, k.Title, k.Cwd, k.Line, k.OnBranch, k.InContext = "", "", "", 0, false, false
		}
		return k
	}
	for _, w := range words {
		q := search.Query{Text: `"` + w + `"`, Limit: 5000, Thinking: true, Subagents: true, Newest: true}
		ha, err := a.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []key
		for _, h := range ha {
			got = append(got, keyOf(h, h.Path, h.Line, func(p string) string { return p }))
			if h.Role != search.RoleTitle && len(h.Highlights) == 0 {
				t.Errorf("%s: %q: the hit at %s line %d has no highlight in its snippet %q", name, w, h.Path, h.Line, h.Snippet)
			}
		}
		for _, h := range hb {
			line := h.Line
			if head := readAt(t, h.Path, h.Offset, 32); h.Role != search.RoleTitle {
				line, _ = SourceLineOf(head)
			} else {
				line = 0
			}
			want = append(want, keyOf(h, files.SourcePath(h.Path), line, files.SourcePath))
		}
		cmp := func(x, y key) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) }
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %q: in place\n%v\nmirror files\n%v", name, w, got, want)
		}
	}
}

func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := f.ReadAt(b, off)
	return b[:k]
}

// spoilTranscripts spoils the transcripts under dir as spoilLines does
// (junk, blank, torn, trailed and repeated lines).
func spoilTranscripts(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, "history.jsonl") || strings.HasSuffix(p, "session_index.jsonl") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out := spoilLines(rng, data)
		if err := os.WriteFile(p, out, 0o600); err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

// compressRollouts compresses every other rollout under dir as Codex
// compresses old ones (name.jsonl.zst).
func compressRollouts(t *testing.T, dir string) {
	t.Helper()
	k := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		if k++; k%2 == 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		w, _ := zstd.NewWriter(&z)
		w.Write(data)
		w.Close()
		if err := os.WriteFile(p+".zst", z.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return os.Remove(p)
	})
}

// generatedClaudeRoot is a Claude Code data dir of n generated
// transcripts (scanRand's lines: every record shape, with text).
func generatedClaudeRoot(t *testing.T, n int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-p-a")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := scanRand{rand.New(rand.NewPCG(uint64(i), 21))}
		var b strings.Builder
		for k := range 1 + r.IntN(40) {
			b.WriteString(r.claudeLine(k) + "\n")
		}
		name := fmt.Sprintf("0000%04d-0000-4000-8000-000000000000.jsonl", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// generatedCodexRoot is a Codex data dir of n generated rollouts.
func generatedCodexRoot(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sessions", "2026", "11", "01")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := scanRand{rand.New(rand.NewPCG(uint64(i), 22))}
		var b strings.Builder
		b.WriteString(fmt.Sprintf(`{"timestamp":"2026-11-01T10:00:00.000Z","type":"session_meta","payload":{"id":"019d0000-aaaa-7bbb-8ccc-%012d","cwd":"/p","timestamp":"2026-11-01T10:00:00.000Z"}}`, i) + "\n")
		for k := range 1 + r.IntN(40) {
			b.WriteString(r.codexLine(k) + "\n")
		}
		name := fmt.Sprintf("rollout-2026-11-01T10-00-00-019d0000-aaaa-7bbb-8ccc-%012d.jsonl", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestOpenedMirrorsBounded: the mirror files of the sessions a person
// opens, of a harness searched in place, stay within openedBytes (the
// session just opened kept whatever its size), those converted longest
// ago removed first; one removed is converted again when opened, and the
// index in place reads on as before.
func TestOpenedMirrorsBounded(t *testing.T) {
	root := generatedCodexRoot(t, 12)
	src, err := NewSource(HarnessCodex, root)
	if err != nil {
		t.Fatal(err)
	}
	list, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	m := &Mirror{Dir: t.TempDir(), Source: src}
	ctx := context.Background()
	if _, err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	defer func(b int64) { openedBytes = b }(openedBytes)
	openedBytes = 6 << 10
	onDisk := func() (n int64, names map[string]bool) {
		files, _ := session.Files(m.Dir)
		names = map[string]bool{}
		for _, f := range files {
			n += f.Size
			names[f.Path] = true
		}
		return n, names
	}
	// converted is the order the mirror files were made in, newest last:
	// a session opened whose mirror is there is not converted again.
	var converted []string
	opened := 0
	for round := range 3 {
		for _, s := range list {
			if s.Err != nil {
				continue
			}
			_, before := onDisk()
			mf, err := m.Ensure(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			opened++
			if !before[mf.Path] {
				converted = slices.DeleteFunc(converted, func(p string) bool { return p == mf.Path })
				converted = append(converted, mf.Path)
			}
			st, err := session.Open(mf.Path, nil)
			if err != nil {
				t.Fatalf("round %d: the mirror just opened: %v", round, err)
			}
			st.Close()
			n, names := onDisk()
			fi, _ := os.Stat(mf.Path)
			if n > openedBytes+fi.Size() {
				t.Fatalf("round %d: %d bytes of mirror files, bound %d", round, n, openedBytes)
			}
			// What is kept is the newest converted.
			for k, gone := len(converted)-1, false; k >= 0; k-- {
				switch {
				case !names[converted[k]]:
					gone = true
				case gone:
					t.Fatalf("round %d: %s kept, a later one removed", round, filepath.Base(converted[k]))
				}
			}
			if len(names) > len(converted) {
				t.Fatalf("round %d: %d mirror files, %d converted", round, len(names), len(converted))
			}
		}
	}
	order := make([]string, opened) // the sessions opened, for the count below
	if len(order) < 20 {
		t.Fatalf("only %d sessions opened", len(order))
	}
	// The manifest and the index in place agree with a refresh's.
	if _, err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := search.Open(filepath.Join(t.TempDir(), "index.db"), m.Dir, &search.OpenOptions{Source: m.IndexSource()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Refresh(ctx, search.RefreshOptions{Harness: HarnessCodex})
	if err != nil || st.Indexed != len(order)/3 {
		t.Fatalf("index in place: %+v, %v; want %d sessions", st, err, len(order)/3)
	}
}

// TestClaudeLinksAsRecords: a Claude Code conversion whose first pass
// reads only the members it looks at (eachClaudeLinks) converts what one
// that decodes every record whole converts, for reading and for resuming:
// the same session, the same entries. On the real transcripts, the
// hand-made ones (compactions, sidechains, titles), generated ones of
// every record shape (escaped names, repeated members, torn lines, text
// after a record) and each spoiled at random.
func TestClaudeLinksAsRecords(t *testing.T) {
	var files []string
	if _, ok := realfixtures.Find(); ok {
		m, _ := filepath.Glob(filepath.Join(realClaude, "*.jsonl"))
		files = append(files, m...)
	}
	m, _ := filepath.Glob("testdata/claude/*.jsonl")
	files = append(files, m...)
	dir := t.TempDir()
	for i := range 200 {
		r := scanRand{rand.New(rand.NewPCG(uint64(i), 23))}
		var b strings.Builder
		for k := range 1 + r.IntN(30) {
			line := r.claudeLine(k)
			switch r.IntN(12) {
			case 0: // a compaction: its boundary and its summary
				line = r.object("type", r.word("system"), "subtype", r.word("compact_boundary"), "uuid", r.word(fmt.Sprint("b", k)),
					"logicalParentUuid", r.word(fmt.Sprint("u", k-1)), "parentUuid", "null", "compactMetadata", r.object("preTokens", "1234"))
				line += "\n" + r.object("type", r.word("user"), "uuid", r.word(fmt.Sprint("s", k)), "parentUuid", r.word(fmt.Sprint("b", k)),
					"isCompactSummary", []string{"true", "1", `"yes"`}[r.IntN(3)], "message", r.object("role", r.word("user"), "content", r.text()),
					"uuid", r.word(fmt.Sprint("s", k)))
			case 1: // a chain
				line = strings.Replace(line, `{`, `{"parentUuid":`+r.word(fmt.Sprint("u", r.IntN(k+1)))+",", 1)
			case 2: // members given twice: JSON.parse keeps the last
				line = strings.Replace(line, `{`, `{"uuid":"first","cwd":"/first","parentUuid":"u0","type":"user",`, 1)
			}
			b.WriteString(line + "\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("g%03d.jsonl", i))
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	convert := func(path string, purpose Purpose, firstPass func(string, func(record) error) (int, error)) (string, error) {
		var out strings.Builder
		err := streamClaude(path, "/fallback", purpose, firstPass, func(c *Converted) error {
			fmt.Fprintf(&out, "%+v\n", *c)
			return nil
		}, func(id string, e []byte) error {
			fmt.Fprintf(&out, "%s %s\n", id, e)
			return nil
		})
		return out.String(), err
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 4 {
			p := path
			if round > 0 {
				p = filepath.Join(dir, "spoiled.jsonl")
				if err := os.WriteFile(p, spoilLines(rng, data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, purpose := range []Purpose{ForReading, ForResume} {
				got, gerr := convert(p, purpose, eachClaudeLinks)
				want, werr := convert(p, purpose, eachRecord)
				if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%s round %d: with the links only\n%s%v\nwith every record whole\n%s%v", path, round, got, gerr, want, werr)
				}
			}
		}
	}
}

// spoilLines spoils a transcript's lines at random: junk, blank, torn
// and repeated lines, text after a record.
func spoilLines(rng *rand.Rand, data []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		switch rng.IntN(10) {
		case 0:
			out = append(out, "not json\n"...)
		case 1:
			out = append(out, "\n"...)
		case 2:
			if len(l) > 3 {
				l = append(bytes.Clone(l[:rng.IntN(len(l)-1)]), '\n')
			}
		case 3:
			l = bytes.Replace(l, []byte("}\n"), []byte("} x\n"), 1)
		case 4:
			out = append(out, l...)
		}
		out = append(out, l...)
	}
	return out
}
