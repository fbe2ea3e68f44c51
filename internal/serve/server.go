package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/search"
)

// Config is what a Server serves and how.
type Config struct {
	// Catalog is where the sessions are: every harness it reads is
	// served (catalog.Every).
	Catalog *catalog.Catalog
	// Token is the secret every request must carry (NewToken).
	Token string
	// Addr is the address the server listens at (host:port): the Host
	// headers it answers follow from it (Hosts).
	Addr string
	// UsageCache is the usage ledger's cache dir ("" for none).
	UsageCache string
	// SecretsCache is the file the secrets page keeps its findings in by
	// each session's stamp ("" for xdev's cache dir's, as `xdev secrets`).
	SecretsCache string
	// Logf is told of what a person running the server should know (a
	// place that cannot be watched or indexed); nil discards it.
	Logf func(format string, args ...any)
	// Building, when set, is told (true) as the server starts to build a
	// view of every session (a listing made whole, a usage ledger) and
	// (false) once it is built: a process may collect harder meanwhile,
	// since a build holds about as much again as the server holds at
	// rest, and a page is rarely asked for then.
	Building func(on bool)
	// Location is the time zone of days (time.Local when nil).
	Location *time.Location
	// Limits bound the HTTP server (Serve); the zero value is the
	// defaults.
	Limits Limits
}

// A Server is the web app over one catalog. New makes it; Handler is
// what to serve; Run keeps it fresh until its context ends; Close
// releases what it holds.
type Server struct {
	cfg     Config
	cat     *catalog.Catalog
	handler http.Handler
	lib     atomic.Pointer[library]
	use     atomic.Pointer[usageView]
	secrets secretsState
	runCtx  atomic.Value // Run's context, for the work of the pages' own
	opened  opened
	events  broker
	streams atomic.Int32 // event streams open (at most Limits.MaxStreams)

	// The indexes, their markers (nil where another server keeps an
	// index fresh) and whether the first refresh is done. Searches and
	// refreshes take ixMu in turn: an index's connection is one at a time.
	ixMu    sync.Mutex
	ix      *catalog.Indexes
	markers []*live.Marker
	ready   atomic.Bool
	status  atomic.Value // string: what the indexes are doing, for the search page
	// The usage cache's marker, vouched for as the indexes' are.
	usageLive usageLive
	reopen    *catalog.Reopener // reopens the indexes once unused a moment

	// The views loop's: which harnesses to list again (dueMu), those
	// whose last listing failed, and the keys of the paths seen.
	viewsKick chan struct{}
	// projectsKick tells the watcher that a listing named working
	// directories not seen before: projects whose Crush or Aider sessions
	// it may have to watch.
	projectsKick chan struct{}
	dueMu        sync.Mutex
	due          map[catalog.Harness]*pending
	failed       map[catalog.Harness]error
	keys         map[string]harnessKey
	// usageAsked is when usage was last asked for (unix ns: wantUsage);
	// usageIdle, whether changes wait for it.
	usageAsked atomic.Int64
	usageIdle  atomic.Bool
	// heavy is set by work that leaves garbage worth handing back to the
	// system once idle (a whole library, a usage ledger); only the views
	// loop uses it.
	heavy bool
	// relisted counts the listings kept from their changed files alone
	// (catalog.Reread), which the log and the tests read.
	relisted atomic.Int64
	// usageBuilt counts the usage views built (rebuildUsage);
	// listedWhole, the harnesses listed whole (relist).
	usageBuilt  atomic.Int64
	listedWhole atomic.Int64
}

// New makes the server of cfg: it lists the sessions and opens the search
// indexes (refreshing them is Run's first work, so a server answers at
// once however much there is to index).
func New(cfg Config) (*Server, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("serve: no catalog")
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	cfg.Limits = cfg.Limits.withDefaults()
	s := &Server{cfg: cfg, cat: cfg.Catalog, viewsKick: make(chan struct{}, 1), projectsKick: make(chan struct{}, 1), due: map[catalog.Harness]*pending{},
		failed: map[catalog.Harness]error{}, keys: map[string]harnessKey{}}
	s.status.Store("Indexing…")
	s.reopen = catalog.NewReopener(s.reopenIndexes)
	s.use.Store(&usageView{})
	s.relist(nil)
	s.handler = &Guard{Token: cfg.Token, Hosts: Hosts(cfg.Addr), Next: s.routes()}
	return s, nil
}

// Handler is the server's handler: every request passes the Guard.
func (s *Server) Handler() http.Handler { return s.handler }

// Close releases the indexes and markers.
func (s *Server) Close() {
	s.reopen.Stop()
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	for _, m := range s.markers {
		if m != nil {
			m.Close()
		}
	}
	s.markers = nil
	s.usageLive.close()
	if s.ix != nil {
		s.ix.Close()
		s.ix = nil
	}
	s.opened.close()
}

// relist lists the sessions of the harnesses in due again (all when due
// is nil), keeping the others' rows as they were, and tells the pages
// what changed. A data dir whose last listing succeeded and whose changed
// files are known has only those read (catalog.Reread), and the library
// is patched with them (library.patched), where a whole listing stats
// every session and reads the list cache, and a whole library is made
// of every row. Only the views loop (and New, before it) calls it.
func (s *Server) relist(due map[catalog.Harness]*pending) {
	old := s.lib.Load()
	opts := catalog.ListOptions{Subagents: true}
	whole := map[catalog.Harness][]catalog.Row{}
	reread := map[catalog.Harness]map[string]*catalog.Row{}
	building := false
	for _, h := range catalog.Every {
		p := due[h]
		switch {
		case due != nil && p == nil:
			continue
		case due != nil && old != nil && !p.whole && s.failed[h] == nil:
			paths := p.list()
			if fresh, ok := s.cat.Reread(h, paths, opts, old.listed, old.under); ok {
				rows := make(map[string]*catalog.Row, len(paths))
				for _, path := range paths {
					rows[filepath.Clean(path)] = nil
				}
				for k := range fresh {
					rows[fresh[k].Path] = &fresh[k]
				}
				reread[h] = rows
				s.relisted.Add(1)
				continue
			}
		}
		if !building {
			building = true
			s.building(true)
			defer s.building(false)
		}
		rows, err := s.cat.ListHarness(h, opts)
		s.listedWhole.Add(1)
		if err != nil {
			s.cfg.Logf("listing %s sessions: %v", h.Name(), err)
			s.failed[h] = err
		} else {
			delete(s.failed, h)
		}
		whole[h] = rows
	}
	l, changed := nextLibrary(old, whole, reread, s.keyFor, maps.Clone(s.failed), time.Now())
	s.heavy = s.heavy || l.delta.byKey == nil // made whole
	s.lib.Store(l)
	if old == nil {
		return
	}
	if len(changed) > 0 || len(l.rows) != len(old.rows) {
		s.events.publish(event{name: "sessions", data: fmt.Sprint(len(l.rows))})
	}
	for _, k := range changed {
		s.events.publish(event{name: "session", data: k})
	}
}

// building tells Config.Building that a build of a view of every
// session starts (on) or ends.
func (s *Server) building(on bool) {
	if s.cfg.Building != nil {
		s.cfg.Building(on)
	}
}

// keyFor is the key of a session (keyOf), remembered by path: a listing
// of 10,000 sessions does not hash them all again.
func (s *Server) keyFor(h catalog.Harness, path string) string {
	if k, ok := s.keys[path]; ok && k.h == h {
		return k.key
	}
	k := keyOf(h, path)
	s.keys[path] = harnessKey{h, k}
	return k
}

type harnessKey struct {
	h   catalog.Harness
	key string
}

// openIndexes opens (and refreshes) the index of every place, and holds
// the live marker of each it can.
func (s *Server) openIndexes(ctx context.Context, places []catalog.SearchPlace) ([]search.RefreshStats, error) {
	s.status.Store(fmt.Sprintf("Indexing %d places…", len(places)))
	ix, stats, err := s.cat.OpenIndexes(ctx, places, catalog.IndexOptions{
		NoLive:  true,
		Problem: func(err error) { s.cfg.Logf("not indexed: %v", err) },
		Notice:  func(n string) { s.cfg.Logf("%s", n) },
	})
	if err != nil {
		ix.Close()
		return nil, err
	}
	markers := make([]*live.Marker, ix.Len())
	for k := range markers {
		m, err := live.Hold(live.MarkerPath(ix.IndexPath(k)))
		if err != nil {
			s.cfg.Logf("%s: %v", ix.Place(k).Root, err)
			continue
		}
		markers[k] = m
	}
	s.ixMu.Lock()
	s.ix, s.markers = ix, markers
	s.ixMu.Unlock()
	s.ready.Store(true)
	s.status.Store("")
	s.reopen.Used(catalog.ReopenAfterRefresh) // the first refresh's heap, back once idle
	return stats, nil
}

// refreshIndex refreshes the k-th index, and reports whether it did
// without an error, and how many bytes of sessions it read.
func (s *Server) refreshIndex(ctx context.Context, k int, paths []string) (bool, int64) {
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if s.ix == nil || k >= s.ix.Len() {
		return false, 0
	}
	st, err := s.ix.RefreshPaths(ctx, k, paths)
	if err != nil {
		s.cfg.Logf("%v", err)
		return false, st.Bytes
	}
	return true, st.Bytes
}

// marker is the k-th index's marker, nil when none is held.
func (s *Server) marker(k int) *live.Marker {
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if k < len(s.markers) {
		return s.markers[k]
	}
	return nil
}
