package pick

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/search"
)

// A Source is where the picker's sessions come from: the catalog's
// places (CatalogSource), or rows a test hands it.
type Source struct {
	// List lists the sessions, handing each place's rows to add as they
	// come, with the place's harness (add may be called from several
	// goroutines), and returns when every place is listed.
	List func(ctx context.Context, add func(catalog.Harness, []catalog.Row)) error
	// Preview reads the last n messages of row's session, as a resume
	// sends them.
	Preview func(ctx context.Context, row catalog.Row, n int) ([]ai.Message, error)
	// Search returns the paths of the sessions whose text holds a match
	// of the index query text, in the order to show them; nil for no
	// index.
	Search func(ctx context.Context, text string) ([]string, error)
	// Close lets go of what the source holds open (the indexes a search
	// opened); nil for nothing.
	Close func()
}

// CatalogSource is the Source of places of c: their listings, their
// sessions opened as a reader opens them, and their indexes, opened (and
// brought up to date, unless a running xdev serve keeps them so) on the
// first search.
func CatalogSource(c *catalog.Catalog, places []catalog.Place, searchPlaces []catalog.SearchPlace) Source {
	idx := &lazyIndexes{c: c, places: searchPlaces}
	return Source{
		List: func(ctx context.Context, add func(catalog.Harness, []catalog.Row)) error {
			// Two places at a time (the cores there are): each listing's
			// files and caches are let go before the next, where 14 at
			// once held them all together.
			var wg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			slots := make(chan struct{}, 1)
			for _, p := range places {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					rows, err := p.List(ctx, catalog.ListOptions{Subagents: true})
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					add(p.Harness(), rows)
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		},
		Preview: func(ctx context.Context, row catalog.Row, n int) ([]ai.Message, error) {
			ref, err := c.RefOf(row)
			if err != nil {
				return nil, err
			}
			r, err := c.Open(ctx, ref)
			if err != nil {
				return nil, err
			}
			cr, err := r.ReadContext()
			if err != nil {
				return nil, err
			}
			defer cr.Close()
			var out []ai.Message
			err = cr.EachFrom(cr.Len()-n, func(m *ai.Message) error {
				out = append(out, *m)
				return ctx.Err()
			})
			return out, err
		},
		Search: idx.sessions,
		Close:  idx.Close,
	}
}

// lazyIndexes opens the indexes on the first search and keeps them.
type lazyIndexes struct {
	c      *catalog.Catalog
	places []catalog.SearchPlace
	mu     sync.Mutex
	ix     *catalog.Indexes
}

func (l *lazyIndexes) sessions(ctx context.Context, text string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		if len(l.places) == 0 {
			return nil, nil
		}
		ix, _, err := l.c.OpenIndexes(ctx, l.places, catalog.IndexOptions{})
		if err != nil {
			ix.Close()
			return nil, err
		}
		l.ix = ix
	} else if err := l.ix.Freshen(ctx); err != nil {
		return nil, err
	}
	ss, err := l.ix.Sessions(ctx, search.Query{Text: text})
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(ss))
	for _, s := range ss {
		paths = append(paths, s.Path)
	}
	return slices.Compact(paths), nil
}

// Close closes the indexes a search opened.
func (l *lazyIndexes) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix != nil {
		l.ix.Close()
	}
}
