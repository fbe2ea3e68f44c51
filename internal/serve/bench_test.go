package serve

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

var benchSessions = flag.Int("serve.n", 10000, "sessions in the data dir of BenchmarkPages")

// TestBigSessionPage: the page of a long session sends one window of it,
// whatever the session's size: 100 entries, a bounded page, its newest
// entry live; the next window and a jump by id work on it too.
func TestBigSessionPage(t *testing.T) {
	src, err := corpus.CachedFile(corpus.Options{Size: 24 << 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := newPlace(t)
	path := filepath.Join(session.SessionsDir(p.data), "--work-project--", filepath.Base(src))
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Link(src, path); err != nil {
		b, _ := os.ReadFile(src)
		os.WriteFile(path, b, 0o600)
	}
	srv := p.serve(t)
	key := srv.keyOf(t, path)
	code, page := srv.get(t, "/s/"+key)
	if code != 200 {
		t.Fatalf("%d", code)
	}
	if n := len(page); n > 4<<20 {
		t.Errorf("the page of a 24 MB session is %d bytes", n)
	}
	if n := strings.Count(page, "<article id=\"e-"); n < 50 || n > window {
		t.Errorf("%d entries on the page", n)
	}
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	branch := x.PathTo(x.Leaf())
	leaf := x.ID(branch[len(branch)-1])
	if !strings.Contains(page, `data-last="`+leaf+`"`) {
		t.Error("the newest window is not live, or not the newest")
	}
	first := x.ID(branch[0])
	if _, older := srv.get(t, "/s/"+key+"?from=0"); !strings.Contains(older, `id="e-`+first+`"`) && x.Type(branch[0]) == "message" {
		t.Error("the first window lacks the first entry")
	}
	mid := x.ID(branch[len(branch)/2])
	if _, at := srv.get(t, "/s/"+key+"?at="+mid); !strings.Contains(at, `data-kind`) || !strings.Contains(at, "Entries "+fmt.Sprint(max(0, len(branch)/2-window/2))) {
		t.Errorf("the window around %s is not around it", mid)
	}
}

// BenchmarkPages times the server's pages in process over a data dir of
// -serve.n sessions (xdev-corpus): a page of the sessions list, one
// filtered, a search, a session's page.
func BenchmarkPages(b *testing.B) {
	dir, err := corpus.CachedDir(*benchSessions, 1)
	if err != nil {
		b.Fatal(err)
	}
	p := &place{}
	root := b.TempDir()
	p.home, p.cache, p.data = filepath.Join(root, "home"), filepath.Join(root, "cache"), dir
	b.Setenv("HOME", p.home)
	b.Setenv("XDG_CACHE_HOME", p.cache)
	b.Setenv(session.DataDirEnv, dir)
	b.Setenv(session.OmpDataDirEnv, filepath.Join(root, "omp"))
	srv := p.serve(b)
	l := srv.lib.Load()
	key := l.rows[len(l.rows)/2].key
	for _, page := range []struct{ name, path string }{
		{"list", "/"}, {"list-page-50", "/?page=50"}, {"list-filtered", "/?q=refactor&harness=xdev"},
		{"search", "/search?q=gagara&fragment=1"}, {"session", "/s/" + key}, {"usage", "/usage"},
	} {
		b.Run(page.name, func(b *testing.B) {
			for b.Loop() {
				if code, _ := srv.get(b, page.path); code != 200 {
					b.Fatalf("%s: %d", page.path, code)
				}
			}
		})
	}
}

// BenchmarkSessionPageMasking times a long session's page (its newest
// window, its first, and a window around an entry in its middle) as it
// is served, secrets masked, and with masking off (entryOptions.Reveal,
// which nothing outside this benchmark sets): what masking adds to it.
func BenchmarkSessionPageMasking(b *testing.B) {
	src, err := corpus.CachedFile(corpus.Options{Size: 104 << 20, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	p := newPlace(b)
	path := filepath.Join(session.SessionsDir(p.data), "--work-project--", filepath.Base(src))
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Link(src, path); err != nil {
		data, _ := os.ReadFile(src)
		os.WriteFile(path, data, 0o600)
	}
	srv := p.serve(b)
	key := srv.keyOf(b, path)
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	branch := x.PathTo(x.Leaf())
	mid := x.ID(branch[len(branch)/2])
	x.Close()
	for _, reveal := range []bool{false, true} {
		name := "masked"
		if reveal {
			name = "unmasked"
		}
		for _, page := range []struct{ name, path string }{
			{"newest", "/s/" + key}, {"first", "/s/" + key + "?from=0"}, {"middle", "/s/" + key + "?at=" + mid},
		} {
			b.Run(name+"/"+page.name, func(b *testing.B) {
				entryOptions.Reveal = reveal
				defer func() { entryOptions.Reveal = false }()
				bytes := 0
				for b.Loop() {
					code, body := srv.get(b, page.path)
					if code != 200 {
						b.Fatalf("%s: %d", page.path, code)
					}
					bytes = len(body)
				}
				b.ReportMetric(float64(bytes), "page-bytes")
			})
		}
	}
}
