package foreign

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/xdev/xdev/internal/export"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/session"
)

// TestEveryFixtureReads: every real Claude Code and Codex session, and
// every hand-made one, subagent transcripts included, converts into a
// session the store opens, exports as Markdown and HTML, and is found by
// search (through a mirror) by a word of its own.
func TestEveryFixtureReads(t *testing.T) {
	roots := map[string]string{HarnessClaude: claudeRoot(t), HarnessCodex: codexRoot(t)}
	for _, harness := range []string{HarnessClaude, HarnessCodex} {
		root := roots[harness]
		src, err := NewSource(harness, root)
		if err != nil {
			t.Fatal(err)
		}
		list, err := src.List(true)
		if err != nil {
			t.Fatal(err)
		}
		m := &Mirror{Dir: t.TempDir(), Source: src}
		if _, err := m.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		db, err := search.Open(filepath.Join(t.TempDir(), "index.db"), m.Dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Refresh(context.Background(), search.RefreshOptions{Harness: harness}); err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Err != nil {
				continue
			}
			t.Run(harness+"/"+filepath.Base(s.Path), func(t *testing.T) {
				path, _, err := ImportStream(t.TempDir(), s.Provenance(), src.Stream(s, ForResume))
				if err != nil {
					t.Fatal(err)
				}
				x, err := session.OpenIndex(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				var md, page bytes.Buffer
				if err := export.Markdown(&md, x, nil); err != nil {
					t.Fatal(err)
				}
				if err := export.HTML(&page, x, &export.PageDefaults); err != nil {
					t.Fatal(err)
				}
				st, err := session.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				ctx := st.BuildContext()
				st.Close()
				if len(ctx.Messages) == 0 {
					return // nothing to find (an empty conversation)
				}
				// A word of the last message's text, found in this session.
				word := lastWord(ctx.Messages[len(ctx.Messages)-1].Text())
				if word == "" {
					return
				}
				hits, err := db.Sessions(context.Background(), search.Query{Text: `"` + word + `"`, Thinking: true, Subagents: true})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, h := range hits {
					found = found || m.SourcePath(h.Path) == s.Path
				}
				if !found {
					t.Errorf("search for %q does not find %s", word, s.Path)
				}
			})
		}
	}
}

// lastWord is the last run of 4 or more word characters (letters, digits
// and '_', which the index keeps inside a token) in s.
func lastWord(s string) string {
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	end := -1
	for i := len(s) - 1; i >= -1; i-- {
		word := i >= 0 && isWord(s[i])
		switch {
		case word && end < 0:
			end = i + 1
		case !word && end >= 0:
			if end-i-1 >= 4 {
				return s[i+1 : end]
			}
			end = -1
		}
	}
	return ""
}
