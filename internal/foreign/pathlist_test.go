package foreign

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestListPathsOfRealFixtures: on the real Claude Code and Codex
// sessions, what ListPaths says of every transcript the walk names is
// what List says, with and without subagents; and a mirror refreshed
// from those paths holds what one refreshed whole holds.
func TestListPathsOfRealFixtures(t *testing.T) {
	for harness, root := range map[string]string{HarnessClaude: claudeRoot(t), HarnessCodex: codexRoot(t)} {
		// Past the racy window, as a settled change is: a refresh stamps
		// its listing then.
		old := time.Now().Add(-time.Hour)
		filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
			if err == nil {
				os.Chtimes(path, old, old)
			}
			return nil
		})
		src := testSource(t, harness, root)
		var paths []string
		src.(transcriptWalker).walkTranscripts(func(path string) { paths = append(paths, path) })
		if len(paths) == 0 {
			t.Fatalf("%s: no transcripts", harness)
		}
		for _, subagents := range []bool{true, false} {
			want, err := src.List(subagents)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := src.(PathLister).ListPaths(paths, subagents)
			if !ok {
				t.Fatalf("%s: ListPaths of the transcripts asked for a whole listing", harness)
			}
			if g, w := sessionsByPath(got), sessionsByPath(want); g != w {
				t.Fatalf("%s (subagents %v): ListPaths:\n%s\nwant (List):\n%s", harness, subagents, g, w)
			}
		}
		byPaths := &Mirror{Dir: filepath.Join(t.TempDir(), "paths"), Source: src}
		whole := &Mirror{Dir: filepath.Join(t.TempDir(), "whole"), Source: src}
		for _, m := range []*Mirror{byPaths, whole} {
			if _, err := m.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok, err := byPaths.RefreshPaths(context.Background(), paths); err != nil || !ok {
			t.Fatalf("%s: RefreshPaths of every transcript: %v, %v", harness, ok, err)
		}
		sameMirror(t, harness, byPaths, whole)
	}
}

// sessionsByPath is a listing as text, by path, errors by their text.
func sessionsByPath(list []Session) string {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b Session) int { return strings.Compare(a.Path, b.Path) })
	var b strings.Builder
	for _, s := range list {
		err := fmt.Sprint(s.Err)
		s.Err = nil
		fmt.Fprintf(&b, "%s %#v\n", err, s)
	}
	return b.String()
}
