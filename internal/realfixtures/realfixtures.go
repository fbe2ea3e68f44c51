// Package realfixtures finds the real sessions of other harnesses that the
// tests build on: ../shared/fixtures/real beside the repository, sessions
// nobody here wrote (its README says where each comes from, FORMATS.md
// what they hold).
//
// A test that needs them calls Dir (or Path). Without the folder a
// developer's run skips the test, saying why; under CI ($CI set) the test
// fails instead, so a missing folder can never pass for a green run. A
// test that also has hand-made cases asks Find, runs those alone when the
// folder is missing, and says so with Absent.
//
// $XDEV_REAL_FIXTURES, when set, is where the folder is looked for
// instead: CI sets it to a directory that does not exist to run the suite
// as a fresh clone with no ../shared beside it runs.
package realfixtures

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the absolute path of ../shared/fixtures/real, or skips (fails
// under CI) when it is not there.
func Dir(t testing.TB) string {
	t.Helper()
	dir, ok := Find()
	if !ok {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real fixtures are missing at %s; CI must have them", dir)
		}
		t.Skipf("no real fixtures at %s", dir)
	}
	return dir
}

// Path is Dir joined with elem.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}

// Find returns where the real fixtures are looked for, and whether they
// are there.
func Find() (string, bool) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "fixtures", "real")
	}
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// EnvDir names the variable that moves the folder (see the package
// comment).
const EnvDir = "XDEV_REAL_FIXTURES"

// Absent reports that a test found none of the real fixtures it reads
// (what names them) and goes on with its hand-made cases: under CI that
// fails the test, since a green run must have read the real files.
func Absent(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("no %s: the real fixtures are missing; CI must have them", what)
	}
	t.Logf("no %s: the hand-made cases only", what)
}

// Join is where elem lies in the folder, whether the folder is there or
// not (Find says): for a test's paths, which it then checks for itself.
func Join(elem ...string) string {
	dir, _ := Find()
	return filepath.Join(append([]string{dir}, elem...)...)
}
