package main

import (
	"os"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
)

// TestFromNamesEveryHarness: every command's --from takes every harness
// of the catalog, and its help and its error for a name it does not take
// name them all. (search's help and error named five of the eight it
// took, and list's error lost its last name.)
func TestFromNamesEveryHarness(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDEV_DATA_DIR", t.TempDir())
	for _, cmd := range [][]string{{"list"}, {"search", "word"}, {"index"}, {"usage"}, {"verify"}} {
		out, errOut, _ := xdev(t, "", cmd[0], "--help")
		line := "" // the description of -from, on the line after its name
		lines := strings.Split(out+errOut, "\n")
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "-from") && i+1 < len(lines) {
				line = lines[i+1]
			}
		}
		_, bad, code := xdev(t, "", append([]string{cmd[0], "--from", "nosuch"}, cmd[1:]...)...)
		if code != 2 {
			t.Errorf("%s --from nosuch: exit %d, %s", cmd[0], code, bad)
		}
		for _, h := range catalog.Every {
			if !strings.Contains(line, string(h)) {
				t.Errorf("%s --help does not name %s: %s", cmd[0], h, line)
			}
			if !strings.Contains(bad, " "+string(h)+",") && !strings.Contains(bad, " "+string(h)+" or all") {
				t.Errorf("%s's error for --from nosuch does not name %s: %s", cmd[0], h, bad)
			}
			if _, stderr, code := xdev(t, "", append([]string{cmd[0], "--from", string(h)}, cmd[1:]...)...); code == 2 {
				t.Errorf("%s --from %s: a usage error: %s", cmd[0], h, stderr)
			}
		}
	}
}

// TestRegistryNamesEveryHarness: the registry is the one list of
// harnesses. Each harness read in place has its --<harness>-dir flag on
// every command that reads sessions, and the README's sentence on --from
// names every harness.
func TestRegistryNamesEveryHarness(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "`--from` (")
	if i < 0 {
		t.Fatal("the README has no sentence on --from")
	}
	sentence := string(readme[i:])
	sentence = sentence[:strings.Index(sentence, ")")]
	for _, h := range catalog.Every {
		if !strings.Contains(sentence, "`"+string(h)+"`") {
			t.Errorf("the README's --from names no %s: %s", h, sentence)
		}
	}
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{"list", "search", "index", "usage", "verify", "show", "export", "import", "fork", "mcp", "serve"} {
		out, errOut, _ := xdev(t, "", cmd, "--help")
		for _, h := range catalog.Foreign {
			flag, _ := h.RootFlag()
			if !strings.Contains(out+errOut, "-"+flag+" ") {
				t.Errorf("xdev %s has no --%s", cmd, flag)
			}
		}
	}
}
