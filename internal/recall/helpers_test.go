package recall

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/testplace"
)

// generated is how many sessions a test's data dir holds, beside the
// real fixtures of every other harness.
const generated = 40

// machine is a test's machine with its MCP server, and a client of it
// (the SDK's own) over an in-memory transport.
type machine struct {
	*testplace.Place
	cs *mcp.ClientSession
}

func newMachine(t testing.TB) *machine { return newMachineWith(t, nil) }

// newMachineWith is newMachine with the server's options changed by opts.
func newMachineWith(t testing.TB, opts func(*Options)) *machine {
	t.Helper()
	p := testplace.New(t)
	testplace.CopyRealFixtures(t, p.Roots)
	if _, err := corpus.WriteDir(p.Data, generated, 7); err != nil {
		t.Fatal(err)
	}
	o := Options{Catalog: p.Catalog(t), UsageCache: filepath.Join(p.Cache, "xdev", "usage"), Version: "test"}
	if opts != nil {
		opts(&o)
	}
	return &machine{Place: p, cs: connect(t, New(o))}
}

// connect is a client (the SDK's own) of srv over an in-memory
// transport, closed when the test ends.
func connect(t testing.TB, srv *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); srv.Close() })
	return cs
}

// call calls a tool; a tool error is returned as an error with its text.
func (m *machine) call(t testing.TB, name string, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return res, toolError(textOf(res))
	}
	return res, nil
}

type toolError string

func (e toolError) Error() string { return string(e) }

// must calls a tool that must answer, and decodes its structured result
// into out.
func (m *machine) must(t testing.TB, name string, args any, out any) string {
	t.Helper()
	res, err := m.call(t, name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	decode(t, res, out)
	return textOf(res)
}

// decode decodes a result's structured content into out.
func decode(t testing.TB, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}

func textOf(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}
