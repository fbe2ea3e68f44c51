package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func content(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

var errFill = errors.New("the export failed")

// TestCreateAndReplace: Create never replaces; Replace replaces only on
// success; a failure leaves what was there and no temp file; new files
// are 0600 whatever the umask.
func TestCreateAndReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Create(p, content("one")); err != nil {
		t.Fatal(err)
	}
	if err := Create(p, content("two")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a file: %v", err)
	}
	if err := Replace(p, func(w io.Writer) error { io.WriteString(w, "partial"); return errFill }); !errors.Is(err, errFill) {
		t.Errorf("a failed fill: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Errorf("after failures the file holds %q", b)
	}
	if err := Replace(p, content("three")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "three" {
		t.Errorf("after Replace the file holds %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d files, want 1 (no temp files left)", len(ents))
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := Replace(filepath.Join(dir, "missing", "f"), content("x")); err == nil {
		t.Error("Replace into a missing directory succeeded")
	}
}
