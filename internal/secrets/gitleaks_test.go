package secrets

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/testscale"
)

// oracle is what gitleaks finds in text.
func oracle(text string) []report.Finding {
	return secretstest.Gitleaks().DetectString(text)
}

// planted is, for every rule of gitleaks' default configuration that
// looks at content, up to perRule secrets made by the generator gitleaks
// makes its own examples with (reggen, from the rule's expression), each
// one that gitleaks itself finds on a line of its own.
func planted(seed int64, perRule int) (secrets []string, kinds map[string]int) {
	kinds = map[string]int{}
	set := loadRules()
	for _, r := range set.Rules {
		g, err := reggen.NewGenerator(r.Regex)
		if err != nil {
			continue
		}
		g.SetSeed(seed)
		for try := 0; try < 40*perRule && kinds[r.ID] < perRule; try++ {
			s := g.Generate(1)
			if strings.ContainsRune(s, 0) || len(oracle("\n"+s+"\n")) == 0 {
				continue
			}
			kinds[r.ID]++
			secrets = append(secrets, s)
		}
	}
	return secrets, kinds
}

// TestEveryRuleAgainstGitleaks: a secret of each rule, alone on a line,
// is masked so that gitleaks finds nothing in what is left, and nothing
// of it is left.
func TestEveryRuleAgainstGitleaks(t *testing.T) {
	secrets, kinds := planted(1, testscale.N(3, 8))
	t.Logf("%d secrets of %d kinds", len(secrets), len(kinds))
	if len(kinds) < 200 {
		t.Errorf("only %d of the rules' secrets could be made", len(kinds))
	}
	for _, s := range secrets {
		text := "\n" + s + "\n"
		masked, n := Default().Mask(text)
		if n == 0 {
			t.Errorf("%q: nothing masked (gitleaks: %s)", s, oracle(text)[0].RuleID)
			continue
		}
		for _, f := range oracle(masked) {
			t.Errorf("%q masked as %q: gitleaks finds %s %q", s, masked, f.RuleID, f.Secret)
		}
	}
}

// TestPlantedAmongText plants the secrets of every rule among lines of
// ordinary text, several to a text, and holds the masked text to having
// nothing gitleaks finds and none of the secrets gitleaks found.
func TestPlantedAmongText(t *testing.T) {
	skipUnderRace(t)
	secrets, _ := planted(2, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	filler := []string{"the build passed", "ran go test ./...", "let me read the config file", "", "ok", `{"a": 1}`, "export X=1"}
	for round := range testscale.N(2, 4) {
		var b strings.Builder
		for _, s := range secrets {
			if rng.IntN(3) == 0 {
				b.WriteString(filler[rng.IntN(len(filler))])
				b.WriteString([]string{"\n", " ", "\t"}[rng.IntN(3)])
			}
			b.WriteString(s)
			b.WriteString([]string{"\n", "\n\n", " \n"}[rng.IntN(3)])
		}
		checkMasked(t, fmt.Sprint("round ", round), b.String())
	}
}

// checkMasked holds Mask of text to leaving gitleaks nothing, and none of
// the secrets gitleaks found in it anywhere in it.
func checkMasked(t *testing.T, name, text string) (found []report.Finding) {
	t.Helper()
	want := oracle(text)
	masked, _ := Default().Mask(text)
	for _, f := range want {
		if strings.Contains(masked, f.Secret) && len(f.Secret) >= minRepeat {
			t.Errorf("%s: gitleaks' %s %q is still in the masked text", name, f.RuleID, f.Secret)
		}
	}
	for _, f := range oracle(masked) {
		t.Errorf("%s: gitleaks finds %s %q in the masked text (line %q)", name, f.RuleID, f.Secret, f.Line)
	}
	return want
}

// TestMasksTheRealFixtures holds Mask to leaving gitleaks nothing in
// every real fixture's bytes.
func TestMasksTheRealFixtures(t *testing.T) {
	skipUnderRace(t)
	root := realfixtures.Dir(t)
	total := 0
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || strings.ContainsRune(string(data[:min(len(data), 512)]), 0) {
			return nil // a database or an archive: read through its harness
		}
		// Line by line (a transcript's lines are JSON, whose strings hold
		// no newline), which gitleaks reads many times faster.
		for i, line := range strings.Split(string(data), "\n") {
			name := fmt.Sprintf("%s:%d", strings.TrimPrefix(p, root), i+1)
			for _, f := range checkMasked(t, name, line) {
				t.Logf("gitleaks: %s %s %.12s…", name, f.RuleID, f.Secret)
				total++
			}
		}
		return nil
	})
	t.Logf("gitleaks finds %d secrets in the real fixtures", total)
}

// skipUnderRace skips a test whose time is gitleaks' reading of many
// megabytes: minutes under the race detector, and nothing of it runs
// concurrently. .ci/run runs these without -race.
func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("gitleaks over megabytes under -race takes minutes; .ci/run runs this test without -race")
	}
}
