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
	checkFixturesRead(t, map[string]string{HarnessClaude: claudeRoot(t), HarnessCodex: codexRoot(t)})
}

// checkFixturesRead holds every session of each harness's root to
// TestEveryFixtureReads: imported (into the cwd /work/from-flag when it
// names none, as import --cwd gives one), it opens, exports as Markdown
// and HTML, and search through a mirror finds it by a word of its last
// message with one.
func checkFixturesRead(t *testing.T, roots map[string]string) {
	for harness, root := range roots {
		src := testSource(t, harness, root)
		list, err := src.List(true)
		if err != nil {
			t.Fatal(err)
		}
		m := &Mirror{Dir: t.TempDir(), Source: src}
		if _, err := m.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		db, err := search.Open(filepath.Join(t.TempDir(), "index.db"), m.Dir, &search.OpenOptions{Source: m.IndexSource()})
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
				path, _, err := ImportStream(t.TempDir(), s.Provenance(), withFallbackCwd(src.Stream(s, ForResume)))
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
				// A word of the last message with one, found in this session.
				word := ""
				for k := len(ctx.Messages) - 1; k >= 0 && word == ""; k-- {
					word = lastWord(ctx.Messages[k].Text())
				}
				if word == "" {
					return // nothing to find (an empty conversation)
				}
				hits, err := db.Sessions(context.Background(), search.Query{Text: `"` + word + `"`, Thinking: true, Subagents: true})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, h := range hits {
					found = found || m.SourcePath(h.Path) == s.Path || m.InPlace() && h.Path == s.Path
				}
				if !found {
					t.Errorf("search for %q does not find %s", word, s.Path)
				}
			})
		}
	}
}

// withFallbackCwd is conv with the cwd /work/from-flag for a transcript
// that names none, as `xdev import --cwd` gives one.
func withFallbackCwd(conv Stream) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return conv(func(c *Converted) error {
			if c.Cwd == "" {
				c.Cwd = "/work/from-flag"
			}
			return begin(c)
		}, emit)
	}
}

// lastWord is the last run of 4 or more ASCII word characters (letters,
// digits and '_', which the index keeps inside a token) in s that is not
// part of a longer word of other letters.
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
			// Not part of a word of other letters ("obrazovkách"), which
			// the index keeps whole.
			glued := i >= 0 && s[i] >= 0x80 || end < len(s) && s[end] >= 0x80
			if end-i-1 >= 4 && !glued {
				return s[i+1 : end]
			}
			end = -1
		}
	}
	return ""
}
