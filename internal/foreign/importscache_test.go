package foreign

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/session"
)

// TestImportedThroughCache: through the imports cache, Imported finds
// what it finds reading every file, across 60 rounds of changes to a
// data dir of generated sessions (new files, provenance entries
// appended, files replaced, shrunk, deleted, rewritten with the same
// size), for random sources of each harness, path and id; and a check
// after one that cached a file does not read it again.
func TestImportedThroughCache(t *testing.T) {
	data, cache := t.TempDir(), t.TempDir()
	dir := filepath.Join(session.SessionsDir(data), "--w--")
	os.MkdirAll(dir, 0o700)
	r := rand.New(rand.NewPCG(38, 6))
	harnesses := []string{HarnessClaude, HarnessCodex}
	source := func() Provenance {
		n := r.IntN(6)
		return Provenance{Harness: harnesses[r.IntN(2)], ID: fmt.Sprintf("id-%d", n%4), Path: fmt.Sprintf("/src/%d.jsonl", n), Cwd: "/w"}
	}
	provLine := func(p Provenance) string {
		return fmt.Sprintf(`{"type":"custom","id":"%08x","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":%q,"data":{"source":%q,"sourceId":%q,"sourcePath":%q,"sourceCwd":%q}}`+"\n",
			r.Uint32(), ImportType, p.Harness, p.ID, p.Path, p.Cwd)
	}
	message := `{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"words","timestamp":1}}` + "\n"
	header := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"
	past := time.Now().Add(-time.Hour)
	write := func(path, body string) {
		os.WriteFile(path, []byte(body), 0o600)
		past = past.Add(time.Second) // each change a tick of its own, and out of the racy window
		os.Chtimes(path, past, past)
	}
	var paths []string
	for round := range 60 {
		for range 1 + r.IntN(4) {
			switch op := r.IntN(6); {
			case op == 0 || len(paths) == 0: // a new session, an import or not
				p := filepath.Join(dir, fmt.Sprintf("2026-01-01T00-00-00-000Z_%04d.jsonl", len(paths)+round*100))
				body := header + message
				if r.IntN(2) == 0 {
					body += provLine(source())
				}
				write(p, body)
				paths = append(paths, p)
			case op == 1: // a provenance appended
				p := paths[r.IntN(len(paths))]
				b, _ := os.ReadFile(p)
				write(p, string(b)+provLine(source()))
			case op == 2: // replaced by another file (a new inode)
				p := paths[r.IntN(len(paths))]
				tmp := p + ".tmp"
				write(tmp, header+provLine(source())+message)
				os.Rename(tmp, p)
			case op == 3: // cut back to its header
				write(paths[r.IntN(len(paths))], header)
			case op == 4: // deleted
				k := r.IntN(len(paths))
				os.Remove(paths[k])
				paths = append(paths[:k], paths[k+1:]...)
			case op == 5: // appended to without a provenance
				p := paths[r.IntN(len(paths))]
				b, _ := os.ReadFile(p)
				write(p, string(b)+message)
			}
		}
		for range 5 {
			src := source()
			want, wok, werr := Imported(data, src, "")
			got, gok, gerr := Imported(data, src, cache)
			if got != want || gok != wok || (gerr == nil) != (werr == nil) {
				t.Fatalf("round %d, %+v: through the cache %+v %v %v, reading every file %+v %v %v", round, src, got, gok, gerr, want, wok, werr)
			}
		}
	}
	// A file rewritten in place with its stat as it was is answered from
	// the cache: the check did not read it.
	src := Provenance{Harness: HarnessClaude, ID: "never", Path: "/src/never.jsonl"}
	p := filepath.Join(dir, "2026-01-01T00-00-00-000Z_rewritten.jsonl")
	write(p, header+strings.Repeat(message, 10))
	if _, ok, err := Imported(data, src, cache); ok || err != nil {
		t.Fatalf("found before it is written: %v", err)
	}
	fi, _ := os.Stat(p)
	f, _ := os.OpenFile(p, os.O_WRONLY, 0)
	f.WriteAt([]byte(header+provLine(src)), 0) // within the file's size
	f.Close()
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if _, ok, _ := Imported(data, src, ""); !ok {
		t.Fatal("reading every file does not find the rewritten provenance")
	}
	if _, ok, _ := Imported(data, src, cache); ok {
		t.Error("through the cache, a file whose stat did not change was read again")
	}
}
