package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// openTemp opens a fresh index of dataDir in a temp dir.
func openTemp(t testing.TB, dataDir string) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "index.db"), dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func refresh(t testing.TB, db *DB, opts RefreshOptions) RefreshStats {
	t.Helper()
	st, err := db.Refresh(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Errors) > 0 {
		t.Fatalf("refresh errors: %v", st.Errors)
	}
	return st
}

// found is the set of session files a query finds: each hit's file and
// the forks it also is in.
func found(t testing.TB, db *DB, q Query) []string {
	t.Helper()
	q.Limit = 1 << 30
	hits, err := db.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	set := map[string]bool{}
	for _, h := range hits {
		set[h.Path] = true
		for _, p := range h.AlsoIn {
			set[p] = true
		}
	}
	return sortedKeys(set)
}

// listed is the set of session files Sessions lists for a query.
func listed(t testing.TB, db *DB, q Query) []string {
	t.Helper()
	ss, err := db.Sessions(context.Background(), q)
	if err != nil {
		t.Fatalf("sessions %q: %v", q.Text, err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.Path)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// corpusText is every searchable text of a data dir, by file: what the
// brute-force scan searches. It reads the files with the core's reader and
// searchtext.Of, and the title as List gives it.
type corpusText map[string][]searchtext.Doc

func readCorpus(t testing.TB, dataDir string, subagents bool) corpusText {
	t.Helper()
	files, err := session.Files(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ct := corpusText{}
	for _, f := range files {
		var docs []searchtext.Doc
		if f.Subagent && !subagents {
			continue
		}
		if title := session.Stat(f.Path).ListTitle(); title != "" {
			docs = append(docs, searchtext.Doc{Text: title, Role: RoleTitle})
		}
		_, _, err := session.ReadFrom(f.Path, session.Cursor{}, nil, func(r session.Read) error {
			if d := searchtext.Of(r.Entry); d.Role != "" {
				docs = append(docs, d)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ct[f.Path] = docs
	}
	return ct
}

// bruteForce returns the files whose text holds every phrase (a phrase:
// tokens in a row), by a plain scan of the tokens.
func (ct corpusText) bruteForce(phrases [][]string, thinking bool) []string {
	var out []string
	folded := make([][]string, len(phrases))
	for i, p := range phrases {
		folded[i] = searchtext.Tokenize(strings.Join(p, " "))
	}
	phrases = folded
	for path, docs := range ct {
		for _, d := range docs {
			texts := []string{d.Text}
			if thinking {
				texts = append(texts, d.Thinking)
			}
			if allPhrases(texts, phrases) {
				out = append(out, path)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// allPhrases: every phrase is in one of texts (FTS5 matches a phrase
// within one column; AND across columns of one row).
func allPhrases(texts []string, phrases [][]string) bool {
	toks := make([][]string, len(texts))
	for i, s := range texts {
		toks[i] = searchtext.Tokenize(s)
	}
	for _, p := range phrases {
		in := false
		for _, ts := range toks {
			if containsRun(ts, p) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

func containsRun(ts, p []string) bool {
	for i := 0; i+len(p) <= len(ts); i++ {
		if slices.Equal(ts[i:i+len(p)], p) {
			return true
		}
	}
	return false
}

// quote writes phrases as a query.
func quote(phrases [][]string) string {
	var parts []string
	for _, p := range phrases {
		if len(p) == 1 {
			parts = append(parts, p[0])
		} else {
			parts = append(parts, `"`+strings.Join(p, " ")+`"`)
		}
	}
	return strings.Join(parts, " ")
}

// writeDir writes n generated sessions into a new data dir.
func writeDir(t testing.TB, n int, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, n, seed); err != nil {
		t.Fatal(err)
	}
	return dir
}

// randomPhrases draws queries: vocabulary words of every frequency, common
// words, and runs of two or three tokens cut from the corpus's texts.
func (ct corpusText) randomPhrases(r *rand.Rand) [][]string {
	var out [][]string
	for range 1 + r.IntN(2) {
		switch r.IntN(4) {
		case 0:
			out = append(out, []string{corpus.Vocabulary(r.IntN(3000))})
		case 1:
			out = append(out, []string{corpus.Vocabulary(r.IntN(40))})
		case 2:
			out = append(out, []string{[]string{"uberprufen", "überprüfen", "Café", "naïve", "日本語", "テスト", "refactor", "λ"}[r.IntN(8)]})
		default:
			paths := sortedKeys(map[string]bool{})
			for p := range ct {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			docs := ct[paths[r.IntN(len(paths))]]
			if len(docs) == 0 {
				continue
			}
			toks := searchtext.Tokenize(docs[r.IntN(len(docs))].Text)
			if len(toks) < 3 {
				continue
			}
			i := r.IntN(len(toks) - 2)
			out = append(out, toks[i:i+2+r.IntN(2)])
		}
	}
	if len(out) == 0 {
		out = append(out, []string{"refactor"})
	}
	return out
}

// snapshot is the bytes, modes and times of every file under dir, and
// the listing: what indexing must leave as it was.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", fnv64(string(data)))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
