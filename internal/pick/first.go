package pick

import (
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/catalog"
)

// First is the session the picker would select first for opts.Query,
// with no screen: every place listed, the query's filter, and the index
// searched where the picker would search it. ok is false when nothing
// matches.
func First(opts Options) (catalog.Row, bool, error) {
	m := New(opts)
	defer m.Close()
	if opts.Source.List != nil {
		var mu sync.Mutex
		err := opts.Source.List(m.ctx, func(h catalog.Harness, rows []catalog.Row) {
			mu.Lock()
			m.items = merge(m.items, h, rows, m.opts.Cwd)
			mu.Unlock()
		})
		if err != nil && len(m.items) == 0 {
			return catalog.Row{}, false, err
		}
	}
	m.refilter()
	q := ParseQuery(opts.Query)
	if (q.FullText() || m.fallback) && opts.Source.Search != nil {
		text := q.Text
		if !q.FullText() {
			text = strings.Join(q.Words, " ")
		}
		paths, err := opts.Source.Search(m.ctx, text)
		if err != nil {
			return catalog.Row{}, false, err
		}
		m.found = foundSet{text: text, paths: paths, done: true}
		m.refilter()
	}
	row, ok := m.current()
	return row, ok, nil
}
