package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

// xdevCommand is the test binary run as the xdev command (testscript.Main
// runs it so when it is called by that name), with env set.
func xdevCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xdev")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// bigClaude writes a Claude Code transcript of about mb MiB.
func bigClaude(t *testing.T, path string, mb int) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := strings.Repeat("lorem ipsum dolor sit amet ", 400)
	parent := "null"
	for i := 0; i < mb*1024*1024/(len(text)+400); i++ {
		role := "user"
		content := fmt.Sprintf(`%q`, text)
		if i%2 == 1 {
			role = "assistant"
			content = fmt.Sprintf(`[{"type":"text","text":%q}]`, text)
		}
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		fmt.Fprintf(f, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/work/big","sessionId":"bbbbbbbb-0000-4000-8000-000000000001","version":"2.0.0","type":%q,"message":{"role":%q,"content":%s},"uuid":%q,"timestamp":"2026-01-01T00:00:00.000Z"}`+"\n",
			parent, role, role, content, uuid)
		parent = `"` + uuid + `"`
	}
}

// leftovers lists what is in dir that should not be after a killed
// command: any file whose name is not a session's (temp files, lockfiles),
// any empty directory, and any temp directory (a new project directory
// not yet renamed into place), as "<path>/ (temp)".
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && atomicfile.IsTemp(d.Name()) {
			out = append(out, p+"/ (temp)")
			return fs.SkipDir
		}
		if d.IsDir() {
			if ents, _ := os.ReadDir(p); len(ents) == 0 && p != dir && p != filepath.Join(dir, "sessions") {
				out = append(out, p+"/ (empty)")
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") || strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// sweptLater reports whether a leftovers entry is a temp directory whose
// writer is gone: a kill between its making and its rename can leave one
// (no two syscalls are one), and the next write beside it removes it.
func sweptLater(entry string) bool {
	p, ok := strings.CutSuffix(entry, "/ (temp)")
	if !ok {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && atomicfile.Leftover(filepath.Base(p), fi)
}

// TestKilledCommandsLeaveNothing kills `xdev import` (and, with a
// PostgreSQL server, `xdev sync --pull`) at many points of their work:
// no temp file, lockfile or empty directory is left in the data dir or
// the temp dir, and every session file there is whole.
func TestKilledCommandsLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for seconds")
	}
	work := t.TempDir()
	data := filepath.Join(work, "agent")
	tmp := filepath.Join(work, "tmp")
	os.MkdirAll(filepath.Join(data, "sessions"), 0o700)
	os.MkdirAll(tmp, 0o700)
	src := filepath.Join(work, "claude", "projects", "-work-big", "bbbbbbbb-0000-4000-8000-000000000001.jsonl")
	bigClaude(t, src, 24)
	env := []string{"XDEV_DATA_DIR=" + data, "CLAUDE_CONFIG_DIR=" + filepath.Join(work, "claude"), "TMPDIR=" + tmp,
		"HOME=" + filepath.Join(work, "home"), "XDG_CACHE_HOME=" + filepath.Join(work, "cache")}

	kill := func(name string, args ...string) {
		for i, delay := range []time.Duration{2, 5, 10, 20, 35, 50, 80, 120, 160, 220, 300, 400} {
			cmd := xdevCommand(t, env, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay * time.Millisecond)
			cmd.Process.Kill()
			cmd.Wait()
			for _, dir := range []string{data, tmp} {
				if left := slices.DeleteFunc(leftovers(t, dir), sweptLater); len(left) > 0 {
					t.Errorf("%s killed after %v (run %d) left %q", name, delay*time.Millisecond, i, left)
				}
			}
		}
		// A temp directory a kill left is swept by the next write beside
		// it: after a run that finishes, nothing at all is left.
		if out, err := xdevCommand(t, env, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s, run whole: %v\n%s", name, err, out)
		}
		for _, dir := range []string{data, tmp} {
			if left := leftovers(t, dir); len(left) > 0 {
				t.Errorf("%s run whole after the killed runs left %q", name, left)
			}
		}
		files, _ := session.Files(data)
		for _, f := range files {
			if _, err := session.Verify(f.Path, nil); err != nil {
				t.Errorf("%s: a file the killed runs left does not read: %v", f.Path, err)
			}
		}
	}
	kill("import", "import", "--again", src)

	// Reading a Claude Code session converts it into its mirror in the
	// cache: killed mid-conversion (the source touched before each run,
	// so each converts), nothing is left in the temp dir or beside the
	// mirror files.
	for i, delay := range []time.Duration{5, 20, 50, 120, 250, 400} {
		now := time.Now().Add(time.Duration(i) * time.Second)
		os.Chtimes(src, now, now)
		for _, args := range [][]string{{"show", src}, {"export", "-o", filepath.Join(work, "out.md"), src}} {
			cmd := xdevCommand(t, env, args...)
			cmd.Stdout = nil
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay * time.Millisecond)
			cmd.Process.Kill()
			cmd.Wait()
			if left := leftovers(t, tmp); len(left) > 0 {
				t.Errorf("%s killed after %v left %q in the temp dir", args[0], delay*time.Millisecond, left)
			}
			mirrors, _ := filepath.Glob(filepath.Join(work, "cache", "xdev", "foreign", "*", "sessions"))
			for _, m := range mirrors {
				for _, l := range leftovers(t, m) {
					if !strings.HasSuffix(l, "/ (empty)") { // the cache's own directory may be there, empty
						t.Errorf("%s killed after %v left %q beside the mirror", args[0], delay*time.Millisecond, l)
					}
				}
			}
		}
	}
	if out, err := xdevCommand(t, env, "show", src).CombinedOutput(); err != nil || !strings.Contains(string(out), "lorem ipsum") {
		t.Errorf("show after the killed ones: %v\n%.300s", err, out)
	}
	if out, err := xdevCommand(t, env, "verify", "--json").CombinedOutput(); strings.Contains(string(out), `"leftover"`) {
		t.Errorf("verify after the killed imports finds leftovers: %s (%v)", out, err)
	}

	if _, err := pgtest.Shared(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Logf("sync --pull not killed: %v", err)
		return
	}
	db := pgtest.NewDB(t)
	if out, err := xdevCommand(t, env, "sync", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	pulled := filepath.Join(work, "pulled")
	os.MkdirAll(filepath.Join(pulled, "sessions"), 0o700)
	kill("sync --pull", "sync", "--pull", "--db", db, "--data-dir", pulled)
	for _, dir := range []string{pulled} {
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("sync --pull left %q", left)
		}
	}
}
