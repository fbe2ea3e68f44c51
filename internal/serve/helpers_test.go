package serve

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/testplace"
)

// place is a test's machine: a home, a cache, xdev's data dir and the
// other harnesses' roots, all in temp dirs.
type place struct {
	home, cache, data string
	roots             map[catalog.Harness]string
	limits            Limits        // of the servers serve starts
	building          func(on bool) // the servers' Config.Building
	// beforeRun, where set, is called between a server's New and its Run.
	beforeRun func(*Server)
}

// newPlace makes an empty machine and points the process at it
// (testplace), so that nothing of the real user's is read.
func newPlace(t testing.TB) *place {
	t.Helper()
	tp := testplace.New(t)
	return &place{home: tp.Home, cache: tp.Cache, data: tp.Data, roots: tp.Roots}
}

// withRealFixtures copies the real fixtures of every other harness into
// the place's roots.
func (p *place) withRealFixtures(t testing.TB) {
	t.Helper()
	testplace.CopyRealFixtures(t, p.roots)
}

// newSession writes a session of the data dir: a title and the messages
// given (a user's, then an assistant's, alternating), and returns its
// path and store (closed by the test's cleanup).
func (p *place) newSession(t testing.TB, cwd, title string, texts ...string) (string, *session.Store) {
	t.Helper()
	return p.newSessionWith(t, session.NewOptions{Cwd: cwd, Title: title}, texts...)
}

// newSessionWith is newSession with the header's options (a parent, for a
// fork); the title, if any, is a manual one.
func (p *place) newSessionWith(t testing.TB, opts session.NewOptions, texts ...string) (string, *session.Store) {
	t.Helper()
	path, id, err := session.NewSessionPath(p.data, opts.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	opts.ID = id
	if opts.Title != "" {
		opts.TitleSource = session.TitleManual
	}
	s, err := session.Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i, text := range texts {
		appendText(t, s, i%2 == 0, text)
	}
	return path, s
}

// appendText appends a user's (user) or the assistant's message.
func appendText(t testing.TB, s *session.Store, user bool, text string) *session.Entry {
	t.Helper()
	m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent(text), Timestamp: time.Now().UnixMilli()}
	if !user {
		m = ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text(text)), StopReason: ai.StopEnd, Model: "claude-sonnet-4-5",
			Provider: "anthropic", Timestamp: time.Now().UnixMilli()}
	}
	e, err := s.AppendMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// running is a server of a place, listening on loopback.
type running struct {
	*Server
	base  string // http://127.0.0.1:PORT
	token string
	stop  func() // stops it (as the test's cleanup does, once)
}

// serve starts the server of p and its Run loop, and waits for its first
// refresh; the test's cleanup stops both.
func (p *place) serve(t testing.TB) *running {
	t.Helper()
	c, err := catalog.New(catalog.Config{DataDir: p.data, Cwd: p.home, Roots: p.roots})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	token := NewToken()
	s, err := New(Config{Catalog: c, Token: token, Addr: ln.Addr().String(), UsageCache: filepath.Join(p.cache, "usage"),
		Logf: func(f string, a ...any) { t.Logf("serve: "+f, a...) }, Limits: p.limits, Building: p.building})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(served) }()
	if p.beforeRun != nil {
		p.beforeRun(s)
	}
	ran := make(chan struct{})
	go func() { s.Run(ctx); close(ran) }()
	stop := sync.OnceFunc(func() {
		cancel()
		<-ran
		<-served
		s.Close()
	})
	t.Cleanup(stop)
	// Ready once its first refresh is done, however long the machine takes
	// for it (go test's timeout is the bound); a Run that ends first is a
	// failure.
	for !s.ready.Load() || s.use.Load().made.IsZero() {
		select {
		case <-ran:
			t.Fatal("the server's Run ended before it was ready")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return &running{Server: s, base: "http://" + ln.Addr().String(), token: token, stop: stop}
}

// get fetches path with the token (as a bearer) and returns the status
// and body.
func (r *running) get(t testing.TB, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", r.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// keyOf is the key of the session at path on the server's list.
func (r *running) keyOf(t testing.TB, path string) string {
	t.Helper()
	k := r.lib.Load().keyOfPath(path)
	if k == "" {
		t.Fatalf("%s is not on the server's list", path)
	}
	return k
}

// waitListed waits until the server lists the session at path.
func (r *running) waitListed(t testing.TB, path string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if k := r.lib.Load().keyOfPath(path); k != "" {
			return k
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not listed within 10 s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
