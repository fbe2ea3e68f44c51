package catalog

import (
	"sync"

	"github.com/xdev/xdev/internal/foreign"
)

// Listings. A harness's listing stats every transcript it has (25,000 of
// them on a large archive), and one command may want it several times:
// a search lists Claude Code's sessions for the working directories
// where Crush and Aider keep theirs, then again to bring their mirror up
// to date. A catalog made for one command (Config.ListOnce) keeps each
// listing it makes for its life, so that every transcript is stat'ed
// once; a long-lived one (serve's, mcp's) lists anew each time, to see
// sessions come and go.

// listings keeps a ListOnce catalog's listings, by harness and whether
// subagents' are in.
type listings struct {
	mu   sync.Mutex
	made map[listingKey]*listing
}

type listingKey struct {
	h         Harness
	subagents bool
}

type listing struct {
	once sync.Once
	list []foreign.Session
	err  error
}

// sessionsOf is what h's source lists (subagents' sessions with
// subagents): listed now, or under Config.ListOnce the catalog's one
// listing of it. The slice is shared: callers do not change it.
func (c *Catalog) sessionsOf(h Harness, subagents bool) ([]foreign.Session, error) {
	src := c.sources[h]
	if !c.cfg.ListOnce {
		return src.List(subagents)
	}
	c.listings.mu.Lock()
	if c.listings.made == nil {
		c.listings.made = map[listingKey]*listing{}
	}
	k := listingKey{h, subagents}
	l := c.listings.made[k]
	if l == nil {
		l = &listing{}
		c.listings.made[k] = l
	}
	c.listings.mu.Unlock()
	l.once.Do(func() { l.list, l.err = src.List(subagents) })
	return l.list, l.err
}
