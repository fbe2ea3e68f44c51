package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/recall"
)

var mcpCommand = &command{
	name: "mcp", args: "[--allow DIR] [--time-limit D] [--claude-dir DIR …]",
	summary: "An MCP server on stdin/stdout: agents search and read earlier sessions",
	example: `  claude mcp add xdev -- xdev mcp          Claude Code
  codex mcp add xdev -- xdev mcp           Codex
  (docs/mcp.md: omp, opencode and the tools)`,
	options: func() options { return &mcpOptions{} },
}

type mcpOptions struct {
	store   *storeFlags
	sources *sourceFlags
	allow   dirList
	limit   time.Duration
	args    []string
}

func (o *mcpOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.Var(&o.allow, "allow", "also answer for sessions named by a path under `DIR` (repeatable); by default only the data dir's and the harnesses' are read")
	fs.DurationVar(&o.limit, "time-limit", recall.DefaultTimeLimit, "how long a call may take: one that cannot finish answers with what it has and says so (keep it under the client's request timeout, omp's 30s)")
}

// dirList is a repeatable flag of directories, made absolute.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, ",") }

func (d *dirList) Set(s string) error {
	abs, err := filepath.Abs(s)
	if err != nil {
		return err
	}
	*d = append(*d, abs)
	return nil
}

func (o *mcpOptions) setArgs(args []string) { o.args = args }

func (o *mcpOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q (the server speaks MCP on stdin and stdout)", o.args[0])
	}
	if o.limit <= 0 {
		return usagef("--time-limit is a duration above zero, such as 20s, not %v", o.limit)
	}
	cfg, err := o.sources.config(e, o.store)
	if err != nil {
		return err
	}
	// A server names many sessions: through the list cache, each is found
	// without reading every session's head.
	cfg.ResolveWritesCache = true
	c, err := catalog.New(cfg)
	if err != nil {
		return err
	}
	srv := recall.New(recall.Options{Catalog: c, UsageCache: catalog.UsageCacheDir(), Version: versionString(), Now: e.Now, Allow: o.allow,
		TimeLimit: o.limit})
	defer srv.Close()
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	// JSON-RPC goes out unfiltered: escaping is for a person's terminal.
	err = srv.Run(ctx, recall.Transport(e.In, e.RawOut))
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client went away, or ^C
	}
	return err
}
