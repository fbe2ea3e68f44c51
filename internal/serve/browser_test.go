package serve

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/chromium"
	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/session"
)

// hostileText is what a transcript may hold that must stay text: markup,
// scripts, handlers, javascript: links, SVG with script, terminal
// escapes.
const hostileText = "<script>window.__pwned=1</script> <img src=x onerror=\"window.__pwned=2\"> " +
	"[click](javascript:window.__pwned=3) <svg onload=\"window.__pwned=4\"><script>window.__pwned=5</script></svg> " +
	"<a href=\"javascript:window.__pwned=6\">x</a> \x1b[31mred\x1b[0m \x1b]0;title\x07 <iframe src=\"https://example.com\"></iframe>"

// noLogs fails on anything the page logged: a refused script or style
// (the policy at work on something the page holds), an exception, a
// console call.
func noLogs(t *testing.T, b *chromium.Browser, where string) {
	t.Helper()
	for _, l := range b.Logs() {
		t.Errorf("%s: the page logged: %s", where, l)
	}
}

// inert checks that nothing hostile in the page runs or links: no
// script element but the server's own, no handler attribute, no
// javascript: URL, no frame.
func inert(t *testing.T, b *chromium.Browser, where string) {
	t.Helper()
	got := b.String(`(() => {
		const bad = [];
		if (window.__pwned) bad.push("script ran: " + window.__pwned);
		for (const s of document.querySelectorAll("script")) if (s.getAttribute("src") !== "/assets/app.js") bad.push("script element");
		for (const el of document.querySelectorAll("*")) {
			for (const a of el.attributes) {
				if (a.name.startsWith("on")) bad.push("handler " + a.name + " on " + el.tagName);
				if (/^\s*javascript:/i.test(a.value)) bad.push("javascript: in " + a.name);
			}
		}
		if (document.querySelector("iframe, object, embed, main svg")) bad.push("frame, object or svg from content");
		return bad.join("; ");
	})()`)
	if got != "" {
		t.Errorf("%s: %s", where, got)
	}
}

// TestPagesInChromium drives every page in headless Chromium over a data
// dir and every other harness's real fixtures: the list shows every
// session with forks nested, every session's page renders its entries,
// search and usage render, nothing logs and hostile content is inert.
func TestPagesInChromium(t *testing.T) {
	p := newPlace(t)
	p.withRealFixtures(t)
	_, ps := p.newSession(t, "/w/alpha", "Parent session", "find the marmalade bug", "It is in **jar.go**.")
	p.newSessionWith(t, session.NewOptions{Cwd: "/w/alpha", Title: "A fork", ParentSession: ps.Header().ID}, "and the fork")
	hostile, _ := p.newSession(t, "/w/beta", "Hostile <b>title</b> \x1b[2J", hostileText, hostileText)
	srv := p.serve(t)
	b := chromium.Launch(t)

	b.Navigate(srv.base + "/?token=" + srv.token)
	if got := b.String("location.search"); got != "" {
		t.Errorf("the token stayed in the URL: %q", got)
	}
	rows := int(b.Eval(`document.querySelectorAll("table.sessions tbody tr").length`).(float64))
	all := len(srv.lib.Load().rows)
	if rows == 0 || all < 20 {
		t.Fatalf("the list shows %d rows of %d sessions", rows, all)
	}
	for _, h := range []string{"xdev", "claude", "codex", "pi", "copilot", "gemini", "opencode"} {
		if !b.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll("table.sessions td:nth-child(3)")).some(td => td.textContent === %q)`, h)).(bool) {
			t.Errorf("no %s session in the list", h)
		}
	}
	// The fork is nested under its parent, right after it.
	nested := b.String(`(() => { const r = Array.from(document.querySelectorAll("tr")).find(r => r.textContent.includes("A fork")); return r ? r.className + "|" + r.previousElementSibling.textContent : ""; })()`)
	if !strings.HasPrefix(nested, "d1|") || !strings.Contains(nested, "Parent session") {
		t.Errorf("the fork is not nested under its parent: %q", nested)
	}
	if png := b.Screenshot(); len(png) < 10_000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot of %d bytes", len(png))
	}
	inert(t, b, "sessions")
	noLogs(t, b, "sessions")

	// Every session's page, of every harness.
	l := srv.lib.Load()
	for _, r := range l.rows {
		b.Navigate(srv.base + "/s/" + r.key)
		n := int(b.Eval(`document.querySelectorAll("main#entries article").length`).(float64))
		if n == 0 && r.Size > 2000 {
			t.Errorf("%s (%s): no entries on its page", r.Path, r.Harness)
		}
		where := string(r.Harness) + " " + filepath.Base(r.Path)
		inert(t, b, where)
		noLogs(t, b, where)
	}
	b.Navigate(srv.base + "/s/" + srv.keyOf(t, hostile))
	if got := b.String(`document.querySelector("header.session h1").textContent`); !strings.Contains(got, "Hostile <b>title</b>") {
		t.Errorf("the hostile title is not shown as text: %q", got)
	}
	if !strings.Contains(b.String(`document.querySelector("main#entries").textContent`), "<script>window.__pwned=1</script>") {
		t.Error("the user's markup is not shown as text")
	}

	b.Navigate(srv.base + "/usage")
	if n := b.Eval(`document.querySelectorAll("svg.chart").length`).(float64); n < 4 {
		t.Errorf("%v charts on the usage page", n)
	}
	if !strings.Contains(b.String(`document.querySelector("p.total").textContent`), "model calls") {
		t.Error("no total on the usage page")
	}
	noLogs(t, b, "usage")
}

// TestSearchInChromium types a query, sees the hits come as it types,
// moves to the first with the keyboard and lands on its entry.
func TestSearchInChromium(t *testing.T) {
	p := newPlace(t)
	for i := range 5 {
		p.newSession(t, "/w/proj", fmt.Sprintf("Session %d", i), "what about the weather", fmt.Sprintf("Answer %d without the word", i))
	}
	path, s := p.newSession(t, "/w/proj", "The one", "where is the quokka parser", "The quokka parser is in parse.go.")
	want := appendText(t, s, true, "and a second quokka question")
	srv := p.serve(t)
	b := chromium.Launch(t)
	b.Navigate(srv.base + "/search?token=" + srv.token)
	b.WaitFor(`document.activeElement && document.activeElement.id === "q"`, 5*time.Second)
	b.Type("quokka")
	b.WaitFor(`document.querySelectorAll("a.hit").length === 3`, 5*time.Second)
	if !strings.Contains(b.String(`document.querySelector("a.hit mark").textContent`), "quokka") {
		t.Error("the hit is not marked")
	}
	if got := b.String("location.search"); got != "?q=quokka" {
		t.Errorf("the URL does not follow the query: %q", got)
	}
	b.Type(" second")
	b.WaitFor(`document.querySelectorAll("a.hit").length === 1`, 5*time.Second)
	b.Press("ArrowDown")
	if !b.Eval(`document.activeElement.classList.contains("hit")`).(bool) {
		t.Fatal("ArrowDown did not move to the first hit")
	}
	b.Eval("window.__xdevOld = true")
	b.Press("Enter")
	b.WaitFor(`!window.__xdevOld && document.readyState === "complete"`, 5*time.Second)
	if got := b.String("location.pathname"); got != "/s/"+srv.keyOf(t, path) {
		t.Fatalf("landed on %s", got)
	}
	id := want.ID
	if !b.Eval(fmt.Sprintf(`!!document.getElementById(%s)`, chromium.Quote("e-"+id))).(bool) {
		t.Fatal("the hit's entry is not on the page")
	}
	if got := b.String("location.hash"); got != "#e-"+id {
		t.Errorf("hash %q", got)
	}
	noLogs(t, b, "search")
}

// TestLiveInChromium: an open session page shows an entry appended to
// its session within a second or two, and the sessions list shows a new
// session, with no reload.
func TestLiveInChromium(t *testing.T) {
	p := newPlace(t)
	path, s := p.newSession(t, "/w/live", "Live session", "first question", "first answer")
	srv := p.serve(t)
	b := chromium.Launch(t)
	b.Navigate(srv.base + "/s/" + srv.keyOf(t, path) + "?token=" + srv.token)
	b.Eval("window.__same = true")
	for i := range 3 {
		e := appendText(t, s, i%2 == 0, fmt.Sprintf("live entry %d", i))
		start := time.Now()
		b.WaitFor(fmt.Sprintf(`!!document.getElementById(%s)`, chromium.Quote("e-"+e.ID)), 5*time.Second)
		t.Logf("entry %d shown %v after its write", i, time.Since(start).Round(time.Millisecond))
	}
	if !b.Eval("window.__same === true").(bool) {
		t.Error("the page was loaded again")
	}
	noLogs(t, b, "live session")

	b.Navigate(srv.base + "/")
	b.Eval("window.__same = true")
	p.newSession(t, "/w/live", "A brand new session", "hello", "hi")
	b.WaitFor(`document.querySelector("table.sessions").textContent.includes("A brand new session")`, 5*time.Second)
	if !b.Eval("window.__same === true").(bool) {
		t.Error("the list was loaded again")
	}
	noLogs(t, b, "live list")
}

// TestKeyboardInChromium: j and k move among the sessions, Enter opens
// the one focused, "/" focuses the search box.
func TestKeyboardInChromium(t *testing.T) {
	p := newPlace(t)
	var paths []string
	for i := range 3 {
		path, _ := p.newSession(t, "/w/keys", fmt.Sprintf("Keyboard %d", i), "q", "a")
		paths = append(paths, path)
		time.Sleep(5 * time.Millisecond)
	}
	srv := p.serve(t)
	b := chromium.Launch(t)
	b.Navigate(srv.base + "/?token=" + srv.token)
	b.Press("j")
	b.Press("j")
	if got := b.String("document.activeElement.textContent"); !strings.Contains(got, "Keyboard 1") {
		t.Errorf("after j j the focus is on %q", got)
	}
	b.Press("k")
	if got := b.String("document.activeElement.textContent"); !strings.Contains(got, "Keyboard 2") {
		t.Errorf("after k the focus is on %q", got)
	}
	b.Eval("window.__xdevOld = true")
	b.Press("Enter")
	b.WaitFor(`!window.__xdevOld && document.readyState === "complete"`, 5*time.Second)
	if got := b.String("location.pathname"); got != "/s/"+srv.keyOf(t, paths[2]) {
		t.Errorf("Enter opened %s", got)
	}
	b.Press("/")
	if got := b.String("document.activeElement.id"); got != "quick" {
		t.Errorf("/ focused %q", got)
	}
	noLogs(t, b, "keyboard")
}

// TestNoSecretInChromium: in a browser, a session page holding planted
// secrets shows each masked, in its text and in its whole DOM, also for
// an entry with a new secret that arrives live through the page's event
// stream; the secrets page lists them, masked, and links to their
// entries.
func TestNoSecretInChromium(t *testing.T) {
	planted := secretstest.Secrets(t, 30)
	p := newPlace(t)
	path, s := p.newSession(t, "/w/keys", "Keys", "set the key to "+planted[0]+" please", "done: "+planted[1])
	for _, k := range planted[2:20] {
		appendText(t, s, false, "the env holds "+k)
	}
	srv := p.serve(t)
	b := chromium.Launch(t)
	check := func(what string) {
		t.Helper()
		dom := b.String(`document.documentElement.outerHTML + "\n" + document.body.innerText`)
		dom = strings.ReplaceAll(dom, srv.token, "TOKEN")
		for _, e := range srv.lib.Load().rows {
			dom = strings.ReplaceAll(dom, e.key, "KEY") // the server's names of sessions, which gitleaks takes for keys
		}
		secretstest.Check(t, what, dom, planted)
	}
	b.Navigate(srv.base + "/s/" + srv.keyOf(t, path) + "?token=" + srv.token)
	if n := b.Eval(`document.body.innerText.split("[REDACTED ").length - 1`).(float64); n < 20 {
		t.Errorf("the session page shows %v masked secrets, 20 planted", n)
	}
	check("the session page")
	e := appendText(t, s, true, "and now "+planted[25])
	b.WaitFor(fmt.Sprintf(`!!document.getElementById(%s)`, chromium.Quote("e-"+e.ID)), 10*time.Second)
	if !strings.Contains(b.String(fmt.Sprintf(`document.getElementById(%s).textContent`, chromium.Quote("e-"+e.ID))), "[REDACTED ") {
		t.Error("the live entry shows no masked secret")
	}
	check("the session page after a live entry")
	noLogs(t, b, "session page")

	b.Navigate(srv.base + "/secrets")
	b.WaitFor(`(() => { if (document.querySelector("table.secrets")) return true; location.reload(); return false; })()`, 10*time.Second)
	rows := b.Eval(`document.querySelectorAll("table.secrets tbody tr").length`).(float64)
	if rows < 20 {
		t.Errorf("the secrets page lists %v secrets, at least 20 planted", rows)
	}
	href := b.String(`document.querySelector("table.secrets tbody a").getAttribute("href")`)
	if !strings.HasPrefix(href, "/s/"+srv.keyOf(t, path)) {
		t.Errorf("a secret links to %q", href)
	}
	check("the secrets page")
	noLogs(t, b, "secrets page")
}
