package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/testplace"
)

// TestProjectsFound: the sessions Crush and Aider keep in a project are
// found where the catalog knows people work, and nowhere else: in a
// directory another harness's session ran in (a Claude Code session
// here), in the working directory or one above it, and in a directory
// Config.Projects names; a project none of these names is not listed.
func TestProjectsFound(t *testing.T) {
	p := testplace.New(t)
	t.Setenv(catalog.ProjectsEnv, "")
	work := filepath.Join(t.TempDir(), "work")
	project := func(name string) string {
		dir := filepath.Join(work, name)
		chat := "# aider chat started at 2026-01-02 10:00:00\n\n#### hello from " + name + "  \n\nHi.\n"
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, ".aider.chat.history.md"), []byte(chat), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	viaClaude, viaCwd, named, unknown := project("via-claude"), project("via-cwd"), project("named"), project("unknown")
	enc := filepath.Join(p.Roots[catalog.Claude], "projects", "-work-via-claude")
	os.MkdirAll(enc, 0o700)
	line := fmt.Sprintf(`{"type":"user","sessionId":"11111111-2222-4333-8444-555555555555","cwd":%q,"uuid":"u1","timestamp":"2026-01-02T10:00:00.000Z","message":{"role":"user","content":"hi"}}`, viaClaude)
	os.WriteFile(filepath.Join(enc, "11111111-2222-4333-8444-555555555555.jsonl"), []byte(line+"\n"), 0o600)

	c, err := catalog.New(catalog.Config{DataDir: p.Data, Roots: p.Roots, Cwd: filepath.Join(viaCwd, "sub"), Projects: []string{named}})
	if err != nil {
		t.Fatal(err)
	}
	rows, failed := catalog.ListPlaces(context.Background(), c.Places(catalog.Every), catalog.ListOptions{})
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	var got []string
	for _, r := range rows {
		if r.Harness == catalog.Aider {
			got = append(got, filepath.Base(r.Cwd))
		}
	}
	slices.Sort(got)
	if want := []string{"named", "via-claude", "via-cwd"}; !slices.Equal(got, want) {
		t.Errorf("Aider's projects found: %v, want %v (not %s)", got, want, filepath.Base(unknown))
	}
	// This project's alone, from the working directory.
	here, err := c.ListHarness(catalog.Aider, catalog.ListOptions{Cwd: viaCwd})
	if err != nil || len(here) != 1 || here[0].Cwd != viaCwd {
		t.Errorf("the current project's: %+v, %v", here, err)
	}
	// Each is named as any session is, and read.
	for _, r := range rows {
		if r.Harness != catalog.Aider {
			continue
		}
		ref, err := c.Resolve(r.Path)
		if err != nil || ref.Path != r.Path || !c.Holds(r.Path) {
			t.Errorf("%s: resolves to %+v, %v; held %v", r.Path, ref, err, c.Holds(r.Path))
		}
	}
	if c.Holds(filepath.Join(unknown, ".aider.chat.history.md", "20260102T100000")) {
		t.Error("a project no place names is held")
	}
}
