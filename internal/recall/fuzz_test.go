package recall

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzArguments sends each tool arguments of any shape: each call is
// answered (a result or an error saying what was wrong) within a
// minute, never a crash, and the server answers the next call.
func FuzzArguments(f *testing.F) {
	m := newMachine(f)
	for _, seed := range []string{`{"query":"gagaga","limit":3}`, `{"session":"x","around":"y"}`, `{"by":"model","since":"7d"}`,
		`{"query":"\"a b\" OR c*","cursor":"c2VhcmNoX3Nlc3Npb25zOjM"}`, `{"session":"../../etc/passwd","offset":-99999999999}`,
		`{"max_tokens":1e308}`, `{"roles":[null,1,"user"]}`, `[]`, `null`, `{"query":{"$ne":1}}`} {
		for tool := range byte(len(toolNames)) {
			f.Add(tool, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, tool byte, args []byte) {
		if !json.Valid(args) {
			return // the client would not send it; the transport's fuzz covers lines that are not JSON
		}
		name := toolNames[int(tool)%len(toolNames)]
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if ctx.Err() != nil {
			t.Fatalf("%s %s: no answer in a minute", name, args)
		}
		if err == nil && res.IsError && textOf(res) == "" {
			t.Errorf("%s %s: an error that says nothing", name, args)
		}
		var list ListResult
		m.must(t, "list_sessions", map[string]any{"limit": 1, "harness": "pi"}, &list)
	})
}

var toolNames = []string{"search_sessions", "list_sessions", "get_session", "get_context", "usage_summary"}
