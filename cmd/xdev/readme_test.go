package main

import (
	"flag"
	"os"
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
