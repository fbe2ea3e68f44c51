package session

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// GenerateSessions writes n files of the differential tester's generator
// (seed) into dir/sessions, with their blobs in dir/blobs, for the tests
// of packages that read sessions (export_test.go idiom: exported for
// package session_test only). It returns the paths of the files.
func GenerateSessions(t testing.TB, seed uint64, n int, dir string) []string {
	t.Helper()
	g := newSessionGen(seed, filepath.Join(dir, "blobs"))
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i := range n {
		c := g.file(fmt.Sprintf("g%05d", i))
		path := filepath.Join(sessions, c.name+".jsonl")
		if err := os.WriteFile(path, c.bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	if err := g.writeBlobs(); err != nil {
		t.Fatal(err)
	}
	return files
}
