package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeUsage holds the README's Usage section to the command table:
// every command is named there, and its sentence on --json lists exactly
// the commands that take the flag (issue 22 found search, index, import,
// sync and context missing, and --json claimed for commands without it).
func TestReadmeUsage(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "## Usage")
	end := strings.Index(readme[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README has no Usage section")
	}
	usage := readme[start : start+1+end]
	m := regexp.MustCompile(`(?s)The commands\s+that print sessions or results \(([^)]*)\) take\s+` + "`--json`" + `; the others do not\s+\(([^)]*)\)`).FindStringSubmatch(usage)
	if m == nil {
		t.Fatal("the Usage section does not say which commands take --json")
	}
	words := regexp.MustCompile(`[a-z]+`)
	claimsJSON := map[string]bool{}
	for _, w := range words.FindAllString(m[1], -1) {
		claimsJSON[w] = true
	}
	claimsNoJSON := map[string]bool{}
	for _, w := range words.FindAllString(m[2], -1) {
		claimsNoJSON[w] = true
	}
	for _, g := range commandGroups {
		for _, c := range g.commands {
			if !regexp.MustCompile(`\bxdev ` + c.name + `\b`).MatchString(usage) {
				t.Errorf("the README's Usage does not name xdev %s", c.name)
			}
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.options().define(fs)
			hasJSON := fs.Lookup("json") != nil
			if hasJSON && !claimsJSON[c.name] || !hasJSON && claimsJSON[c.name] {
				t.Errorf("xdev %s: takes --json %v, the README says %v", c.name, hasJSON, claimsJSON[c.name])
			}
			if !hasJSON && !claimsNoJSON[c.name] {
				t.Errorf("xdev %s takes no --json, and the README does not list it among the others", c.name)
			}
		}
	}
}

// TestReadmeExamples runs the README's examples on the bundled samples as
// they are written (the two blocks after "Examples on the bundled
// samples", with $XDEV_DATA_DIR set as the first says, /tmp/ a temp dir):
// each succeeds, and each that shows or finds something shows something.
// (The search examples once found nothing in the samples.)
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "Examples on the bundled samples:")
	end := strings.Index(readme[start:], "What every agent cost")
	if start < 0 || end < 0 {
		t.Fatal("the README's examples are not where this test looks")
	}
	data := filepath.Join(t.TempDir(), "omp")
	if err := os.CopyFS(data, os.DirFS("../../internal/session/testdata/omp")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDEV_DATA_DIR", data)
	tmp := t.TempDir()
	ran := 0
	for _, line := range strings.Split(readme[start:start+end], "\n") {
		cmd, ok := strings.CutPrefix(line, "    xdev ")
		if !ok {
			continue
		}
		if k := strings.Index(cmd, "  #"); k >= 0 {
			cmd = cmd[:k]
		}
		args := shellWords(t, strings.ReplaceAll(cmd, "/tmp/", tmp+"/"))
		out, errs, code := xdev(t, "", args...)
		ran++
		if code != 0 {
			t.Errorf("xdev %s: exit %d: %s", cmd, code, errs)
			continue
		}
		if (args[0] == "search" || args[0] == "show") && strings.TrimSpace(out) == "" || strings.TrimSpace(out) == "[]" {
			t.Errorf("xdev %s: nothing shown", cmd)
		}
	}
	if ran < 8 {
		t.Errorf("ran %d examples", ran)
	}
}
