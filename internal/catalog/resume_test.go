package catalog

import (
	"slices"
	"testing"

	"github.com/xdev/xdev/internal/foreign"
)

// TestResumeOf: a session is resumed by the command of the harness that
// made it, in its directory, as each harness's own CLI takes it; one of
// a harness that has none, a subagent's, and one whose id is not known
// say why there is none.
func TestResumeOf(t *testing.T) {
	const id, path, cwd = "0f3c6c1e-5b1a-4c2e-9d7f-2a1b3c4d5e6f", "/h/s/0f3c.jsonl", "/w/my project"
	for _, c := range []struct {
		h    Harness
		want string // Shell(); "" for none
	}{
		{Xdev, "cd '/w/my project' && omp --resume /h/s/0f3c.jsonl"},
		{Omp, "cd '/w/my project' && omp --resume /h/s/0f3c.jsonl"},
		{File, "cd '/w/my project' && omp --resume /h/s/0f3c.jsonl"},
		{Claude, "cd '/w/my project' && claude --resume " + id},
		{Codex, "cd '/w/my project' && codex resume " + id},
		{Pi, "cd '/w/my project' && pi --session /h/s/0f3c.jsonl"},
		{Copilot, "cd '/w/my project' && copilot --resume " + id},
		{Gemini, "cd '/w/my project' && gemini --resume " + id},
		{Opencode, "cd '/w/my project' && opencode --session " + id},
		{Qwen, "cd '/w/my project' && qwen --resume " + id},
		{Kimi, "cd '/w/my project' && kimi --session " + id},
		{Goose, "cd '/w/my project' && goose session --resume --session-id " + id},
		{Continue, ""}, {Cline, ""}, {Crush, ""}, {Aider, ""}, {DB, ""},
	} {
		x := ResumeOf(Row{Harness: c.h, ID: id, Path: path, Cwd: cwd})
		if got := x.Shell(); got != c.want {
			t.Errorf("%s: %q, want %q", c.h, got, c.want)
		}
		if (x.Argv == nil) != (x.Why != "") {
			t.Errorf("%s: a command %q and a reason %q", c.h, x.Argv, x.Why)
		}
	}
	for _, r := range []Row{
		{Harness: Claude, ID: id, Path: path, Cwd: cwd, Subagent: true},
		{Harness: Claude, Path: path, Cwd: cwd},
		{Harness: "nonesuch", ID: id, Path: path},
	} {
		if x := ResumeOf(r); x.Argv != nil || x.Why == "" {
			t.Errorf("%+v: %q (%q), want none and why", r, x.Argv, x.Why)
		}
	}
	// A directory that is not a path is not gone to.
	if x := ResumeOf(Row{Harness: Codex, ID: id, Cwd: "project"}); x.Dir != "" || x.Shell() != "codex resume "+id {
		t.Errorf("a relative directory: %q", x.Shell())
	}
}

// TestEveryHarnessSaysHowToResume: the registry's every harness has a
// command that resumes a session, or says why it has none.
func TestEveryHarnessSaysHowToResume(t *testing.T) {
	for _, k := range foreign.Kinds {
		if (k.Resume == nil) == (k.NoResume == "") {
			t.Errorf("%s: a Resume and a NoResume, or neither", k.Name)
		}
		if k.Resume != nil && !slices.Contains(k.Resume("ID", "PATH"), "ID") && !slices.Contains(k.Resume("ID", "PATH"), "PATH") {
			t.Errorf("%s: %q names no session", k.Name, k.Resume("ID", "PATH"))
		}
	}
}

// TestShellQuote: a word with only characters no shell gives a meaning
// is as it is; any other, in single quotes, its own quotes escaped.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/s.jsonl":     "/home/me/s.jsonl",
		"/tmp/a b.jsonl":       "'/tmp/a b.jsonl'",
		"/tmp/it's.jsonl":      `'/tmp/it'\''s.jsonl'`,
		"/tmp/$(rm -rf ~)":     "'/tmp/$(rm -rf ~)'",
		"":                     "''",
		"/x/`id`;echo\n.jsonl": "'/x/`id`;echo\n.jsonl'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
