package serve

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/testscale"
)

// TestNoSecretOnAPage plants secrets of every kind gitleaks knows into
// sessions of xdev's, Claude Code's and Codex's formats and fetches every
// page that shows transcript text: the list, a search, each session's
// page and its downloads. No page holds a planted secret, nor anything
// gitleaks finds; the server has no way to reveal them.
func TestNoSecretOnAPage(t *testing.T) {
	planted := secretstest.Secrets(t, testscale.N(60, 400))
	p := newPlace(t)
	files := secretstest.Plant(t, p.data, p.roots, planted)
	r := p.serve(t)
	var keys []string // the server's own names of sessions, which gitleaks takes for keys
	get := func(path string) string {
		t.Helper()
		code, body := r.get(t, path)
		if code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, code, body)
		}
		checked := body
		for _, k := range keys {
			checked = strings.ReplaceAll(checked, k, "KEY")
		}
		secretstest.Check(t, "GET "+path, checked, planted)
		return body
	}
	for _, f := range files {
		keys = append(keys, r.waitListed(t, f))
	}
	get("/")
	if body := get("/search?q=" + url.QueryEscape(secretstest.Word)); !strings.Contains(body, "REDACTED") {
		t.Errorf("the search page shows no masked secret")
	}
	for _, f := range files {
		key := r.waitListed(t, f)
		for _, suffix := range []string{"", "/export.md", "/export.html"} {
			get("/s/" + key + suffix)
		}
	}
	// The secrets page names each, masked, once its scan is done: every
	// page of it, and each kind's.
	body := get("/secrets")
	for strings.Contains(body, "being read") {
		time.Sleep(20 * time.Millisecond)
		body = get("/secrets")
	}
	shown := strings.Count(body, "[REDACTED ")
	for page := 2; strings.Contains(body, `rel="next"`); page++ {
		body = get("/secrets?page=" + strconv.Itoa(page))
		shown += strings.Count(body, "[REDACTED ")
	}
	t.Logf("the secrets page shows %d masked secrets, %d planted", shown, len(planted))
	if shown < len(planted) {
		t.Errorf("the secrets page shows %d masked secrets of %d planted", shown, len(planted))
	}
	get("/secrets?kind=" + url.QueryEscape(strings.Fields(strings.SplitN(body, "[REDACTED ", 2)[1])[0]) + "&harness=claude")
}
