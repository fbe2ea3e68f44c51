package serve

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestGuard: what passes the guard and what is refused, request by
// request, and the headers of every answer, refused or not.
func TestGuard(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const host = "127.0.0.1:7433"
	g := &Guard{Token: token, Hosts: Hosts(host), Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "page")
	})}
	cookie := &http.Cookie{Name: CookieName, Value: token}
	for _, tc := range []struct {
		name     string
		method   string
		target   string
		host     string
		header   map[string]string
		cookie   *http.Cookie
		code     int
		location string // a redirect's, when code is 303
	}{
		{name: "no token", target: "/", code: 403},
		{name: "a wrong token", target: "/?token=" + strings.Repeat("0", 64), code: 403},
		{name: "a token's prefix", target: "/?token=" + token[:63], code: 403},
		{name: "the token, once: a cookie, and off the URL", target: "/sessions?token=" + token + "&q=x", code: 303, location: "/sessions?q=x"},
		{name: "the cookie", target: "/sessions", cookie: cookie, code: 200},
		{name: "a wrong cookie", target: "/", cookie: &http.Cookie{Name: CookieName, Value: "x"}, code: 403},
		{name: "a bearer", target: "/", header: map[string]string{"Authorization": "Bearer " + token}, code: 200},
		{name: "localhost", target: "/", host: "localhost:7433", cookie: cookie, code: 200},
		{name: "::1", target: "/", host: "[::1]:7433", cookie: cookie, code: 200},
		{name: "upper case", target: "/", host: "LOCALHOST:7433", cookie: cookie, code: 200},
		{name: "DNS rebinding: another name", target: "/", host: "evil.example:7433", cookie: cookie, code: 403},
		{name: "another port", target: "/", host: "127.0.0.1:80", cookie: cookie, code: 403},
		{name: "no Host", target: "/", host: "-", cookie: cookie, code: 403},
		{name: "a rebinding name with the token", target: "/?token=" + token, host: "evil.example:7433", code: 403},
		{name: "POST without Origin", method: "POST", target: "/x", cookie: cookie, code: 403},
		{name: "POST from another origin", method: "POST", target: "/x", cookie: cookie,
			header: map[string]string{"Origin": "http://evil.example"}, code: 403},
		{name: "POST from another port", method: "POST", target: "/x", cookie: cookie,
			header: map[string]string{"Origin": "http://127.0.0.1:9999"}, code: 403},
		{name: "POST said cross-site", method: "POST", target: "/x", cookie: cookie,
			header: map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "cross-site"}, code: 403},
		{name: "POST from its own page", method: "POST", target: "/x", cookie: cookie,
			header: map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, code: 200},
		{name: "POST of its own origin without its token", method: "POST", target: "/x",
			header: map[string]string{"Origin": "http://" + host}, code: 403},
		{name: "DELETE from another origin", method: "DELETE", target: "/x", cookie: cookie,
			header: map[string]string{"Origin": "null"}, code: 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(cmp.Or(tc.method, "GET"), "http://"+host+tc.target, nil)
			r.Host = cmp.Or(tc.host, host)
			if tc.host == "-" {
				r.Host = ""
			}
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if tc.cookie != nil {
				r.AddCookie(tc.cookie)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			if w.Code != tc.code {
				t.Fatalf("%d, want %d: %s", w.Code, tc.code, w.Body)
			}
			h := w.Result().Header
			for _, k := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options", "Cache-Control"} {
				if h.Get(k) == "" {
					t.Errorf("no %s", k)
				}
			}
			if strings.Contains(h.Get("Content-Security-Policy"), "unsafe") {
				t.Errorf("the policy allows unsafe content: %s", h.Get("Content-Security-Policy"))
			}
			switch {
			case tc.code == 303:
				if got := h.Get("Location"); got != tc.location {
					t.Errorf("sent on to %q, want %q", got, tc.location)
				}
				c := w.Result().Cookies()
				if len(c) != 1 || c[0].Value != token || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
					t.Errorf("cookies %v", c)
				}
			case tc.code == 403:
				if strings.Contains(w.Body.String(), token) || w.Body.String() == "page" {
					t.Errorf("a refusal says %q", w.Body)
				}
			}
		})
	}
}

// TestGuardWithoutToken: a guard with no token refuses every request,
// even one that sends none.
// TestTokenRedirectStaysHere: the redirect that takes the token off the
// URL goes to a page of this server whatever the path (an open redirect
// would hand a phishing link the server's name): paths that a browser
// reads as another host, escaped or not, with any query.
func TestTokenRedirectStaysHere(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const host = "127.0.0.1:7433"
	g := &Guard{Token: token, Hosts: Hosts(host), Next: http.NotFoundHandler()}
	heads := []string{"/", "//", "///", "/\\", "\\", "/\\/", "//\\", "/%2F", "/%5C", "/%2f%2f", "/./", "/../", "/%09/", "/\t/"}
	tails := []string{"evil.example/", "evil.example", "evil.example:80/x", "@evil.example", "javascript:alert(1)", "sessions", ""}
	n := 0
	for _, head := range heads {
		for _, tail := range tails {
			for _, query := range []string{"", "&q=x", "&next=//evil.example"} {
				req := httptest.NewRequest("GET", "http://"+host+"/", nil)
				req.URL.Path = head + tail
				req.URL.RawPath = ""
				req.URL.RawQuery = "token=" + token + query
				rec := httptest.NewRecorder()
				g.ServeHTTP(rec, req)
				n++
				loc := rec.Header().Get("Location")
				if rec.Code != http.StatusSeeOther {
					continue // not a path the server takes
				}
				u, err := url.Parse(loc)
				if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(loc, "/") ||
					len(loc) > 1 && (loc[1] == '/' || loc[1] == '\\') {
					t.Errorf("path %q: redirect to %q leaves the server", head+tail, loc)
				}
			}
		}
	}
	t.Logf("%d token redirects", n)
}

func TestGuardWithoutToken(t *testing.T) {
	g := &Guard{Hosts: Hosts("127.0.0.1:1"), Next: http.NotFoundHandler()}
	for _, target := range []string{"/", "/?token=", "/?token=x"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:1"+target, nil)
		r.AddCookie(&http.Cookie{Name: CookieName, Value: ""})
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != 403 {
			t.Errorf("%s: %d", target, w.Code)
		}
	}
}

// TestHosts: the names a server answers under.
func TestHosts(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:7433", []string{"127.0.0.1:7433", "localhost:7433", "[::1]:7433"}},
		{"[::1]:80", []string{"[::1]:80", "127.0.0.1:80", "localhost:80"}},
		{"localhost:5", []string{"localhost:5", "127.0.0.1:5", "[::1]:5"}},
		{"192.168.1.9:7433", []string{"192.168.1.9:7433"}},
	} {
		if got := Hosts(tc.addr); !slices.Equal(got, tc.want) {
			t.Errorf("Hosts(%q) = %q, want %q", tc.addr, got, tc.want)
		}
		if got := BrowserAddr(tc.addr); got != tc.addr {
			t.Errorf("BrowserAddr(%q) = %q", tc.addr, got)
		}
	}
	// Every interface: the Host a browser sends for any address of this
	// machine, and for the loopback names and the unspecified address, is
	// answered; the URL to open is the loopback one.
	addrs, _ := net.InterfaceAddrs()
	for _, addr := range []string{"0.0.0.0:7433", "[::]:7433", ":7433"} {
		got := Hosts(addr)
		want := []string{"127.0.0.1:7433", "localhost:7433", "[::1]:7433", "0.0.0.0:7433", "[::]:7433"}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				want = append(want, strings.ToLower(net.JoinHostPort(n.IP.String(), "7433")))
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("Hosts(%q) lacks %q: %q", addr, w, got)
			}
		}
		if slices.Contains(got, "evil.example:7433") || slices.ContainsFunc(got, func(h string) bool { return !strings.HasSuffix(h, ":7433") }) {
			t.Errorf("Hosts(%q) = %q", addr, got)
		}
		if b := BrowserAddr(addr); b != "127.0.0.1:7433" {
			t.Errorf("BrowserAddr(%q) = %q", addr, b)
		}
	}
	if a, b := NewToken(), NewToken(); len(a) != 64 || a == b {
		t.Errorf("tokens %q, %q", a, b)
	}
}
