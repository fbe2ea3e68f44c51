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
// answers: the address itself, and for a loopback address every loopback
// name at its port.
func Hosts(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{strings.ToLower(addr)}
	}
	out := []string{strings.ToLower(net.JoinHostPort(host, port))}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
		for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
			if hp := net.JoinHostPort(h, port); !slices.Contains(out, hp) {
				out = append(out, hp)
			}
		}
	}
	return out
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
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		if u.Path == "" {
			u.Path = "/"
		}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
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
