package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/xdev/xdev/internal/testscale" // GORACE for the helper processes

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/search"
)

// cliSearch searches as `xdev search` does (catalog.OpenIndexes, which
// skips the refresh of an index a live server vouches for), in another
// process as the CLI is, and returns the hits' snippets and whether
// every place was answered from a live server's index.
func cliSearch(t *testing.T, p *place, text string) (hits []string, allLive bool) {
	t.Helper()
	req, _ := json.Marshal(cliRequest{Data: p.data, Home: p.home, Roots: p.roots, Text: text})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "XDEV_SERVE_TEST_SEARCH="+string(req))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the search process: %v\n%s", err, out)
	}
	var r cliResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r.Hits, r.AllLive
}

type cliRequest struct {
	Data, Home, Text string
	Roots            map[catalog.Harness]string
}

type cliResult struct {
	Hits    []string
	AllLive bool
}

// TestMain runs the tests, or, with XDEV_SERVE_TEST_SEARCH set, is the
// search process of cliSearch.
func TestMain(m *testing.M) {
	if req := os.Getenv("XDEV_SERVE_TEST_SEARCH"); req != "" {
		os.Exit(searchProcess(req))
	}
	os.Exit(m.Run())
}

func searchProcess(raw string) int {
	var req cliRequest
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		fmt.Println(err)
		return 1
	}
	c, err := catalog.New(catalog.Config{DataDir: req.Data, Cwd: req.Home, Roots: req.Roots})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	places, err := c.PlacesIn(catalog.Every)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	n := 0
	ix, _, err := c.OpenIndexes(context.Background(), places, catalog.IndexOptions{Live: func(catalog.SearchPlace) { n++ }})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer ix.Close()
	hs, err := ix.Search(context.Background(), search.Query{Text: req.Text, Limit: 50})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	r := cliResult{AllLive: n == len(places) && n > 0}
	for _, h := range hs {
		r.Hits = append(r.Hits, h.Snippet)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// TestSearchFromLiveIndex: while a server runs, a search from another
// process (the CLI's catalog.OpenIndexes) answers from the server's index
// without refreshing it, and finds what was written moments ago once the
// server says clean; with the server gone, the search refreshes itself.
func TestSearchFromLiveIndex(t *testing.T) {
	p := newPlace(t)
	p.withRealFixtures(t)
	_, s := p.newSession(t, "/w/fresh", "Fresh", "the first word is ocelot", "noted")
	srv := p.serve(t)
	hits, allLive := cliSearch(t, p, "ocelot")
	if !allLive || len(hits) != 1 {
		t.Fatalf("with the server: %d hits, live %v", len(hits), allLive)
	}
	for i := range 20 {
		// No wait: the search asks the server, which takes the append
		// before it answers.
		appendText(t, s, true, fmt.Sprintf("now the word is capybara%d", i))
		hits, allLive = cliSearch(t, p, fmt.Sprintf("capybara%d", i))
		if !allLive || len(hits) != 1 {
			t.Fatalf("after append %d: %d hits, live %v", i, len(hits), allLive)
		}
	}
	// Stopped: every marker is gone, and a search refreshes by itself.
	srv.Close()
	appendText(t, s, true, "and at last a wombat")
	hits, allLive = cliSearch(t, p, "wombat")
	if allLive || len(hits) != 1 {
		t.Fatalf("without the server: %d hits, live %v", len(hits), allLive)
	}
}

// TestLiveChanges: the server follows a session being renamed, rewritten,
// deleted and torn mid-line as the index does: the list and the session's
// page follow, a torn line shows once it is whole, and nothing fails.
func TestLiveChanges(t *testing.T) {
	p := newPlace(t)
	path, s := p.newSession(t, "/w/change", "Changing", "first", "second")
	other, _ := p.newSession(t, "/w/change", "To be deleted", "doomed", "yes")
	srv := p.serve(t)
	key := srv.keyOf(t, path)
	_, page := srv.get(t, "/s/"+key)
	last := between(page, `data-last="`, `"`)
	if last == "" {
		t.Fatal("the page is not live")
	}

	// Torn: half a line, then the rest.
	e := appendText(t, s, true, "placeholder")
	s.Close()
	raw, _ := os.ReadFile(path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	whole := lines[len(lines)-1]
	os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")), 0o600)
	waitAfter(t, srv, key, last, func(code int, body string) bool { return code == 200 && !strings.Contains(body, e.ID) })
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(whole[:len(whole)/2])
	f.Sync()
	time.Sleep(2 * maxWait)
	if code, body := srv.after(t, key, last); code != 200 || strings.Contains(body, e.ID) {
		t.Fatalf("a torn line shows: %d %q", code, body)
	}
	f.WriteString(whole[len(whole)/2:] + "\n")
	f.Close()
	waitAfter(t, srv, key, last, func(code int, body string) bool { return code == 200 && strings.Contains(body, e.ID) })

	// Renamed: the old key is gone, the new path listed.
	moved := filepath.Join(filepath.Dir(path), "moved_"+filepath.Base(path))
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	newKey := srv.waitListed(t, moved)
	waitGone(t, srv, key)
	if code, body := srv.get(t, "/s/"+newKey); code != 200 || !strings.Contains(body, "Changing") {
		t.Fatalf("the moved session: %d", code)
	}

	// Rewritten (a temp file renamed over it, as a retitle does): the page
	// of the new content.
	b, _ := os.ReadFile(moved)
	tmp := moved + ".tmp"
	os.WriteFile(tmp, []byte(strings.Replace(string(b), "Changing", "Rewritten", 1)), 0o600)
	os.Rename(tmp, moved)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, body := srv.get(t, "/s/"+newKey); strings.Contains(body, "Rewritten") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rewritten session's page did not follow")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Deleted: gone from the list, its page 404.
	oldKey := srv.keyOf(t, other)
	os.Remove(other)
	waitGone(t, srv, oldKey)
	if code, _ := srv.get(t, "/s/"+oldKey); code != http.StatusNotFound {
		t.Fatalf("a deleted session's page: %d", code)
	}
	if code, body := srv.get(t, "/"); code != 200 || strings.Contains(body, "To be deleted") {
		t.Fatalf("the list after a delete: %d", code)
	}
}

// after asks for the entries of key's branch after id.
func (r *running) after(t *testing.T, key, id string) (int, string) {
	t.Helper()
	return r.get(t, "/s/"+key+"/after?id="+id)
}

func waitAfter(t *testing.T, r *running, key, id string, ok func(int, string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := r.after(t, key, id)
		if ok(code, body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %d %.200q", id, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitGone(t *testing.T, r *running, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.lib.Load().find(key) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s still listed after 5 s", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// between is the text of s between the first from and the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
