package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/xdev/xdev/internal/testscale" // GORACE for the helper processes
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
	// Create makes the directories a new file goes in, and a Create that
	// fails leaves none of them.
	if err := Create(filepath.Join(dir, "a", "b", "f"), content("x")); err != nil {
		t.Errorf("Create into a missing directory: %v", err)
	}
	if err := Create(filepath.Join(dir, "c", "d", "f"), func(w io.Writer) error { return errFill }); !errors.Is(err, errFill) {
		t.Errorf("a failed fill: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed Create left its directory: %v", err)
	}
}

// TestReplaceIf: ready sees the new content complete (a second look at
// the world just before the swap); its refusal leaves the old file and no
// temp file, its consent replaces.
func TestReplaceIf(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	errBusy := errors.New("someone is writing")
	for _, tc := range []struct {
		ready func() error
		err   error
		want  string
	}{
		{func() error { return errBusy }, errBusy, "old"},
		{func() error { return nil }, nil, "new"},
	} {
		err := ReplaceIf(path, content("new"), tc.ready)
		if !errors.Is(err, tc.err) {
			t.Fatalf("ReplaceIf: %v, want %v", err, tc.err)
		}
		if b, _ := os.ReadFile(path); string(b) != tc.want {
			t.Errorf("after ReplaceIf (%v): %q, want %q", tc.err, b, tc.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%d entries in the directory, want the file alone", len(entries))
		}
	}
}

// TestReplaceCache: a cache file is replaced whole, 0600, with nothing
// left beside it, as Replace does (only unsynced).
func TestReplaceCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.ckpt")
	for _, want := range []string{"one", "two"} {
		if err := ReplaceCache(path, content(want)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if b, _ := os.ReadFile(path); err != nil || string(b) != want || fi.Mode().Perm() != 0o600 {
			t.Errorf("after ReplaceCache: %q, %v, %v", b, fi.Mode(), err)
		}
	}
	if err := ReplaceCache(path, func(io.Writer) error { return errFill }); !errors.Is(err, errFill) {
		t.Errorf("a failed fill: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("a failed fill left %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want the file alone", len(entries))
	}
}

// TestKilledWriterLeavesNothing: a process killed while it writes a file
// (Create or Replace) leaves no temp file in the target's directory, and
// the target as it was.
func TestKilledWriterLeavesNothing(t *testing.T) {
	if dir := os.Getenv("ATOMICFILE_CHILD"); dir != "" {
		replace := os.Getenv("ATOMICFILE_REPLACE") != ""
		fill := func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("x", 3<<20)) // past the buffer: on disk
			os.WriteFile(filepath.Join(dir, "..", "ready"), nil, 0o600)
			select {} // killed here
		}
		if replace {
			Replace(filepath.Join(dir, "f.jsonl"), fill)
		}
		Create(filepath.Join(dir, "new.jsonl"), fill)
		return
	}
	for _, replace := range []bool{false, true} {
		root := t.TempDir()
		dir := filepath.Join(root, "d")
		os.Mkdir(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "f.jsonl"), []byte("old\n"), 0o600)
		cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledWriterLeavesNothing$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+dir)
		if replace {
			cmd.Env = append(cmd.Env, "ATOMICFILE_REPLACE=1")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
				break
			}
			if i > 500 {
				cmd.Process.Kill()
				t.Fatal("the writer never got going")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "f.jsonl" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("replace %v: after the kill the directory holds %q, want only f.jsonl", replace, names)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "f.jsonl")); string(b) != "old\n" {
			t.Errorf("replace %v: the target holds %q", replace, b)
		}
	}
}

// TestLeftover: temp files of a process that is gone are leftovers, of a
// live one (this) are not; nothing that is not a temp file of ours is,
// a session file least of all.
func TestLeftover(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	dead.Run()
	gone := dead.Process.Pid
	old := time.Now().Add(-2 * StaleAfter)
	tests := []struct {
		name string
		old  bool
		want bool
		dir  bool // a directory (Link's temp directory), not a file
	}{
		{fmt.Sprintf(".s.jsonl.xdev-%d-123.tmp", gone), false, true, false},
		{fmt.Sprintf(".s.jsonl.xdev-%d-r0.tmp", gone), false, true, false},
		{fmt.Sprintf(".s.jsonl.xdev-%d-123.tmp", os.Getpid()), true, false, false},
		{".s.jsonl.12345.tmp", true, true, false},
		{".s.jsonl.12345.tmp", false, false, false},
		{fmt.Sprintf("s.jsonl.xdev-%d-1.tmp", gone), true, false, false}, // not hidden
		{fmt.Sprintf(".s.xdev-%d-1.jsonl", gone), true, false, false},    // a session's name
		{".s.jsonl.lock", true, false, false},
		{".notes.12345.tmp", true, false, false},
		{fmt.Sprintf(".project.xdev-%d-42.tmp", gone), false, true, true},
		{fmt.Sprintf(".project.xdev-%d-42.tmp", os.Getpid()), true, false, true},
		{".s.jsonl.12345.tmp", true, false, true}, // an older xdev's name made no directory
		{fmt.Sprintf("project.xdev-%d-42.tmp", gone), true, false, true},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if tt.dir {
			os.Mkdir(p, 0o700)
		} else {
			os.WriteFile(p, nil, 0o600)
		}
		if tt.old {
			os.Chtimes(p, old, old)
		}
		fi, _ := os.Stat(p)
		if got := Leftover(tt.name, fi); got != tt.want {
			t.Errorf("Leftover(%q, old %v, dir %v) = %v, want %v", tt.name, tt.old, tt.dir, got, tt.want)
		}
		os.Remove(p)
	}
}

// TestLinkMakesItsDirectory: a file created in missing directories
// appears with them, one to three levels deep, whether it is alone or
// many writers make the same directories at once (the later ones find
// the directory made and link into it); no temp directory is left, each
// file is whole, the directories are 0700, and a taken name is refused.
func TestLinkMakesItsDirectory(t *testing.T) {
	for round := range 40 {
		root := t.TempDir()
		depth := 1 + round%3
		dir := root
		for d := range depth {
			dir = filepath.Join(dir, fmt.Sprintf("p%d", d))
		}
		writers := 1 + round%7*3
		errs := make(chan error, writers)
		for w := range writers {
			go func() {
				errs <- Create(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", w)), content(fmt.Sprintf("writer %d\n", w)))
			}()
		}
		for range writers {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		for w := range writers {
			if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", w))); string(b) != fmt.Sprintf("writer %d\n", w) {
				t.Errorf("round %d: writer %d's file holds %q (%v)", round, w, b, err)
			}
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && IsTemp(d.Name()) {
				t.Errorf("round %d: %s left", round, p)
			}
			if err == nil && d.IsDir() && p != root {
				if fi, _ := d.Info(); fi.Mode().Perm() != 0o700 {
					t.Errorf("round %d: %s is %v", round, p, fi.Mode().Perm())
				}
			}
			return nil
		})
		if err := Create(filepath.Join(dir, "s0.jsonl"), content("again\n")); !errors.Is(err, fs.ErrExist) {
			t.Errorf("round %d: a taken name: %v", round, err)
		}
	}
}

// TestKilledBeforeItsDirectory: a writer killed as its new directory is
// about to take its name leaves no directory where readers look, only a
// temp directory that is a Leftover once the writer is gone (and not
// before).
func TestKilledBeforeItsDirectory(t *testing.T) {
	if root := os.Getenv("ATOMICFILE_DIR_CHILD"); root != "" {
		testHookBeforeRename = func() {
			os.WriteFile(filepath.Join(root, "..", "ready"), nil, 0o600)
			select {} // killed here
		}
		Create(filepath.Join(root, "project", "sub", "s.jsonl"), content("whole\n"))
		return
	}
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	os.Mkdir(root, 0o700)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledBeforeItsDirectory$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_DIR_CHILD="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(base, "ready")); err == nil {
			break
		}
		if i > 500 {
			cmd.Process.Kill()
			t.Fatal("the writer never got going")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 || !IsTemp(ents[0].Name()) {
		t.Fatalf("while the writer waits: %v", ents)
	}
	if fi, _ := ents[0].Info(); Leftover(ents[0].Name(), fi) {
		t.Errorf("%s is a leftover while its writer runs", ents[0].Name())
	}
	if b, err := os.ReadFile(filepath.Join(root, ents[0].Name(), "sub", "s.jsonl")); string(b) != "whole\n" {
		t.Errorf("the staged file holds %q (%v)", b, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	ents, _ = os.ReadDir(root)
	if len(ents) != 1 || !IsTemp(ents[0].Name()) {
		t.Fatalf("after the kill: %v", ents)
	}
	if fi, _ := ents[0].Info(); !Leftover(ents[0].Name(), fi) {
		t.Errorf("%s is not a leftover once its writer is gone", ents[0].Name())
	}
}
