package recall

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/testscale"
)

// TestNoSecretInResults plants secrets of every kind gitleaks knows into
// sessions of xdev's, Claude Code's and Codex's formats and calls every
// tool that returns transcript text: neither a result's text nor its
// structured content holds a planted secret, nor anything gitleaks finds.
// The server has no way to reveal them.
func TestNoSecretInResults(t *testing.T) {
	planted := secretstest.Secrets(t, testscale.N(60, 400))
	m := newMachine(t)
	files := secretstest.Plant(t, m.Data, m.Roots, planted)
	check := func(what string, args any) {
		t.Helper()
		res, err := m.call(t, what, args)
		if err != nil {
			t.Fatalf("%s %v: %v", what, args, err)
		}
		structured, _ := json.Marshal(res.StructuredContent)
		secretstest.Check(t, what, textOf(res)+"\n"+string(structured), planted)
		if what == "search_sessions" && !strings.Contains(textOf(res), "REDACTED") {
			t.Errorf("search_sessions: no hit shows a masked secret:\n%s", textOf(res))
		}
	}
	check("search_sessions", map[string]any{"query": secretstest.Word, "limit": 100})
	check("list_sessions", map[string]any{"limit": 100})
	for _, f := range files {
		check("get_session", map[string]any{"session": f})
		check("get_context", map[string]any{"session": f})
	}
}
