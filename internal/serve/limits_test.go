package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConnectionsAreLetGo opens 200 connections of every kind a client
// leaves open (nothing sent; half a request line; headers never ended; a
// request with the token, then silence on the kept-alive connection; one
// without the token, then silence; a request sent a byte a second) and
// then event streams past the bound: every connection that is not a live
// stream is closed by the server within its timeouts, whatever it sent,
// and the streams past MaxStreams are refused.
func TestConnectionsAreLetGo(t *testing.T) {
	p := newPlace(t)
	p.newSession(t, "/work/app", "A session", "hello", "hi")
	p.limits = Limits{ReadHeaderTimeout: 500 * time.Millisecond, IdleTimeout: 500 * time.Millisecond,
		WriteTimeout: 2 * time.Second, MaxConns: 32, MaxStreams: 4}
	r := p.serve(t)
	addr := strings.TrimPrefix(r.base, "http://")
	request := func(auth bool) string {
		h := ""
		if auth {
			h = "Authorization: Bearer " + r.token + "\r\n"
		}
		return "GET / HTTP/1.1\r\nHost: " + addr + "\r\n" + h + "\r\n"
	}
	kinds := []struct {
		name string
		send string
	}{
		{"nothing", ""},
		{"half a request line", "GET /sea"},
		{"headers never ended", "GET / HTTP/1.1\r\nHost: " + addr + "\r\n"},
		{"a request with the token, then silence", request(true)},
		{"a request without the token, then silence", request(false)},
	}
	var conns []net.Conn
	var names []string
	for i := range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		k := kinds[i%len(kinds)]
		io.WriteString(c, k.send)
		conns = append(conns, c)
		names = append(names, k.name)
	}
	// A request trickled a byte at a time: the header deadline still holds.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	go func() {
		for _, b := range []byte(request(true)) {
			if _, err := slow.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	conns, names = append(conns, slow), append(names, "a request a byte at a time")

	// Every connection ends: reading reaches EOF or a reset once the
	// server lets it go (a kept-alive one after its answer).
	done := make(chan int, len(conns))
	for i, c := range conns {
		go func() {
			c.SetReadDeadline(time.Now().Add(2 * time.Minute))
			io.Copy(io.Discard, c)
			done <- i
		}()
	}
	closed := map[int]bool{}
	timeout := time.After(2 * time.Minute)
	for len(closed) < len(conns) {
		select {
		case i := <-done:
			closed[i] = true
		case <-timeout:
			for i := range conns {
				if !closed[i] {
					t.Errorf("connection %d (%s) still open after 2 minutes", i, names[i])
				}
			}
			t.FailNow()
		}
	}

	// Event streams: MaxStreams of them live on; the next is refused.
	var open []*http.Response
	for i := range p.limits.MaxStreams + 2 {
		req, _ := http.NewRequest("GET", r.base+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+r.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if i < p.limits.MaxStreams {
			if resp.StatusCode != 200 {
				t.Fatalf("stream %d: %s", i, resp.Status)
			}
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			if !strings.HasPrefix(line, "retry:") {
				t.Errorf("stream %d began %q", i, line)
			}
			open = append(open, resp)
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("stream %d past the bound of %d: %s, want 503", i, p.limits.MaxStreams, resp.Status)
		}
	}
	// A stream outlives the write timeout.
	time.Sleep(p.limits.WriteTimeout + 500*time.Millisecond)
	if code, body := r.get(t, "/"); code != 200 {
		t.Errorf("a page while %d streams are open: %d %s", len(open), code, body[:min(len(body), 200)])
	}
}
