package serve

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
)

// TestServerRefuses: every route refuses a request without the token, or
// to another Host, or a state-changing one from another origin; no URL
// reaches a file the catalog did not list (traversal, encoded dots, a
// symbolic link in the sessions dir); no answer holds the token.
func TestServerRefuses(t *testing.T) {
	p := newPlace(t)
	path, _ := p.newSession(t, "/w/sec", "Secure", "the word is zanzibar", "ok")
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	os.WriteFile(outside, []byte("SECRET-OUTSIDE-THE-CATALOG\n"), 0o600)
	link := filepath.Join(session.SessionsDir(p.data), "--w-sec--", "link.jsonl")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	srv := p.serve(t)
	key := srv.keyOf(t, path)
	host := strings.TrimPrefix(srv.base, "http://")
	routes := []string{"/", "/search?q=zanzibar", "/s/" + key, "/s/" + key + "/after?id=x", "/s/" + key + "/export.md",
		"/s/" + key + "/export.html", "/usage", "/events", "/assets/app.js"}

	do := func(method, target string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.base+target, nil)
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		if got := resp.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("%s %s: CSP %q", method, target, got)
		}
		return resp.StatusCode, string(b[:n])
	}
	bearer := map[string]string{"Authorization": "Bearer " + srv.token}
	wrong := srv.token[:63] + map[bool]string{true: "1", false: "0"}[srv.token[63] == '0'] // one character off
	for _, r := range routes {
		if code, _ := do("GET", r, nil); code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d", r, code)
		}
		if code, _ := do("GET", r, map[string]string{"Authorization": "Bearer " + wrong}); code != http.StatusForbidden {
			t.Errorf("GET %s with a wrong token: %d", r, code)
		}
		if code, _ := do("GET", r, map[string]string{"Authorization": "Bearer " + srv.token, "Host": "evil.example:80"}); code != http.StatusForbidden {
			t.Errorf("GET %s to another Host: %d", r, code)
		}
		if code, _ := do("POST", r, map[string]string{"Authorization": "Bearer " + srv.token, "Origin": "http://evil.example"}); code != http.StatusForbidden {
			t.Errorf("cross-origin POST %s: %d", r, code)
		}
		if code, _ := do("POST", r, map[string]string{"Authorization": "Bearer " + srv.token, "Origin": "http://" + host}); code != http.StatusMethodNotAllowed {
			t.Errorf("same-origin POST %s: %d, want 405 (nothing here changes anything)", r, code)
		}
	}
	// The token is not in any answer.
	for _, r := range routes[:7] {
		code, body := srv.get(t, r)
		if strings.Contains(body, srv.token) {
			t.Errorf("GET %s (%d) holds the token", r, code)
		}
	}
	// Nothing outside the list is reachable.
	for _, target := range []string{
		"/s/../../../../etc/passwd", "/s/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/s/" + url.PathEscape(outside),
		"/s/" + url.PathEscape(link), "/assets/..%2f..%2fgo.mod", "/assets/../serve.go", "/assets/%2e%2e/guard.go",
		"/s/" + keyOf("xdev", outside), "/s/" + keyOf("xdev", link) + "/export.md", "/assets/layout.html",
		"/s/" + key + "/../../../etc/passwd", "/s/" + key + "?path=" + url.QueryEscape(outside),
	} {
		code, body := do("GET", target, bearer)
		if code == http.StatusOK && !strings.Contains(target, "?path=") || strings.Contains(body, "SECRET-OUTSIDE") || strings.Contains(body, "package serve") || strings.Contains(body, "root:") {
			t.Errorf("GET %s: %d %.80q", target, code, body)
		}
	}
	// The link to a file outside is not a session the list serves.
	for _, r := range srv.lib.Load().rows {
		if r.Path == link {
			code, body := srv.get(t, "/s/"+r.key)
			if strings.Contains(body, "SECRET-OUTSIDE") {
				t.Errorf("the symbolic link's target is served (%d)", code)
			}
		}
	}
}

// TestTokenExchange: the token in the URL becomes a cookie, and the
// browser is sent on to the URL without it.
func TestTokenExchange(t *testing.T) {
	p := newPlace(t)
	srv := p.serve(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.base + "/search?q=x&token=" + srv.token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/search?q=x" {
		t.Fatalf("%d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Value != srv.token {
		t.Fatalf("cookie %+v", ck)
	}
	req, _ := http.NewRequest("GET", srv.base+"/search?q=x", nil)
	req.AddCookie(ck[0])
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %d", resp.StatusCode)
	}
}
