package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// TestTreeKeepsMainLineLeft: on generated sessions that fork often (back
// to an earlier entry, then on), `show --tree` prints every entry exactly
// once; the active branch, root to leaf, runs down column 0 in order and
// ends with the leaf; a side branch is indented by as many levels as it is
// nested in other side branches, never by how often the main line forked;
// and every line fits the terminal.
func TestTreeKeepsMainLineLeft(t *testing.T) {
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		path := filepath.Join(t.TempDir(), "s.jsonl")
		s, err := session.Create(path, session.NewOptions{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range 40 + r.IntN(200) {
			if len(ids) > 3 && r.IntN(6) == 0 {
				if _, err := s.Branch(ids[r.IntN(len(ids))]); err != nil {
					t.Fatal(err)
				}
			}
			e, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(fmt.Sprintf("message %d %s", i, strings.Repeat("漢字 ", r.IntN(30)))), Timestamp: 1})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
			if r.IntN(10) == 0 {
				s.Append(&session.Label{TargetID: e.ID, Label: "a label " + strings.Repeat("x", r.IntN(30))})
			}
		}
		s.Close()
		width := 60 + r.IntN(80)
		var out bytes.Buffer
		e := newEnv(nil, &out, &bytes.Buffer{}, true, width)
		if code := run(e, []string{"show", "--tree", path}); code != 0 {
			t.Fatal("show --tree failed")
		}
		x, err := session.OpenIndex(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		onPath := map[string]bool{}
		var want []string
		for _, i := range x.PathTo(x.Leaf()) {
			onPath[x.ID(i)] = true
			want = append(want, x.ID(i))
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != x.Len() {
			t.Fatalf("seed %d: %d lines for %d entries", seed, len(lines), x.Len())
		}
		var main []string
		for _, l := range lines {
			if term.DisplayWidth(l) > width {
				t.Errorf("seed %d: %d columns, terminal %d: %q", seed, term.DisplayWidth(l), width, l)
			}
			f := strings.Fields(l)
			if strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "● ") {
				main = append(main, f[1])
				continue
			}
			if strings.Contains(l, "*") || strings.Contains(l, "●") {
				t.Errorf("seed %d: an entry of the active branch is indented: %q", seed, l)
			}
		}
		if strings.Join(main, " ") != strings.Join(want, " ") {
			t.Errorf("seed %d: the left column reads\n%v\nnot the active branch\n%v", seed, main, want)
		}
		if !strings.HasPrefix(lines[len(lines)-1], "● ") {
			t.Errorf("seed %d: the last line is not the leaf: %q", seed, lines[len(lines)-1])
		}
		x.Close()
	}
}
