package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// TestSearchMeansTheSame: a query means the same on the server as in the
// local index. Over one data dir, pushed and indexed, a few hundred
// generated queries (words of every frequency, prefixes, phrases taken
// from the texts, OR, excluded words, words typed with other case and
// diacritics, punctuation, snake_case, paths, CJK) find the same entries
// on both; a query the local index refuses, the server refuses.
func TestSearchMeansTheSame(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, 40, 17); err != nil {
		t.Fatal(err)
	}
	// Texts a corpus does not hold: diacritics, CJK, code.
	extra := []string{
		"Die Überprüfung der Café-Rechnung", "the café was closed; naïve coöperation",
		"日本語の文章を書く", "東日本の天気は晴れ", "한국어 문장", "カタカナのテスト",
		"call parse_config() in src/app/main.go, then --dry-run", "see https://example.com/a/b?x=1 and a-b-c",
	}
	p, _, _ := session.NewSessionPath(dir, "/work/extra")
	s, err := session.Create(p, session.NewOptions{Cwd: "/work/extra"})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range extra {
		s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(x), Timestamp: 1})
	}
	s.Close()
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	local, err := search.Open(filepath.Join(t.TempDir(), "index.db"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if _, err := local.Refresh(ctx, search.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}

	// Words and phrases the texts hold, by the searchable rule.
	var texts []string
	files, _ := session.Files(dir)
	for _, f := range files {
		session.ReadFrom(f.Path, session.Cursor{}, nil, func(r session.Read) error {
			if r.Entry != nil {
				if d := searchtext.Of(r.Entry); d.Text != "" {
					texts = append(texts, d.Text)
				}
			}
			return nil
		})
	}
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		toks := searchtext.Tokenize(texts[r.IntN(len(texts))])
		if len(toks) == 0 {
			return "x"
		}
		return toks[r.IntN(len(toks))]
	}
	queries := []string{"Uberprufung", "CAFE", "naive", "cooperation", "日本", "本語", "天気", "한국어", "カタカナ",
		"parse_config", "parse_config()", "src/app/main.go", "--dry-run", "dry", "https://example.com", "a-b-c",
		`"the café"`, `"東日本"`, "café OR 日本", "café -naïve", "Über*", "pars*", "日*",
		`"unclosed`, "OR", "-alone", "a OR", strings.Repeat("word ", 1000)}
	k := testscale.N(1, 4) // a quarter of the generated queries unless $XDEV_TEST_LONG
	for range 15 * k {
		queries = append(queries, word())
	}
	for range 10 * k {
		toks := searchtext.Tokenize(texts[r.IntN(len(texts))])
		if len(toks) < 3 {
			continue
		}
		i := r.IntN(len(toks) - 2)
		queries = append(queries, `"`+strings.Join(toks[i:i+2+r.IntN(2)], " ")+`"`)
	}
	for range 10 * k {
		w := word()
		queries = append(queries, w[:max(1, min(len(w), 1+r.IntN(4)))]+"*")
	}
	for range 10 * k {
		queries = append(queries, word()+" OR "+word(), word()+" -"+word(), word()+" "+word())
	}
	for range 5 * k {
		w := []rune(word())
		w[0] = []rune(strings.ToUpper(string(w[0])))[0]
		queries = append(queries, string(w))
	}
	compared := 0
	for _, q := range queries {
		lh, lerr := local.Search(ctx, search.Query{Text: q, Limit: 1 << 20})
		ph, perr := db.Search(ctx, Query{Text: q, Limit: 1 << 20})
		if errors.Is(lerr, search.ErrQuery) || errors.Is(perr, searchtext.ErrQuery) {
			if !errors.Is(lerr, search.ErrQuery) || !errors.Is(perr, searchtext.ErrQuery) {
				t.Errorf("%.80q: the local index says %v, the server %v", q, lerr, perr)
			}
			continue
		}
		if lerr != nil || perr != nil {
			t.Fatalf("%.80q: local %v, server %v", q, lerr, perr)
		}
		root := session.SessionsDir(dir)
		var want, got []string
		for _, h := range lh {
			if h.Role == search.RoleTitle {
				continue // the server does not index titles
			}
			for _, p := range append([]string{h.Path}, h.AlsoIn...) {
				rel, _ := filepath.Rel(root, p)
				want = append(want, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), h.Line))
			}
		}
		for _, h := range ph {
			got = append(got, fmt.Sprintf("%s:%d", h.Session.Path, h.Line))
		}
		slices.Sort(want)
		want = slices.Compact(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("%.80q: the local index finds %d entries, the server %d", q, len(want), len(got))
		}
		compared++
	}
	t.Logf("%d queries compared", compared)
	if compared < 50*k {
		t.Errorf("only %d queries compared", compared)
	}

}
