package session

import (
	"crypto/sha256"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/realfixtures"
)

var update = flag.Bool("update", false, "rewrite golden files")

// realDir is where the two real pi sessions live (see shared/fixtures/real).
var realDir = realfixtures.Join()

func realFixture(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(realfixtures.Dir(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real fixture %s: %v", p, err)
	}
	return p
}

// fileSum returns the sha256 of a file, to prove it was not changed.
func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// unchanged fails the test if path's content differs from sum.
func unchanged(t testing.TB, path string, sum [32]byte) {
	t.Helper()
	if fileSum(t, path) != sum {
		t.Errorf("%s was modified", path)
	}
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

var fixedTime = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func errorsAs(err error, target any) bool { return errors.As(err, target) }
