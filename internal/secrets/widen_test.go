package secrets

import (
	"strings"
	"testing"
)

// TestSecretsEndInText: a key gitleaks' rules find only before a quote,
// a space or a semicolon is found too where a transcript's text ends it
// otherwise: a closing tag, a comma, a bracket, an ampersand. Every rule
// whose end was widened is covered (the rewrite applies to its text).
func TestSecretsEndInText(t *testing.T) {
	widened := 0
	for _, r := range Default().set().Rules {
		if strings.Contains(r.Regex, gitleaksEnd) {
			widened++
			if !strings.Contains(widenEnd(r.Regex), endsInText) {
				t.Errorf("%s: not widened", r.ID)
			}
		}
	}
	if widened < 100 {
		t.Errorf("%d rules end as gitleaks' do; the rewrite found too few (did the form change?)", widened)
	}
	token := "hvs.g7EwdQ5l0wGWp1HFiqtgJ5j9Lvwin3n7_lXmm_bql2csb545cVEeoZypqUtr5YjTJMyli2r3rJ5Bi3lRs-ogK_NkzH"
	for _, text := range []string{
		"<task>use " + token + "</task>", "use " + token + ", then", "(" + token + ")", "[" + token + "]",
		"?t=" + token + "&x=1", "a|" + token + "|b", "{" + token + "}", "use " + token + " now",
	} {
		if got, _ := Default().Mask(text); strings.Contains(got, token) {
			t.Errorf("%q: masked as %q", text, got)
		}
	}
}
