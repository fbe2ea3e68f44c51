package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// xdev runs the command in-process and returns stdout, stderr and the exit
// code.
func xdev(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(newEnv(strings.NewReader(stdin), &out, &errb, false, 100), args)
	return out.String(), errb.String(), code
}

// TestPlumbing drives the commands a script uses to make xdev write:
// new, append, title, branch, then reads the result back with context.
func TestPlumbing(t *testing.T) {
	data := t.TempDir()
	out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", "/opt/app", "--title", "First")
	if code != 0 {
		t.Fatalf("new: %d %s", code, errs)
	}
	path := strings.TrimSpace(out)
	if !strings.HasPrefix(path, filepath.Join(data, "sessions", "--opt-app--")+"/") || !strings.HasSuffix(path, ".jsonl") {
		t.Fatalf("new printed %q", path)
	}
	entries := `{"type":"message","message":{"role":"user","content":"hello","timestamp":1}}
{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":2}}
`
	out, errs, code = xdev(t, entries, "append", path)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 2 {
		t.Fatalf("append: %d %q %s", code, out, errs)
	}
	if _, errs, code = xdev(t, "", "title", path, "Second title"); code != 0 {
		t.Fatalf("title: %s", errs)
	}
	if _, errs, code = xdev(t, "", "branch", path, ids[0]); code != 0 {
		t.Fatalf("branch: %s", errs)
	}
	out, errs, code = xdev(t, "", "context", "--json", path)
	if code != 0 {
		t.Fatalf("context: %s", errs)
	}
	var ctx struct {
		LeafID, Title, TitleSource, Model string
		Messages                          []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Title != "Second title" || ctx.TitleSource != "manual" || len(ctx.Messages) != 1 || ctx.Messages[0]["content"] != "hello" {
		t.Errorf("context = %+v", ctx)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("not a session\n"), 0o600)
	tests := []struct {
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{[]string{"nope"}, "", exitUsage, `unknown command "nope"`},
		{[]string{"context"}, "", exitUsage, "want one FILE"},
		{[]string{"context", bad}, "", exitError, bad + ": line 1: no session header"},
		{[]string{"context", filepath.Join(dir, "missing.jsonl")}, "", exitError, "no such file"},
		{[]string{"append", bad}, "{}", exitError, "no session header"},
		{[]string{"title", "--bogus", bad, "x"}, "", exitUsage, "flag provided but not defined"},
	}
	for _, tt := range tests {
		_, stderr, code := xdev(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("xdev %v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.stderr)
		}
	}
	if b, _ := os.ReadFile(bad); string(b) != "not a session\n" {
		t.Error("a refused file was changed")
	}
}

// TestConcurrentAppendCommands is the reproduction: two loops of
// 200 `xdev append F` at once, with a retitle loop running too. Each
// command opens the file afresh, as separate processes do. Every message
// must reach the resume context: before the fix, 322 of 400 did (214 with
// the retitles).
func TestConcurrentAppendCommands(t *testing.T) {
	data := t.TempDir()
	out, errs, code := xdev(t, "", "new", "--data-dir", data, "--cwd", "/work/app")
	if code != 0 {
		t.Fatal(errs)
	}
	path := strings.TrimSpace(out)
	var wg sync.WaitGroup
	for loop := range 2 {
		wg.Go(func() {
			for i := range 200 {
				line := fmt.Sprintf(`{"type":"message","message":{"role":"user","content":"loop %d message %d","timestamp":1}}`, loop, i)
				if _, errs, code := xdev(t, line, "append", path); code != 0 {
					t.Errorf("append: %s", errs)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			if _, errs, code := xdev(t, "", "retitle", path, fmt.Sprintf("Title %d", i)); code != 0 {
				t.Errorf("retitle: %s", errs)
				return
			}
		}
	})
	wg.Wait()
	out, errs, code = xdev(t, "", "context", "--json", path)
	if code != 0 {
		t.Fatal(errs)
	}
	var ctx struct{ Messages []map[string]any }
	if err := json.Unmarshal([]byte(out), &ctx); err != nil {
		t.Fatal(err)
	}
	if len(ctx.Messages) != 400 {
		t.Errorf("%d of 400 messages reach the resume context", len(ctx.Messages))
	}
	if _, errs, code := xdev(t, "", "verify", path); code != 0 {
		t.Errorf("verify: %s", errs)
	}
}
