package search

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// TestRefreshHandsBackSQLitesMemory: a refresh that indexed a megabyte of
// text or more ends on a connection opened anew (its WebAssembly memory,
// grown by FTS5's pending terms, handed back), one that indexed less
// keeps its connection; either way the index answers as one built afresh.
func TestRefreshHandsBackSQLitesMemory(t *testing.T) {
	dir := t.TempDir()
	db := openTemp(t, dir)
	small := 0
	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"first index", func(t *testing.T) { writeSessions(t, dir, 150, 1) }},
		{"nothing changed", func(t *testing.T) {}},
		{"one small session", func(t *testing.T) { small++; writeSmallSession(t, dir, small) }},
		{"a second batch", func(t *testing.T) { writeSessions(t, dir, 150, 2) }},
		{"another small session", func(t *testing.T) { small++; writeSmallSession(t, dir, small) }},
	}
	for _, s := range steps {
		s.change(t)
		before := db.conn
		st := refresh(t, db, RefreshOptions{})
		t.Logf("%s: %+v", s.name, st)
		if renewed, want := db.conn != before, st.TextBytes >= reconnectTextBytes; renewed != want {
			t.Errorf("%s: %d bytes of text indexed; connection opened anew: %v, want %v", s.name, st.TextBytes, renewed, want)
		}
		fresh := openTemp(t, dir)
		refresh(t, fresh, RefreshOptions{})
		for k := range 12 {
			q := Query{Text: corpus.Vocabulary(k * k * 20), Thinking: k%2 == 0}
			if a, b := found(t, db, q), found(t, fresh, q); !slices.Equal(a, b) {
				t.Errorf("%s: %q: the refreshed index finds %v, a fresh one %v", s.name, q.Text, a, b)
			}
		}
		if a, b := dump(t, db), dump(t, fresh); a != b {
			t.Errorf("%s: the refreshed index:\n%s\na fresh one:\n%s", s.name, a, b)
		}
	}
}

// writeSessions writes n generated sessions of seed into dataDir.
func writeSessions(t *testing.T, dataDir string, n int, seed uint64) {
	t.Helper()
	if _, err := corpus.WriteDir(dataDir, n, seed); err != nil {
		t.Fatal(err)
	}
}

// writeSmallSession writes a session of one short message.
func writeSmallSession(t *testing.T, dataDir string, i int) {
	t.Helper()
	id := fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", i)
	p := filepath.Join(session.SessionsDir(dataDir), "small", "2026-01-01T00-00-00-000Z_"+id+".jsonl")
	text := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/small"}`+"\n"+
		`{"type":"message","id":"a%07d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a small one %s","timestamp":1767225601000}}`+"\n",
		id, i, corpus.Vocabulary(7))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
