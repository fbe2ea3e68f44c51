package serve

import (
	"context"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// The bounds of the HTTP server, so that no client, with the token or
// without, holds the server's connections or goroutines for long: a
// request's headers must come within ReadHeaderTimeout, a page's answer
// go out within WriteTimeout, and a connection with no request in
// flight is closed after IdleTimeout. At most MaxConns connections are
// open at once (the next wait to be accepted), of which at most
// MaxStreams are pages' event streams: those live as long as their page,
// their write deadline pushed on at each event or keep-alive.
const (
	ReadHeaderTimeout = 10 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 30 * time.Second
	MaxConns          = 64
	MaxStreams        = 16
)

// Limits are the bounds a Server's HTTP server keeps; the zero value is
// the defaults above.
type Limits struct {
	ReadHeaderTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxConns, MaxStreams                         int
}

func (l Limits) withDefaults() Limits {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	orN := func(n, def int) int {
		if n <= 0 {
			return def
		}
		return n
	}
	return Limits{
		ReadHeaderTimeout: or(l.ReadHeaderTimeout, ReadHeaderTimeout), WriteTimeout: or(l.WriteTimeout, WriteTimeout),
		IdleTimeout: or(l.IdleTimeout, IdleTimeout), MaxConns: orN(l.MaxConns, MaxConns), MaxStreams: orN(l.MaxStreams, MaxStreams),
	}
}

// Serve answers the connections ln accepts until ctx ends (then it shuts
// down, giving the requests in flight a moment) or the listener fails,
// within the server's Limits. Requests live in ctx: its end ends the
// pages' event streams at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	l := s.cfg.Limits
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(netutil.LimitListener(ln, l.MaxConns)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	hs.Shutdown(shut)
	return nil
}
