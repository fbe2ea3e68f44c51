package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CookieName is the cookie the token is kept in.
const CookieName = "xdev_token"

// ContentSecurityPolicy is the policy of every answer.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// NewToken is a new random token: 32 bytes from the system's generator,
// in hex.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Hosts are the Host header values a server listening at addr (host:port)
// answers: the address itself; for a loopback address every loopback
// name at its port; for the unspecified address (0.0.0.0, ::), which
// listens on every interface, the loopback names and every address of
// this machine's interfaces. Names other than localhost are never
// answered: a name is what DNS rebinding would lend another site.
func Hosts(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{strings.ToLower(addr)}
	}
	out := []string{strings.ToLower(net.JoinHostPort(host, port))}
	add := func(h string) {
		if hp := strings.ToLower(net.JoinHostPort(h, port)); !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	ip := net.ParseIP(host)
	if ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) || host == "" || strings.EqualFold(host, "localhost") {
		for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
			add(h)
		}
	}
	if ip != nil && ip.IsUnspecified() || host == "" {
		add("0.0.0.0")
		add("::")
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				add(n.IP.String())
			}
		}
	}
	return out
}

// BrowserAddr is the host:port to put in the URL a person opens, for a
// server listening at addr: the address itself, or for the unspecified
// address (which no browser can open: 0.0.0.0, ::) this machine's
// loopback address at its port.
func BrowserAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() || host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// A Guard lets through to Next only the requests the package comment
// allows, and sets the security headers on every answer.
type Guard struct {
	Token string   // the secret; a Guard without one refuses everything
	Hosts []string // the Host values answered (Hosts), lower case
	Next  http.Handler
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if !slices.Contains(g.Hosts, strings.ToLower(r.Host)) {
		http.Error(w, "forbidden: this server answers only to its own address", http.StatusForbidden)
		return
	}
	if !safeMethod(r.Method) && !g.sameOrigin(r) {
		http.Error(w, "forbidden: a request from another origin", http.StatusForbidden)
		return
	}
	if q := r.URL.Query(); q.Has("token") && g.valid(q.Get("token")) {
		// The token's first use: into a cookie, and off the URL.
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: g.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		http.Redirect(w, r, localTarget(r.URL.Path, q.Encode()), http.StatusSeeOther)
		return
	}
	if !g.authorized(r) {
		http.Error(w, "forbidden: open the URL xdev serve printed (it carries the token)", http.StatusForbidden)
		return
	}
	g.Next.ServeHTTP(w, r)
}

// authorized reports whether r carries the token, in the cookie or as a
// bearer.
func (g *Guard) authorized(r *http.Request) bool {
	if c, err := r.Cookie(CookieName); err == nil && g.valid(c.Value) {
		return true
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && g.valid(t) {
		return true
	}
	return false
}

// valid compares t with the token in constant time.
func (g *Guard) valid(t string) bool {
	return g.Token != "" && subtle.ConstantTimeCompare([]byte(t), []byte(g.Token)) == 1
}

// sameOrigin reports whether a state-changing request comes from a page
// of the server: its Origin is one of the server's hosts over http, and
// the browser does not say it is another site's.
func (g *Guard) sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	o, err := url.Parse(r.Header.Get("Origin"))
	if err != nil || o.Scheme != "http" || o.Path != "" {
		return false
	}
	return slices.Contains(g.Hosts, strings.ToLower(o.Host))
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// localTarget is a redirect's Location for path and query that can only
// name a page of this server: one slash, then no other slash or
// backslash, as a browser would read "//evil.example/" or "/\evil.example"
// as another host.
func localTarget(path, rawQuery string) string {
	u := url.URL{Path: "/" + strings.TrimLeft(path, "/\\"), RawQuery: rawQuery}
	return u.String()
}
