package serve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/catalog"
)

// TestLiveProjects: a running server sees a session added to a project
// of a harness that keeps its sessions in the projects (an Aider run
// appended to the chat, a Crush session added to its database), though
// the project lies in no harness's directory; and a project first named
// while it runs, by another harness's session that ran there.
func TestLiveProjects(t *testing.T) {
	p := newPlace(t)
	project := filepath.Join(t.TempDir(), "proj")
	os.MkdirAll(filepath.Join(project, ".crush"), 0o700)
	chat := filepath.Join(project, ".aider.chat.history.md")
	os.WriteFile(chat, []byte("# aider chat started at 2026-01-02 10:00:00\n\n#### first  \n\nHi.\n"), 0o600)
	db := filepath.Join(project, ".crush", "crush.db")
	exec := func(q string) {
		t.Helper()
		c, err := sqlite3.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
		prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
		updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
		CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT,
		created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);
		INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('c1', 'first', 1767348000, 1767348000)`)
	t.Setenv(catalog.ProjectsEnv, project)
	srv := p.serve(t)
	ids := func(h catalog.Harness) []string {
		var out []string
		for _, r := range srv.listed(h) {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	waitFor := func(h catalog.Harness, want []string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !slices.Equal(ids(h), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the server lists %v, want %v", h, ids(h), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(catalog.Aider, []string{"20260102T100000"})
	waitFor(catalog.Crush, []string{"c1"})

	f, _ := os.OpenFile(chat, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n# aider chat started at 2026-01-03 09:00:00\n\n#### second  \n")
	f.Close()
	exec(`INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('c2', 'second', 1767430800, 1767430800)`)
	waitFor(catalog.Aider, []string{"20260102T100000", "20260103T090000"})
	waitFor(catalog.Crush, []string{"c1", "c2"})

	// A project nothing named yet: an Aider chat there shows once a
	// session of another harness (the data dir's) ran there.
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, ".aider.chat.history.md"), []byte("# aider chat started at 2026-01-04 08:00:00\n\n#### third  \n"), 0o600)
	p.newSession(t, other, "", "work in other", "done")
	waitFor(catalog.Aider, []string{"20260102T100000", "20260103T090000", "20260104T080000"})
	// ... and is watched from then on.
	f, _ = os.OpenFile(filepath.Join(other, ".aider.chat.history.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n# aider chat started at 2026-01-05 08:00:00\n\n#### fourth  \n")
	f.Close()
	waitFor(catalog.Aider, []string{"20260102T100000", "20260103T090000", "20260104T080000", "20260105T080000"})
}
