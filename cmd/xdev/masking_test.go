package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/testscale"
)

// TestNoSecretLeaves plants secrets of every kind gitleaks knows into
// sessions of every harness format xdev reads (xdev's own, Claude Code's,
// Codex's, pi's, Copilot CLI's, Gemini CLI's, Qwen Code's, Continue's,
// Kimi CLI's, Cline's, opencode's database), in
// user text, assistant text, thinking, tool calls' arguments, tool
// results, titles and summaries, and runs every reading command a person
// uses on them: not one planted secret is in any output, and gitleaks
// finds nothing there. show --reveal and export --reveal give them back.
func TestNoSecretLeaves(t *testing.T) {
	n := testscale.N(60, 400)
	planted := secretstest.Secrets(t, n)
	if len(planted) < min(40, n*2/3) { // gitleaks has ~210 kinds to draw from
		t.Fatalf("only %d secrets could be planted", len(planted))
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	data := filepath.Join(home, ".xdev", "agent")
	t.Setenv("XDEV_DATA_DIR", data)
	roots := map[string]string{"claude": filepath.Join(home, ".claude"), "codex": filepath.Join(home, ".codex"), "pi": filepath.Join(home, ".pi", "agent"),
		"copilot": filepath.Join(home, ".copilot"), "gemini": filepath.Join(home, ".gemini"), "opencode": filepath.Join(home, ".local", "share", "opencode"), "qwen": filepath.Join(home, ".qwen"),
		"continue": filepath.Join(home, ".continue"), "kimi": filepath.Join(home, ".kimi"),
		"cline": filepath.Join(home, ".cline", "data"), "crush": filepath.Join(home, ".local", "share", "crush"),
		"goose": filepath.Join(home, ".local", "share", "goose"), "aider": filepath.Join(home, ".aider")}
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "CONTINUE_GLOBAL_DIR", "KIMI_SHARE_DIR", "CLINE_DIR",
		"CRUSH_GLOBAL_DATA", "GOOSE_PATH_ROOT", "XDEV_PROJECTS"} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	files := secretstest.Plant(t, data, roots, planted)
	for _, name := range files {
		for _, args := range [][]string{
			{"show", name}, {"show", "--full", name}, {"show", "--json", name}, {"show", "--tree", name}, {"show", "--tree", "--json", name},
			{"export", name}, {"export", "--format", "html", "--full", name},
		} {
			out, errs, code := xdev(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			secretstest.Check(t, strings.Join(args, " "), out+errs, planted)
		}
		out, _, _ := xdev(t, "", "show", "--reveal", "--full", name)
		out2, _, _ := xdev(t, "", "export", "--reveal", name)
		revealed := 0
		for _, s := range planted {
			if strings.Contains(out, s) && strings.Contains(out2, s) {
				revealed++
			}
		}
		if revealed == 0 {
			t.Errorf("show and export --reveal of %s revealed nothing", name)
		}
	}
	for _, args := range [][]string{
		{"list", "--all"}, {"list", "--all", "--json"}, {"search", secretstest.Word}, {"search", "--json", secretstest.Word},
		{"search", "--limit", "500", secretstest.Word},
	} {
		out, errs, code := xdev(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if args[0] == "search" && !strings.Contains(out, "REDACTED") {
			t.Errorf("%v: no hit shows a masked secret:\n%s", args, out)
		}
		secretstest.Check(t, strings.Join(args, " "), out+errs, planted)
	}
	// xdev secrets names each one, masked, and exits 3.
	for _, args := range [][]string{{"secrets"}, {"secrets", "--json"}} {
		out, errs, code := xdev(t, "", args...)
		if code != exitProblems {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitProblems, errs)
		}
		secretstest.Check(t, strings.Join(args, " "), out+errs, planted)
		if n := strings.Count(out, "[REDACTED "); n < len(planted) {
			t.Errorf("%v: %d secrets named of %d planted", args, n, len(planted))
		}
	}
	// xdev sync pushes them masked: what a pull writes, and what the
	// store shows and finds, holds none; --raw pushes them as they are.
	db := pgtest.NewDB(t)
	out, errs, code := xdev(t, "", "sync", "--db", db)
	if code != 0 || !strings.Contains(out, "secrets masked") {
		t.Fatalf("sync: exit %d: %s%s", code, out, errs)
	}
	// What the store holds, read back with psql: lines, paths, titles,
	// directories, and the origin's record of its pushes.
	for _, q := range []string{
		`SELECT convert_from(line, 'UTF8') FROM xdev.lines`,
		`SELECT path, cwd, title, id FROM xdev.sessions`,
		`SELECT path FROM xdev.pushes`,
	} {
		secretstest.Check(t, "psql "+q, pgtest.Psql(t, db, q), planted)
	}
	// A pull into the data dir the sessions came from finds each file,
	// a path that holds a key too: nothing new is written.
	before, _ := filepath.Glob(filepath.Join(data, "sessions", "*", "*.jsonl"))
	if out, errs, code := xdev(t, "", "sync", "--pull", "--db", db); code != 0 {
		t.Fatalf("sync --pull into the origin: exit %d: %s%s", code, out, errs)
	}
	if after, _ := filepath.Glob(filepath.Join(data, "sessions", "*", "*.jsonl")); len(after) != len(before) {
		t.Errorf("a pull into the origin's data dir made %d files of %d", len(after), len(before))
	}
	pulled := filepath.Join(home, "pulled")
	if out, errs, code := xdev(t, "", "sync", "--pull", "--db", db, "--data-dir", pulled); code != 0 {
		t.Fatalf("sync --pull: exit %d: %s%s", code, out, errs)
	}
	pulledFiles := 0
	filepath.WalkDir(pulled, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			secretstest.Check(t, "pulled "+p, string(b), planted)
			pulledFiles++
		}
		return nil
	})
	if pulledFiles == 0 {
		t.Error("sync --pull wrote no session")
	}
	for _, args := range [][]string{{"list", "--db", db}, {"search", "--db", db, secretstest.Word}} {
		out, errs, code := xdev(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		secretstest.Check(t, strings.Join(args, " "), out+errs, planted)
	}
	if out, errs, code := xdev(t, "", "sync", "--raw", "--db", db); code != 0 || strings.Contains(out, "masked") {
		t.Errorf("sync --raw: exit %d: %s%s", code, out, errs)
	}
	t.Logf("%d secrets planted in %d sessions", len(planted), len(files))
}
