package recall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/corpus"
)

// TestThousandCalls sends 1,000 requests (250 unless $XDEV_TEST_LONG) on the server's own transport
// (as a client on stdin would), a third of them malformed (not JSON, cut
// short, over MaxRequestBytes, unknown tools and methods, arguments of
// the wrong types; JSON that is no JSON-RPC 2.0 message the SDK takes: a
// scalar, null, an array, a batch, another jsonrpc version, an id that
// is an object, a bool or a fraction, a method that is not a string),
// then closes stdin at once: every request with an id the client can
// match gets one answer with that id, the last ones included, and the
// server then ends.
func TestThousandCalls(t *testing.T) {
	m := newMachine(t)
	srv := New(Options{Catalog: m.Catalog(t), Version: "test"})
	t.Cleanup(srv.Close)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	flight := newInflight()
	go func() { done <- srv.Run(ctx, transport(inR, outW, flight)); outW.Close() }()

	answers := make(chan map[string]any, 2000)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var v map[string]any
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				answers <- v
			}
		}
		close(answers)
	}()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r := rand.New(rand.NewPCG(1, 2))
	call := func(id int, tool string, args any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		return string(b)
	}
	want := map[float64]bool{0: true}
	notMessages := []string{`[]`, `null`, `12345`, `"str"`, `true`, `{}`, `[1,2]`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":false,"method":"ping"}`, `{"jsonrpc":"2.0","id":[],"method":"ping"}`, `{"jsonrpc":"2.0","id": null ,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/bogus"}`, `{"jsonrpc":"2.0","id":"r1","result":{}}`}
	calls := testscale.N(250, 1000)
	for id := 1; id <= calls; id++ {
		var line string
		answered := true
		switch k := r.IntN(26); {
		case k == 20:
			line, answered = notMessages[r.IntN(len(notMessages))], false
		case k == 21:
			line = fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"ping"},{"jsonrpc":"2.0","id":"b%d","method":"ping"}]`, id, id)
		case k == 22:
			line = fmt.Sprintf(`{"jsonrpc":"1.0","id":%d,"method":"ping"}`, id)
		case k == 23:
			line = fmt.Sprintf(`{"id":%d,"method":"tools/list"}`, id)
		case k == 24:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":5}`, id)
		case k == 25:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
		case k < 4:
			line = call(id, "search_sessions", map[string]any{"query": corpus.Vocabulary(r.IntN(30)), "limit": 1 + r.IntN(5)})
		case k < 7:
			line = call(id, "list_sessions", map[string]any{"limit": 1 + r.IntN(5)})
		case k < 9:
			line = call(id, "usage_summary", map[string]any{"by": "model"})
		case k < 11:
			line = call(id, "get_session", map[string]any{"session": "no-such", "limit": 2})
		case k < 13:
			line = call(id, "get_context", map[string]any{"session": "", "limit": 2})
		case k < 15:
			line = call(id, "search_sessions", map[string]any{"query": r.IntN(9), "limit": "many"})
		case k == 15:
			line = call(id, "rm_rf", map[string]any{})
		case k == 16:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"no/such/method"}`, id)
		case k == 17:
			// Over the bound: refused for its id, the rest unread.
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"%s"}}}`,
				id, strings.Repeat("a", MaxRequestBytes))
		case k == 18:
			line, answered = `{"jsonrpc":"2.0","id":`, false // cut short: not JSON, no id to answer
		default:
			line, answered = "\x00\xff not json at all", false
		}
		if answered {
			want[float64(id)] = true
		}
		send(line)
	}
	for id := calls + 1; id <= calls+5; id++ {
		send(call(id, "search_sessions", map[string]any{"query": corpus.Vocabulary(id % 30)}))
		want[float64(id)] = true
	}
	inW.Close() // the client is done writing: the calls in flight are still answered
	got := map[float64]int{}
	// The bound follows the work: two minutes without an answer, however
	// long all of them take on a slow machine.
	stall := time.NewTimer(2 * time.Minute)
	for len(got) < len(want) {
		select {
		case v, ok := <-answers:
			stall.Reset(2 * time.Minute)
			if !ok {
				t.Fatalf("the server stopped after %d answers: %v", len(got), <-done)
			}
			id, ok := v["id"].(float64)
			if !ok {
				continue // a parse error has no id
			}
			got[id]++
			if v["error"] == nil && v["result"] == nil {
				t.Errorf("answer %v: neither a result nor an error", id)
			}
		case <-stall.C:
			t.Fatalf("%d of %d requests answered, then none for 2 minutes", len(got), len(want))
		}
	}
	for id := range want {
		if got[id] != 1 {
			t.Errorf("request %v answered %d times", id, got[id])
		}
	}
	// Every request counted in flight was answered: none is waited for
	// until DrainTimeout once stdin has ended (an id the SDK does not
	// answer, such as null, once was).
	if !flight.wait(DrainTimeout) {
		flight.mu.Lock()
		t.Errorf("answered all, yet still waiting for %v", flight.ids)
		flight.mu.Unlock()
	}
	inW.Close()
	if err := <-done; err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "closed") {
		t.Errorf("the server ended with %v", err)
	}
}

// FuzzTransport: whatever the bytes on stdin, copyBounded ends and
// passes on exactly the lines that are JSON-RPC 2.0 messages the SDK
// takes within the bound, each as it came (trimmed), with at most a
// refusal for each other line.
func FuzzTransport(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2,\"x\":\""+strings.Repeat("y", 300)+"\"}\nshort"), 64)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a\"b","method":"m"}`+"\n"+`{"id":7,"cut`), 100)
	f.Add([]byte("[]\nnull\n12345\n\"s\"\n[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]\n{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}\n"), 4096)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = 1 + abs(max)%4096
		var out bytes.Buffer
		if err := copyBounded(&out, bytes.NewReader(in), max, newInflight()); err != nil {
			t.Fatal(err)
		}
		var want, kept strings.Builder
		refusals := 0
		for _, l := range strings.SplitAfter(string(in), "\n") {
			v := bytes.TrimSpace([]byte(l))
			switch {
			case len(l) <= max && len(v) > 0 && json.Valid(v) && isMessage(v):
				want.Write(v)
				want.WriteByte('\n')
			case len(v) > 0:
				refusals++
			}
		}
		for _, l := range strings.SplitAfter(out.String(), "\n") {
			if strings.Contains(l, "xdev/refused: ") && !strings.Contains(string(in), "xdev/refused: ") {
				refusals--
				continue
			}
			kept.WriteString(l)
		}
		if kept.String() != want.String() || refusals < 0 {
			t.Errorf("bound %d: passed on\n%q\nwant\n%q", max, kept.String(), want.String())
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzCursor: a cursor is the one given back, and nothing else is one.
func FuzzCursor(f *testing.F) {
	f.Add("search_sessions", 3, cursorOf("list_sessions", 9))
	f.Fuzz(func(t *testing.T, tool string, pos int, c string) {
		if pos >= 0 && !strings.Contains(tool, ":") {
			if got, err := parseCursor(tool, cursorOf(tool, pos)); err != nil || got != pos {
				t.Errorf("%s %d: %d, %v", tool, pos, got, err)
			}
		}
		if n, err := parseCursor(tool, c); err == nil && c != "" && cursorOf(tool, n) != c && n < 0 {
			t.Errorf("%q read as %d", c, n)
		}
	})
}

func isMessage(v []byte) bool {
	_, _, ok := message(v)
	return ok
}
