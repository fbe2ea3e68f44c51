package search

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// TestAgainstRipgrep: for literal words of every frequency, the index finds
// the sessions ripgrep finds in the raw files (thinking and subagents
// included, as rg reads everything). The vocabulary's words occur only in
// text the index covers, so the two must agree exactly. CI installs rg;
// without it the test skips locally.
func TestAgainstRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg not found; .ci/run installs Debian's ripgrep")
		}
		t.Skip("rg (ripgrep) not installed")
	}
	dir := writeDir(t, 150, 21)
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	for _, k := range []int{0, 3, 10, 40, 100, 300, 1000, 3000, 10000, 30000} {
		w := corpus.Vocabulary(k)
		out, err := exec.Command(rg, "-l", "-F", "-i", w, session.SessionsDir(dir)).Output()
		if err != nil && len(out) != 0 {
			t.Fatal(err)
		}
		want := strings.Fields(string(out))
		slices.Sort(want)
		got := found(t, db, Query{Text: w, Thinking: true, Subagents: true})
		if !slices.Equal(got, want) {
			t.Errorf("%q: the index finds %d sessions, rg %d\n got %.400v\nwant %.400v", w, len(got), len(want), got, want)
		}
	}
}
