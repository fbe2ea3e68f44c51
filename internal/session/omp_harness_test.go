package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xdev/xdev/internal/omptest"

	"github.com/xdev/xdev/internal/jsonx"
)

// The real omp, installed from npm by interop/omp/install.sh.
// requireOmp returns the harness directory (see omptest.Require).
func requireOmp(t *testing.T) string { return omptest.Require(t) }

// runOmp runs one of the harness's Bun scripts (see omptest.Run).
func runOmp(t *testing.T, agentDir, script string, args ...string) []byte {
	return omptest.Run(t, agentDir, script, args...)
}

// ompContexts runs omp's context.ts on files and returns its view of each,
// by path, values kept exactly as omp printed them.
func ompContexts(t *testing.T, agentDir string, files ...string) map[string]ompDiffView {
	t.Helper()
	all, err := jsonx.Parse(runOmp(t, agentDir, "context.ts", files...))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]ompDiffView{}
	for _, v := range all.Items() {
		m[v.Get("file").String()] = ompDiffViewOf(v)
	}
	return m
}

// compareWithOmp opens file with xdev (windowed and full) and checks that
// the context (every message byte for byte as JSON.stringify writes it),
// leaf, model, thinking level and title equal omp's, and that every image
// blob resolved.
func compareWithOmp(t *testing.T, file string, blobs *BlobStore, omp ompDiffView) {
	t.Helper()
	if omp.Error != "" {
		t.Errorf("%s: omp refused the file: %s", file, omp.Error)
		return
	}
	for _, d := range compareDiff(file, blobs, omp, &diffCase{}) {
		t.Errorf("%s: %s", file, d)
	}
	s, err := Open(file, &OpenOptions{Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.BuildContext().MissingBlobs; n != 0 {
		t.Errorf("%s: %d image blobs did not resolve", file, n)
	}
}

// copyTree copies a directory, so tests never touch committed testdata.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
