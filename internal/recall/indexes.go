package recall

import (
	"context"
	"sync"

	"github.com/xdev/xdev/internal/catalog"
)

// indexes are every place's search indexes, kept open between searches
// (opening seven SQLite files and warming their caches is most of a
// search's time) and freshened before each, as a search from a terminal
// is: asked of a running xdev serve, else refreshed. They are reopened a
// moment after a search, for SQLite's heap to go back to the system, at
// the pace xdev serve reopens its own (catalog.Reopener).
type indexes struct {
	cat *catalog.Catalog

	mu     sync.Mutex
	ix     *catalog.Indexes
	reopen *catalog.Reopener
	stale  []catalog.SearchPlace // the places this search's refresh did not finish
}

// use runs fn on fresh indexes of every place here; searches take turns.
// The indexes are refreshed under refresh, a context that ends before
// the call's: fn is then given the places whose refresh it stopped,
// searched as far as they are indexed (catalog.IndexOptions.Stale); the
// next search's refresh goes on from there.
func (x *indexes) use(ctx, refresh context.Context, fn func(ix *catalog.Indexes, stale []catalog.SearchPlace) error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stale = nil
	places, err := x.cat.PlacesIn(catalog.Every)
	if err != nil {
		return err
	}
	if x.ix != nil && !samePlaces(x.ix.Places(), places) {
		// A harness's sessions appeared or went: its index with them.
		x.ix.Close()
		x.ix = nil
	}
	if x.ix == nil {
		ix, _, err := x.cat.OpenIndexes(refresh, places, catalog.IndexOptions{Stale: func(p catalog.SearchPlace) { x.stale = append(x.stale, p) }})
		if err != nil {
			ix.Close()
			return err
		}
		x.ix = ix
	} else if err := x.ix.Freshen(refresh); err != nil {
		x.ix.Close()
		x.ix = nil
		return err
	}
	if x.reopen == nil {
		x.reopen = catalog.NewReopener(x.reopenIdle)
	}
	defer x.reopen.Used(catalog.ReopenAfterSearch)
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(x.ix, x.stale)
}

// close closes the indexes and stops their reopening.
func (x *indexes) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.reopen != nil {
		x.reopen.Stop()
	}
	if x.ix != nil {
		x.ix.Close()
		x.ix = nil
	}
}

// reopenIdle reopens the indexes once a search is done with them.
func (x *indexes) reopenIdle() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ix != nil {
		if err := x.ix.Reopen(); err != nil {
			x.ix.Close() // the next search opens them anew
			x.ix = nil
		}
	}
}

func samePlaces(a, b []catalog.SearchPlace) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Harness != b[i].Harness || a[i].Dir != b[i].Dir || a[i].Root != b[i].Root {
			return false
		}
	}
	return true
}
