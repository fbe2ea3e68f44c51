package serve

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/session"
)

// The pace of refreshes: a burst of changes is taken together once it has
// been quiet for settle, or maxWait after its first change, whichever is
// first, so that a session being written shows on its page within a
// second and a burst of many files is read once.
const (
	settle  = 200 * time.Millisecond
	maxWait = time.Second
	// usageEvery is the least time between two rebuilds of the usage
	// ledger (its costs on the sessions page, the usage page).
	usageEvery = 30 * time.Second
	// settledAfter is how soon the ledger is rebuilt after one that
	// found sessions written too recently to trust to the cache (a
	// second, usageStamp.fresh in internal/catalog, and a little).
	settledAfter = 1100 * time.Millisecond
	// maxSettleWait is how long a rebuild due waits for the changes to
	// settle (settledAfter) while they go on: past it, one is built
	// with the sessions too recent read again.
	maxSettleWait = 5 * time.Second
	// relistEvery is the least time between two listings of a harness's
	// sessions while they keep changing: a session's page is told of its
	// changes at once, the list within this.
	relistEvery = 2 * time.Second
	// maxTouched bounds the changed files a round tells pages of; a
	// larger burst is told by the listing's changes.
	maxTouched = 1000
)

// maxWatches bounds the directories watched: past it (inotify's limit is
// often 8,192 per user) the rest are not, which is said.
const maxWatches = 50000

// Run keeps the server fresh until ctx ends: it watches every place,
// refreshes the indexes (the first time, all of them), lists the
// sessions again and rebuilds the usage ledger as they change, and tells
// the open pages. It returns when ctx ends (nil) or the watcher cannot
// be made.
func (s *Server) Run(ctx context.Context) error {
	s.runCtx.Store(ctx)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	s.usageLive.hold(s.cat, s.cfg.UsageCache, s.cfg.Logf)
	go s.viewsLoop(ctx)

	// Watch before the first refresh, so that nothing written during it
	// is missed.
	places, placesErr := s.cat.PlacesIn(catalog.Every)
	if placesErr != nil {
		s.cfg.Logf("%v", placesErr)
	}
	var roots []string
	whole := make([]bool, len(places)) // every directory of the place is watched
	watched := 0
	also := map[string]int{} // a project's directory, watched alone: its place
	for k, p := range places {
		root := p.Watched()
		roots = append(roots, root)
		alsoDirs := p.WatchedAlso()
		var n int
		if _, err := os.Stat(root); err == nil || !p.InProjects() {
			n, whole[k] = s.watchTree(w, root, maxWatches-watched, nil)
		} else {
			whole[k] = true // a harness of the projects alone: its own dir is not made
		}
		watched += n
		watched += s.watchProjects(w, k, alsoDirs, also, maxWatches-watched, &whole[k])
	}
	stats, err := s.openIndexes(ctx, places)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.cfg.Logf("search index: %v", err)
	}
	// Said before the first ledger is asked for, so that it never marks
	// clean a cache of places not watched whole.
	for k := range roots {
		if !whole[k] {
			s.usageLive.unwatched()
		}
	}
	if placesErr != nil {
		s.usageLive.unwatched() // a harness's place is not known, so not watched
	}
	if err != nil || placesErr != nil {
		s.kickViews(nil) // every harness listed again
	} else {
		s.kickViews(s.changedAtStart(places, stats))
	}
	for k := range roots {
		if m := s.marker(k); m != nil && whole[k] {
			m.Clean()
		} else if m != nil {
			m.Unwatched()
		}
	}
	// The sync requests of other processes (internal/live), watched by the
	// same watcher as the sessions, so that a request comes after every
	// change made before it.
	markerOf := map[string]int{}
	for k := range roots {
		if m := s.marker(k); m != nil {
			markerOf[m.Path()] = k
		}
	}
	syncDirs := map[string]bool{}
	usageMarker := s.usageLive.markerPath()
	dirs := []string{s.usageLive.syncDir()}
	for p := range markerOf {
		dirs = append(dirs, live.SyncDir(filepath.Dir(p)))
	}
	for _, dir := range dirs {
		if dir == "" || syncDirs[dir] {
			continue
		}
		syncDirs[dir] = true
		clearSyncDir(dir)
		if err := os.MkdirAll(dir, 0o700); err == nil {
			if err := w.Add(dir); err != nil {
				s.cfg.Logf("watching %s: %v", dir, err)
			}
		}
	}

	dirty := map[int]bool{}
	touched := map[string]bool{} // the keys of the files changed, for the pages open on them
	seen := map[int]*pending{}   // the files changed, for the listing of their place's harness
	seenAt := func(k int) *pending {
		if seen[k] == nil {
			seen[k] = &pending{}
		}
		return seen[k]
	}
	stale := map[int]bool{} // the places whose last refresh failed
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors:
			// The kernel's queue overflowed, or a watch failed: every
			// place may have changed unseen.
			s.cfg.Logf("watching: %v", err)
			s.usageLive.changed("", "")
			for k := range roots {
				dirty[k] = true
				seen[k] = wholePending()
				if m := s.marker(k); m != nil {
					m.Dirty()
				}
			}
			timer.Reset(settle)
		case ev := <-w.Events:
			if syncDirs[filepath.Dir(ev.Name)] {
				marker, ok := live.Request(ev.Name)
				if ok && marker == usageMarker && ev.Has(fsnotify.Create) {
					s.usageAsked.Store(time.Now().UnixNano())
					if s.usageLive.ask(ev.Name) {
						s.kickUsage()
					}
					continue
				}
				k, mine := markerOf[marker]
				if !ok || !mine || !ev.Has(fsnotify.Create) {
					continue
				}
				if dirty[k] || stale[k] {
					// Everything before the request is in: index it now,
					// answer, then list and tell the pages.
					timer.Stop()
					dirty[k] = true
					failed := s.refreshIndexes(ctx, dirty, whole, seen)
					for d := range dirty {
						stale[d] = failed[d]
					}
					live.Answer(ev.Name, !failed[k])
					s.afterRefresh(places, dirty, touched, seen)
					clear(dirty)
					clear(touched)
					clear(seen)
					continue
				}
				live.Answer(ev.Name, true)
				continue
			}
			k := placeOf(roots, ev.Name)
			if p, ok := also[filepath.Dir(ev.Name)]; ok && k < 0 {
				if !places[p].Concerns(ev.Name) {
					continue // another file of the project
				}
				k = p
			}
			if k < 0 || session.IsLockfile(ev.Name) {
				continue
			}
			for _, j := range placesOf(roots, ev.Name, k) {
				s.usageLive.changed(places[j].Harness, ev.Name)
			}
			if !dirty[k] {
				if m := s.marker(k); m != nil {
					m.Dirty()
				}
			}
			if len(dirty) == 0 {
				first = time.Now()
			}
			dirty[k] = true
			if len(touched) < maxTouched {
				touched[keyOf(places[k].Harness, ev.Name)] = true
			}
			dirMade := false
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					// A directory made or moved into place: its files
					// came with no events of their own, so they are
					// named from the walk that watches it.
					n, ok := s.watchTree(w, ev.Name, maxWatches-watched, seenAt(k).add)
					watched += n
					whole[k] = whole[k] && ok
					dirMade = ok
					if !ok {
						s.usageLive.unwatched()
					}
					// Its files are a ledger's to find (a walk).
					s.usageLive.changed(places[k].Harness, "")
				}
			}
			if !dirMade {
				seenAt(k).add(ev.Name)
			}
			wait := min(settle, time.Until(first.Add(maxWait)))
			timer.Reset(max(wait, 0))
		case <-s.projectsKick:
			// A listing named a directory not seen before: a project whose
			// Crush or Aider sessions are now to be watched, and listed.
			for k, p := range places {
				if !p.InProjects() {
					continue
				}
				before := len(also)
				watched += s.watchProjects(w, k, p.WatchedAlso(), also, maxWatches-watched, &whole[k])
				if len(also) > before {
					if len(dirty) == 0 {
						first = time.Now()
					}
					dirty[k] = true
					seen[k] = wholePending()
					timer.Reset(settle)
				}
			}
		case <-timer.C:
			failed := s.refreshIndexes(ctx, dirty, whole, seen)
			for k := range dirty {
				if stale[k] = failed[k]; failed[k] {
					if m := s.marker(k); m != nil {
						m.Dirty() // until a refresh of it succeeds
					}
				}
			}
			s.afterRefresh(places, dirty, touched, seen)
			clear(dirty)
			clear(touched)
			clear(seen)
		}
	}
}

// watchProjects watches each of dirs not watched yet, alone (not its
// tree), as a directory of place k's projects (also), at most limit of
// them; it returns how many it added, and clears whole for one it could
// not.
func (s *Server) watchProjects(w *fsnotify.Watcher, k int, dirs []string, also map[string]int, limit int, whole *bool) (n int) {
	for _, dir := range dirs {
		if _, ok := also[dir]; ok {
			continue
		}
		if n >= limit {
			*whole = false
			break
		}
		if err := w.Add(dir); err != nil {
			s.cfg.Logf("watching %s: %v", dir, err)
			*whole = false
			continue
		}
		also[dir] = k
		n++
	}
	return n
}

// refreshIndexes refreshes the dirty places' indexes and marks them
// clean, and returns those it could not refresh. A change made while a
// place is read comes as an event after it, and marks it dirty again.
// Where the watcher named the files that changed (seen), only they are
// read: an append costs what the appended line costs, not a walk of
// every session.
func (s *Server) refreshIndexes(ctx context.Context, dirty map[int]bool, whole []bool, seen map[int]*pending) (failed map[int]bool) {
	var read int64
	defer func() {
		// SQLite's heap, grown by a refresh of much, back once idle; an
		// append's few lines grow it by little, and reopening the indexes
		// after each cost more than the append.
		if read >= reopenAfterBytes || len(failed) > 0 {
			s.reopen.Used(catalog.ReopenAfterRefresh)
		}
	}()
	failed = map[int]bool{}
	for k := range dirty {
		var paths []string
		if p := seen[k]; p != nil && !p.whole && len(p.paths) > 0 {
			paths = p.list()
		}
		ok, n := s.refreshIndex(ctx, k, paths)
		read += n
		if !ok {
			failed[k] = true
			continue
		}
		if m := s.marker(k); m != nil && whole[k] {
			m.Clean()
		}
	}
	return failed
}

// afterRefresh tells the pages open on the files that changed (a
// session's page asks for its new entries, which it reads from the file,
// not from the listing), and asks for the sessions of the dirty places
// to be listed again, from the files seen to change there, and for the
// usage ledger; the views loop does that, so that the watcher goes on
// taking events meanwhile. A dirty place with no file seen (a refresh
// retried) is listed whole.
func (s *Server) afterRefresh(places []catalog.SearchPlace, dirty map[int]bool, touched map[string]bool, seen map[int]*pending) {
	for key := range touched {
		s.events.publish(event{name: "session", data: key})
	}
	changes := map[catalog.Harness]*pending{}
	for k := range dirty {
		h := places[k].Harness
		if changes[h] == nil {
			changes[h] = &pending{}
		}
		changes[h].merge(cmp.Or(seen[k], wholePending()))
	}
	s.kickViews(changes)
}

// returnMemory hands the memory a refresh or a rebuild of the ledger
// used back to the system: they are bursts, and a server that sits idle
// between them should hold only what it keeps.
func returnMemory() { debug.FreeOSMemory() }

// watchTree watches dir and every directory under it (not through
// symbolic links), at most limit of them, and tells file (if not nil)
// of every other thing it finds there; it returns how many directories
// it added, and whether that is all of them.
func (s *Server) watchTree(w *fsnotify.Watcher, dir string, limit int, file func(path string)) (n int, whole bool) {
	whole = true
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // gone while walked
			}
			whole = false
			return nil
		}
		if d.IsDir() && atomicfile.IsTemp(d.Name()) {
			// A directory being made (atomicfile's Link): it takes its
			// name by a rename, which the watch would not follow (its
			// events would keep naming the temp name). Watched when it
			// appears under its own.
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if file != nil {
				file(path)
			}
			return nil
		}
		if n >= limit {
			whole = false
			s.cfg.Logf("watching: more than %d directories; %s and the rest are not watched (changes there show on the next change elsewhere)", maxWatches, path)
			return filepath.SkipAll
		}
		if err := w.Add(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			s.cfg.Logf("watching %s: %v", path, err)
			whole = false
			return filepath.SkipDir
		}
		n++
		return nil
	})
	return n, whole && err == nil
}

// clearSyncDir removes the requests and answers a killed process left in
// dir (those older than a minute).
func clearSyncDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// placeOf is the index of the root path lies under, or -1.
func placeOf(roots []string, path string) int {
	for k, r := range roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return k
		}
	}
	return -1
}

// placesOf are the places of the file at path, k first (placeOf's, or
// the place of the project it lies in) and any other whose root holds it
// too: a change is each one's.
func placesOf(roots []string, path string, k int) []int {
	out := []int{k}
	for j, r := range roots {
		if j != k && r != "" && (path == r || strings.HasPrefix(path, r+string(filepath.Separator))) {
			out = append(out, j)
		}
	}
	return out
}

// kickViews asks the views loop to list the sessions of the harnesses
// in changes again, from what changed (every harness whole when changes
// is nil), and to rebuild the usage ledger when it is due.
func (s *Server) kickViews(changes map[catalog.Harness]*pending) {
	s.dueMu.Lock()
	if changes == nil {
		changes = map[catalog.Harness]*pending{}
		for _, h := range catalog.Every {
			changes[h] = wholePending()
		}
	}
	for h, p := range changes {
		if s.due[h] == nil {
			s.due[h] = &pending{}
		}
		s.due[h].merge(p)
	}
	s.dueMu.Unlock()
	select {
	case s.viewsKick <- struct{}{}:
	default:
	}
}

// changedAtStart is what to list again once the first refresh is done:
// New listed every harness before the watches were set, so a file
// changed in between is seen by no watch. The first refresh came after
// them and compared every file with what the index last read: a
// harness whose every place it found as it was (nothing new, grown,
// rewritten, gone or unreadable) has nothing changed since New listed
// it, and keeps its rows; the others are listed again whole, as is a
// harness of no place or whose listing failed. (Listing every harness
// again, while New's listing was still held, was most of a start's
// peak: two libraries and two reads of the list caches, and a second
// of CPU at 25,001 sessions.)
func (s *Server) changedAtStart(places []catalog.SearchPlace, stats []search.RefreshStats) map[catalog.Harness]*pending {
	changes := map[catalog.Harness]*pending{}
	placed := map[catalog.Harness]bool{}
	for k, p := range places {
		placed[p.Harness] = true
		if k >= len(stats) || stats[k].Grown+stats[k].Indexed+stats[k].Removed > 0 || len(stats[k].Errors) > 0 {
			changes[p.Harness] = wholePending()
		}
	}
	for _, h := range catalog.Every {
		if !placed[h] || s.failed[h] != nil {
			changes[h] = wholePending()
		}
	}
	return changes
}

// usageDemand is how long a request that shows usage (a page of costs,
// a ledger a terminal asks the server for) keeps the usage ledger
// rebuilt as sessions change, beside the pages open: with none open and
// nobody asking, a burst of appends rebuilds no ledger (most of what an
// append cost the server at 25,000 sessions), and the next request has
// one made.
const usageDemand = time.Minute

// wantUsage is told of a request that shows usage: it keeps the ledger
// rebuilt a while, and has one made now when changes wait for it.
func (s *Server) wantUsage() {
	s.usageAsked.Store(time.Now().UnixNano())
	if s.usageIdle.Load() {
		s.kickUsage()
	}
}

// usageWanted reports whether a rebuild of the usage ledger would be
// looked at: the first, a page open (its stream), a request waiting, or
// one made within usageDemand.
func (s *Server) usageWanted() bool {
	return s.use.Load().made.IsZero() || s.streams.Load() > 0 || s.usageLive.waiting() ||
		time.Since(time.Unix(0, s.usageAsked.Load())) < usageDemand
}

// kickUsage asks the views loop for the usage ledger (now, when a
// request waits for it), listing nothing again.
func (s *Server) kickUsage() {
	select {
	case s.viewsKick <- struct{}{}:
	default:
	}
}

// reopenAfterBytes is the least a round of refreshes reads for the
// indexes to be reopened after it (catalog.Reopener).
const reopenAfterBytes = 1 << 20

// idleAfter is how long the views loop waits after its last heavy work
// before it hands memory back to the system: not after every round of a
// burst, nor after a round that made little garbage (a patched library:
// a collection of the whole heap then cost more than the round).
const idleAfter = 2 * time.Second

// viewsLoop builds the views the pages show from what changed: the
// listing of the harnesses that changed at once, the usage ledger at
// most every usageEvery. One thing at a time, so that their peaks of
// memory never add up, and off the watcher's loop, so that it answers
// the CLI's questions meanwhile; once it has been idle a moment it hands
// the memory it used back to the system.
func (s *Server) viewsLoop(ctx context.Context) {
	var lastUsage, lastList, wakeAt time.Time
	usageDue := false
	projectsGen := s.cat.ProjectsSeen()
	settling, settleGen := false, uint64(0) // the last rebuild found racy sessions, at this generation
	asap := false                           // a request waited for changes: rebuild once they settle
	var dueAt time.Time                     // when the rebuild waiting was first due
	later := time.NewTimer(time.Hour)
	later.Stop()
	var idle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.viewsKick:
			usageDue = true
		case <-later.C:
			wakeAt = time.Time{}
		case <-idle:
			idle, s.heavy = nil, false
			returnMemory()
			continue
		}
		wake := time.Duration(0)
		if wait := time.Until(lastList.Add(relistEvery)); wait > 0 {
			wake = wait
		} else if due := s.takeDue(); len(due) > 0 {
			s.relist(due)
			lastList = time.Now()
			if gen := s.cat.ProjectsSeen(); gen != projectsGen {
				projectsGen = gen
				select {
				case s.projectsKick <- struct{}{}:
				default:
				}
			}
		}
		if usageDue && !s.usageWanted() {
			// Nobody looks: the changes wait for a request (wantUsage).
			s.usageIdle.Store(true)
			dueAt = time.Time{}
		} else if usageDue {
			wait := time.Until(lastUsage.Add(usageEvery))
			if s.usageIdle.Swap(false) {
				// Changes waited for this request: at once (once they
				// settle, below), once.
				asap = true
			}
			if asap {
				wait = 0
			}
			if settling && s.usageLive.quiet(settleGen) {
				// The sessions the last rebuild found too recent to trust
				// to the cache have settled, and nothing changed since:
				// a rebuild now trusts them, and a ledger of the CLI's
				// then walks nothing.
				wait = min(wait, time.Until(lastUsage.Add(settledAfter)))
			}
			// A change seen within the last second is too recent for a
			// ledger to trust its file's stamp: one built now would be
			// built again once it settles, each time whole, where one
			// built then counts only the sessions that grew again
			// (catalog's recount, which takes nothing counted from a
			// racy file). So the rebuild waits for the changes to settle
			// (the usage shown lags an append by ~1.1 s, not 0.2),
			// unless they go on for longer than maxSettleWait.
			if wait <= 0 && dueAt.IsZero() {
				dueAt = time.Now()
			}
			if d := s.usageLive.unsettled(); d > 0 && time.Since(dueAt) < maxSettleWait {
				wait = max(wait, d)
			}
			// A request of the CLI's (usageLive) is answered by a rebuild
			// now, whatever the pace.
			if wait > 0 && !s.usageLive.waiting() {
				wake = min(cmp.Or(wake, wait), wait)
			} else {
				usageDue, lastUsage, asap, dueAt = false, time.Now(), false, time.Time{}
				v, gen := s.rebuildUsage(ctx)
				s.heavy = true
				if settling = v.racy > 0; settling {
					usageDue, settleGen = true, gen
					wake = min(cmp.Or(wake, settledAfter), settledAfter)
				}
			}
		}
		if at := time.Now().Add(wake); wake > 0 && (wakeAt.IsZero() || at.Before(wakeAt)) {
			wakeAt = at
			later.Reset(wake)
		}
		if s.heavy {
			idle = time.After(idleAfter)
		}
	}
}

// reopenIndexes closes the indexes and opens them again: SQLite's heap,
// which a search of a common word or a refresh grows by tens of MB, goes
// back to the system only with its connection. It runs once the indexes
// have not been used a moment, or have been used for a while
// (catalog.Reopener), whatever else the server is doing.
func (s *Server) reopenIndexes() {
	s.ixMu.Lock()
	if s.ix != nil {
		if err := s.ix.Reopen(); err != nil {
			s.cfg.Logf("%v", err)
		}
	}
	s.ixMu.Unlock()
	returnMemory()
}

// takeDue is what the harnesses asked to be listed again wait for, and
// forgets it.
func (s *Server) takeDue() map[catalog.Harness]*pending {
	s.dueMu.Lock()
	defer s.dueMu.Unlock()
	due := s.due
	s.due = map[catalog.Harness]*pending{}
	return due
}
