package recall

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/omptest"
)

// serverEnv, when set, makes the test binary an `xdev mcp` over stdio
// for the place it names (TestMain), so that a client nobody here wrote
// (omp's) can start it as it starts any server in its config.
const serverEnv = "XDEV_RECALL_TEST_SERVER"

// serverPlace is where the test server finds sessions.
type serverPlace struct {
	Home, Data string
	Roots      map[catalog.Harness]string
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(serverEnv); cfg != "" {
		os.Exit(serveForTest(cfg))
	}
	os.Exit(m.Run())
}

func serveForTest(cfg string) int {
	var p serverPlace
	if err := json.Unmarshal([]byte(cfg), &p); err != nil {
		os.Stderr.WriteString(err.Error())
		return 2
	}
	os.Setenv("HOME", p.Home)
	c, err := catalog.New(catalog.Config{DataDir: p.Data, DataDirHarness: catalog.Xdev, Roots: p.Roots, ResolveWritesCache: true})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 2
	}
	srv := New(Options{Catalog: c, UsageCache: catalog.UsageCacheDir(), Version: "test"})
	defer srv.Close()
	if err := srv.Run(context.Background(), Transport(os.Stdin, os.Stdout)); err != nil && !strings.Contains(err.Error(), "EOF") {
		os.Stderr.WriteString(err.Error())
		return 1
	}
	return 0
}

// TestOmpClient: omp 18.2.3's own MCP client (src/mcp, on Bun) starts the
// server over stdio, lists its tools and calls each, a bad call among
// them; every answer is the one the Go SDK's client gets from the same
// server, and the bad call is a tool error after which the server goes
// on answering.
func TestOmpClient(t *testing.T) {
	omptest.Require(t)
	m := newMachine(t)
	cfg, _ := json.Marshal(serverPlace{Home: m.Home, Data: m.Data, Roots: m.Roots})
	t.Setenv(serverEnv, string(cfg))

	var hits SearchResult
	m.must(t, "search_sessions", map[string]any{"query": corpus.Vocabulary(2), "limit": 2}, &hits)
	if len(hits.Hits) == 0 {
		t.Fatal("no hits to follow")
	}
	h := hits.Hits[0]
	calls := []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		bad       bool
	}{
		{Name: "list_sessions", Arguments: map[string]any{"limit": 5}},
		{Name: "search_sessions", Arguments: map[string]any{"query": corpus.Vocabulary(2), "limit": 2}},
		{Name: "search_sessions", Arguments: map[string]any{"query": "CLAUDE.md", "harness": "claude"}},
		{Name: "search_sessions", Arguments: map[string]any{"query": " "}, bad: true},
		{Name: "get_session", Arguments: map[string]any{"session": h.SessionID, "around": h.EntryID, "limit": 4}},
		{Name: "get_session", Arguments: map[string]any{"session": "no-such-session"}, bad: true},
		{Name: "get_context", Arguments: map[string]any{"session": h.SessionID, "limit": 3}},
		{Name: "usage_summary", Arguments: map[string]any{"by": "model"}},
	}
	arg, _ := json.Marshal(calls)
	var got struct {
		Server struct{ Name string } `json:"server"`
		Tools  []struct {
			Name        string `json:"name"`
			InputSchema any    `json:"inputSchema"`
		} `json:"tools"`
		Results []struct {
			Name       string `json:"name"`
			IsError    bool   `json:"isError"`
			Text       string `json:"text"`
			Structured any    `json:"structured"`
		} `json:"results"`
	}
	out := omptest.Run(t, t.TempDir(), "mcp.ts", os.Args[0], string(arg))
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, tool := range got.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got.Server.Name != "xdev" || !slices.Equal(names, toolNamesSorted()) {
		t.Fatalf("omp sees server %q with tools %v", got.Server.Name, names)
	}
	if len(got.Results) != len(calls) {
		t.Fatalf("%d results of %d calls", len(got.Results), len(calls))
	}
	for i, c := range calls {
		r := got.Results[i]
		if r.IsError != c.bad {
			t.Errorf("%s %v: omp's client got an error %v: %s", c.Name, c.Arguments, r.IsError, r.Text)
			continue
		}
		if c.bad {
			continue
		}
		res, err := m.call(t, c.Name, c.Arguments)
		if err != nil {
			t.Fatal(err)
		}
		var ours any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &ours)
		// Costs are sums of floats, whose last bits follow the order a
		// ledger read them in (from its cache, or anew).
		if !reflect.DeepEqual(rounded(ours), rounded(r.Structured)) || textOf(res) != r.Text {
			ob, _ := json.Marshal(r.Structured)
			t.Errorf("%s %v: omp's client got another answer:\n%s\n%s\nthe Go SDK's:\n%s\n%s", c.Name, c.Arguments, r.Text, ob, textOf(res), b)
		}
	}
}

// rounded is v with every number to 12 significant digits.
func rounded(v any) any {
	switch v := v.(type) {
	case float64:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = rounded(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = rounded(e)
		}
		return out
	}
	return v
}

func toolNamesSorted() []string {
	s := slices.Clone(toolNames)
	slices.Sort(s)
	return s
}
