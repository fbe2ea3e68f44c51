package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
)

func TestPickNeedsATerminal(t *testing.T) {
	t.Setenv("XDEV_DATA_DIR", t.TempDir())
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"pick"}, exitError, "the picker needs a terminal: stdout is not one"},
		{[]string{"pick", "refactor"}, exitError, "xdev pick --print QUERY"},
		{[]string{"pick", "--first", "x"}, exitUsage, "give --print too"},
		{nil, exitUsage, "Usage: xdev <command>"}, // no terminal: the help, as before
	} {
		out, errs, code := xdev(t, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errs, tc.says) {
			t.Errorf("xdev %q: %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out, errs, tc.code, tc.says)
		}
	}
}

// TestPickPrintInAScript runs `xdev pick --print QUERY` as a script
// does, with no controlling terminal (a new session): no picker, the
// best match's command; with no query, the error that says so.
func TestPickPrintInAScript(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDEV_DATA_DIR", data)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", "/w/app", "--title", "Fix the parser")
	if code != 0 {
		t.Fatal(errs)
	}
	path := strings.TrimSpace(out)
	bin := buildXdev(t)
	for _, tc := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"pick", "--print", "parser"}, "cd /w/app && omp --resume " + path + "\n", 0},
		{[]string{"pick", "--print"}, "", 1},
		{[]string{"pick", "--print", "nothing holds this"}, "", 1},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if stdout.String() != tc.out || code != tc.code {
			t.Errorf("xdev %q: %d %q %q, want %d %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out)
		}
	}
}

// pickable are the sessions of the real home `xdev list` shows, by
// harness: the rows a person picks from, and the resume command of each.
type pickRow struct {
	listed
	Cwd  string `json:"cwd"`
	want catalog.Resume
}

func pickable(t *testing.T) []pickRow {
	t.Helper()
	out, errs, code := xdev(t, "", "list", "--all", "--json")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errs)
	}
	var rows []pickRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	// An id that is in another row's is not a query for one session.
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	var out2 []pickRow
	for _, r := range rows {
		n := 0
		for _, id := range ids {
			if strings.Contains(strings.ToLower(id), strings.ToLower(r.ID)) {
				n++
			}
		}
		if r.ID == "" || n > 1 {
			continue
		}
		r.want = catalog.ResumeOf(catalog.Row{Harness: catalog.Harness(r.Harness), ID: r.ID, Path: r.Path, Cwd: r.Cwd, Subagent: r.Subagent})
		out2 = append(out2, r)
	}
	return out2
}

// TestPickPrintsTheResume picks each session of every harness's real
// sessions by its id, as a script does (--print --first), and checks the
// command printed: the harness's own, in the session's directory.
func TestPickPrintsTheResume(t *testing.T) {
	realHome(t)
	seen := map[string]int{}
	for _, r := range pickable(t) {
		out, errs, code := xdev(t, "", "pick", "--print", "--first", r.ID)
		if r.want.Argv == nil {
			if code != exitError || !strings.Contains(errs, r.want.Why) {
				t.Errorf("%s %s: %d %q %q, want it to say %q", r.Harness, r.ID, code, out, errs, r.want.Why)
			}
			continue
		}
		if want := secrets.Mask(r.want.Shell()) + "\n"; code != 0 || out != want {
			t.Errorf("%s %s: %d %q %s, want %q", r.Harness, r.ID, code, out, errs, want)
		}
		seen[r.Harness]++
	}
	for _, h := range catalog.Every {
		if k, _ := catalogKind(h); h != catalog.Omp && k && seen[string(h)] == 0 {
			t.Errorf("no %s session was picked: %v", h, seen)
		}
	}
}

// catalogKind reports whether h has a resume command (else its sessions
// say why not).
func catalogKind(h catalog.Harness) (bool, bool) {
	x := catalog.ResumeOf(catalog.Row{Harness: h, ID: "x", Path: "/x", Cwd: "/"})
	return x.Argv != nil, true
}

// tmuxSession is a terminal of a private tmux server, w×h, running a
// command: the whole program as a person meets it.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed: .ci/run installs it")
		}
		t.Skip("tmux is not installed")
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux")}
	s.run("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v %s", args, err, out)
	}
	return string(out)
}

// screen is what the terminal shows.
func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p") }

// waitFor waits until the screen shows want, and returns it.
func (s *tmuxSession) waitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := s.screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %s:\n%s", what, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxSession) keys(keys ...string) { s.run(append([]string{"send-keys"}, keys...)...) }
func (s *tmuxSession) text(text string)    { s.run("send-keys", "-l", text) }

// startEnv is the environment the tests started with: go build runs in
// it, not in a test's home, whose empty caches would build every package
// anew (or fail, offline).
var startEnv = os.Environ()

// startDir is the package's directory, where the tests start.
var startDir, _ = os.Getwd()

// built is the command, built once for the tests that run it as a
// process (removed by TestMain).
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// buildXdev is the command built into a temp dir, once.
func buildXdev(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "xdev-test-bin"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "xdev")
		cmd := exec.Command("go", "build", "-o", built.bin, ".")
		cmd.Env, cmd.Dir = startEnv, startDir
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// TestPickInATerminal runs `xdev pick --print` in a real terminal on
// every harness's real sessions, as a shell function does (the picker on
// the terminal, the command to stdout): types a session's id, sees it
// selected, presses Enter and reads the command.
func TestPickInATerminal(t *testing.T) {
	work := realHome(t)
	bin := buildXdev(t)
	byHarness := map[string]pickRow{}
	for _, r := range pickable(t) {
		if _, ok := byHarness[r.Harness]; !ok && r.want.Argv != nil {
			byHarness[r.Harness] = r
		}
	}
	if len(byHarness) < 8 {
		t.Fatalf("resumable sessions of %d harnesses only", len(byHarness))
	}
	for h, r := range byHarness {
		t.Run(h, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			s := newTmux(t, 160, 48, fmt.Sprintf("cd %s && %s pick --print >%s; echo exit=$? >>%s; sleep 60",
				catalog.ShellQuote(work), catalog.ShellQuote(bin), out, out))
			s.waitFor("the list", func(screen string) bool {
				return strings.Contains(screen, "› ") && !strings.Contains(screen, "listing…")
			})
			s.text(r.ID)
			s.waitFor("the session selected", func(screen string) bool {
				return strings.Contains(screen, " 1/") && strings.Contains(screen, secrets.Mask(r.want.Argv[0]))
			})
			s.keys("Enter")
			var got []byte
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(string(got), "exit=") && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				got, _ = os.ReadFile(out)
			}
			if want := secrets.Mask(r.want.Shell()) + "\nexit=0\n"; string(got) != want {
				t.Errorf("printed %q, want %q\n%s", got, want, s.screen())
			}
		})
	}
}

// TestPickFrameInATerminal draws the picker at 80×24 over sessions whose
// titles and messages would take a terminal over, and checks what the
// terminal shows: every line within the width, the escapes shown, not
// obeyed, the layout whole after a resize.
func TestPickFrameInATerminal(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDEV_DATA_DIR", data)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	titles := []string{"日本語のタイトル wide", "e\u0301\u0301 combining", "\u202eevil reversed\u202c", "שלום עולם rtl", "👨‍👩‍👧‍👦 family", "takeover"}
	var last string
	for k, title := range titles {
		out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", fmt.Sprintf("/w/p%d", k), "--title", title)
		if code != 0 {
			t.Fatalf("new: %s", errs)
		}
		last = strings.TrimSpace(out)
		time.Sleep(10 * time.Millisecond) // newest last: the takeover is selected
	}
	// What the selected session's preview shows: a message that would
	// clear the screen, set the window's title and write the clipboard.
	hostile := "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07 after"
	msg, _ := json.Marshal(map[string]any{"type": "message", "message": map[string]any{"role": "user", "content": hostile, "timestamp": 1}})
	if _, errs, code := xdev(t, string(msg)+"\n", "append", last); code != 0 {
		t.Fatalf("append: %s", errs)
	}
	bin := buildXdev(t)
	s := newTmux(t, 80, 24, fmt.Sprintf("%s pick; sleep 60", catalog.ShellQuote(bin)))
	done := func(screen string) bool { return strings.Contains(screen, "after") }
	check := func(screen string, w, h int) {
		t.Helper()
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		if len(lines) != h {
			t.Errorf("%d lines, want %d:\n%s", len(lines), h, screen)
		}
		for _, want := range []string{`\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07 after`, "日本語のタイトル wide", `\u202eevil reversed\u202c`, "שלום עולם rtl", "› xdev"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the screen does not show %q:\n%s", want, screen)
			}
		}
		if title := s.run("display-message", "-p", "#{pane_title}"); strings.Contains(title, "pwned") {
			t.Errorf("a message set the terminal's title: %q", title)
		}
		if buf, _ := exec.Command("tmux", "-S", s.socket, "show-buffer").Output(); strings.Contains(string(buf), "evil") {
			t.Errorf("a message wrote the clipboard: %q", buf)
		}
	}
	check(s.waitFor("the preview", done), 80, 24)
	s.run("resize-window", "-x", "130", "-y", "30")
	check(s.waitFor("the frame at 130×30", func(screen string) bool { return done(screen) && strings.Contains(screen, "│") }), 130, 30)
	s.keys("Escape")
	s.waitFor("the picker gone", func(screen string) bool { return !strings.Contains(screen, "6/6") })
}

// Ctrl-E's export writes a new file beside the user's, never over one.
func TestPickExportKeepsWhatIsThere(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDEV_DATA_DIR", data)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", "/w/app", "--title", "Fix the parser")
	if code != 0 {
		t.Fatal(errs)
	}
	path := strings.TrimSpace(out)
	work := t.TempDir()
	t.Chdir(work)
	o := &pickOptions{store: &storeFlags{}, bin: buildXdev(t)}
	row := catalog.Row{Harness: catalog.Xdev, ID: "0123456789", Path: path}
	mine := filepath.Join(work, "xdev-01234567.md")
	os.WriteFile(mine, []byte("mine"), 0o600)
	for _, want := range []string{"xdev-01234567-2.md", "xdev-01234567-3.md"} {
		said, err := o.export(t.Context(), row)
		if err != nil || said != "exported to "+want {
			t.Fatalf("%q %v, want it exported to %s", said, err, want)
		}
		if b, err := os.ReadFile(filepath.Join(work, want)); err != nil || !strings.Contains(string(b), "Fix the parser") {
			t.Errorf("%s: %q %v", want, b, err)
		}
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine" {
		t.Errorf("the user's file became %q", b)
	}
}
