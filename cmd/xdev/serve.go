package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/serve"
	"github.com/xdev/xdev/internal/term"
)

var serveCommand = &command{
	name: "serve", args: "[--addr HOST:PORT] [--open]",
	summary: "Browse, search and watch every session in a browser (a local web app)",
	example: `  xdev serve                 http://127.0.0.1:7433/?token=… (open the URL it prints)
  xdev serve --open          and open it in the browser
  xdev serve --addr 127.0.0.1:9000`,
	options: func() options { return &serveOptions{} },
}

// defaultServePort is where serve listens unless told; when it is taken,
// the next few ports are tried, then any free one.
const defaultServePort = 7433

type serveOptions struct {
	store   *storeFlags
	sources *sourceFlags
	addr    string
	open    bool
	args    []string
}

func (o *serveOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.StringVar(&o.addr, "addr", "", fmt.Sprintf("listen at HOST:PORT (default 127.0.0.1:%d, or the next free port)", defaultServePort))
	fs.BoolVar(&o.open, "open", false, "open the URL in the browser")
}

func (o *serveOptions) setArgs(args []string) { o.args = args }

func (o *serveOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	cfg, err := o.sources.config(e, o.store)
	if err != nil {
		return err
	}
	c, err := catalog.New(cfg) // listing anew each time: sessions come and go
	if err != nil {
		return err
	}
	ln, err := listen(o.addr)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	if host, _, _ := net.SplitHostPort(addr); !isLoopback(host) {
		fmt.Fprintf(e.ErrOut, "xdev serve: warning: listening at %s, which other machines may reach (at %s); the token is all that keeps your transcripts from them\n",
			addr, strings.Join(reachableAt(addr), ", "))
	}
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(e.ErrOut, "xdev serve: "+term.Escape(fmt.Sprintf(format, args...)))
		e.Flush()
	}
	token := serve.NewToken()
	srv, err := serve.New(serve.Config{Catalog: c, Token: token, Addr: addr, UsageCache: catalog.UsageCacheDir(), Logf: logf, Building: buildingMemory})
	if err != nil {
		ln.Close()
		return err
	}
	defer srv.Close()
	url := "http://" + serve.BrowserAddr(addr) + "/?token=" + token
	fmt.Fprintln(e.Out, url)
	e.Flush()
	if o.open {
		openBrowser(url)
	}
	ctx, cancel := interruptible()
	defer cancel()
	served := make(chan error, 1)
	servedDone := make(chan struct{})
	go func() { served <- srv.Serve(ctx, ln); close(servedDone) }()
	ran := make(chan error, 1)
	runDone := make(chan struct{})
	go func() { ran <- srv.Run(ctx); close(runDone) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	case err = <-ran:
	}
	cancel()
	wait := time.After(3 * time.Second)
	for _, c := range []chan struct{}{servedDone, runDone} { // Run is done with the markers and indexes Close releases
		select {
		case <-c:
		case <-wait:
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// listen listens at addr; with none given, at the default port of the
// loopback address or, when that is taken, the next free one of a few,
// else any.
func listen(addr string) (net.Listener, error) {
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("--addr %s: %w", addr, err)
		}
		return ln, nil
	}
	for port := defaultServePort; port < defaultServePort+10; port++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// reachableAt lists the host:port values other machines may use for a
// server at addr: the address itself, or for the unspecified address
// every non-loopback address of this machine.
func reachableAt(addr string) []string {
	var out []string
	for _, h := range serve.Hosts(addr) {
		host, _, _ := net.SplitHostPort(h)
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return []string{addr}
	}
	return out
}

// isLoopback reports whether host (an address or "localhost") is this
// machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openBrowser opens url in the desktop's browser, if there is one; it
// does not wait for it.
func openBrowser(url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.Command(name, url)
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}
