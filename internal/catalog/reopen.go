package catalog

import (
	"sync"
	"time"
)

// A Reopener paces the reopening of indexes a process keeps open between
// searches (xdev serve, xdev mcp): SQLite's heap, which a search of a
// common word grows by ~17 MB and a refresh by tens, goes back to the
// system only with its connection, while opening the indexes anew for
// every search would cost most of a search's time. So the indexes stay
// open, and are reopened (Indexes.Reopen) a moment after their last use,
// and never later than ReopenWithin after the first use since the last
// reopen: were the reopen put off for as long as uses keep coming (a
// burst of appends, an agent's questions), that heap would stay through
// all of it, on top of the burst's own. The one rule of both programs.
type Reopener struct {
	reopen func()
	timer  *time.Timer

	mu sync.Mutex
	by time.Time // the latest the next reopen may be put off to; zero when none is due
}

// The pace of a Reopener: a moment after a search, a longer one after a
// refresh (more usually follow), and at the latest ReopenWithin after
// the first use.
const (
	ReopenAfterSearch  = 300 * time.Millisecond
	ReopenAfterRefresh = 2 * time.Second
	ReopenWithin       = 5 * time.Second
)

// NewReopener is a Reopener that calls reopen (which reopens the
// indexes, under whatever lock guards them) at its pace.
func NewReopener(reopen func()) *Reopener {
	r := &Reopener{reopen: reopen}
	r.timer = time.AfterFunc(time.Hour, r.fire)
	r.timer.Stop()
	return r
}

// Used is told of each use of the indexes: they are reopened after (one
// of the Reopen durations) has passed with no other use, or ReopenWithin
// after the first.
func (r *Reopener) Used(after time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.by.IsZero() {
		r.by = now.Add(ReopenWithin)
	}
	r.timer.Reset(min(after, r.by.Sub(now)))
}

// Stop stops a reopen that is due; a use after it schedules one again.
func (r *Reopener) Stop() { r.timer.Stop() }

func (r *Reopener) fire() {
	r.mu.Lock()
	r.by = time.Time{}
	r.mu.Unlock()
	r.reopen()
}
