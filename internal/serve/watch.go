package serve

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/xdev/xdev/internal/live"
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
	usageEvery = 10 * time.Second
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
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	go s.usageLoop(ctx)
	s.kickUsage()

	// Watch before the first refresh, so that nothing written during it
	// is missed.
	places, err := s.cat.PlacesEvery()
	if err != nil {
		s.cfg.Logf("%v", err)
	}
	var roots []string
	whole := make([]bool, len(places)) // every directory of the place is watched
	watched := 0
	for k, p := range places {
		root := p.Watched()
		roots = append(roots, root)
		var n int
		n, whole[k] = s.watchTree(w, root, maxWatches-watched)
		watched += n
	}
	if err := s.openIndexes(ctx, places); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.cfg.Logf("search index: %v", err)
	}
	s.relist()
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
	for p := range markerOf {
		dir := live.SyncDir(filepath.Dir(p))
		if syncDirs[dir] {
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
			for k := range roots {
				dirty[k] = true
				if m := s.marker(k); m != nil {
					m.Dirty()
				}
			}
			timer.Reset(settle)
		case ev := <-w.Events:
			if syncDirs[filepath.Dir(ev.Name)] {
				marker, ok := live.Request(ev.Name)
				k, mine := markerOf[marker]
				if !ok || !mine || !ev.Has(fsnotify.Create) {
					continue
				}
				if dirty[k] {
					// Everything before the request is in: index it now.
					timer.Stop()
					s.refresh(ctx, dirty, whole)
					clear(dirty)
				}
				live.Answer(ev.Name)
				continue
			}
			k := placeOf(roots, ev.Name)
			if k < 0 {
				continue
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
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					n, ok := s.watchTree(w, ev.Name, maxWatches-watched)
					watched += n
					whole[k] = whole[k] && ok
				}
			}
			wait := min(settle, time.Until(first.Add(maxWait)))
			timer.Reset(max(wait, 0))
		case <-timer.C:
			s.refresh(ctx, dirty, whole)
			clear(dirty)
		}
	}
}

// refresh refreshes the dirty places' indexes, marks them clean, lists
// the sessions again and asks for the usage ledger. A change made while
// a place is read comes as an event after it, and marks it dirty again.
func (s *Server) refresh(ctx context.Context, dirty map[int]bool, whole []bool) {
	for k := range dirty {
		ok := s.refreshIndex(ctx, k)
		if m := s.marker(k); m != nil && ok && whole[k] {
			m.Clean()
		}
	}
	s.relist()
	s.kickUsage()
}

// watchTree watches dir and every directory under it (not through
// symbolic links), at most limit of them; it returns how many it added,
// and whether that is all of them.
func (s *Server) watchTree(w *fsnotify.Watcher, dir string, limit int) (n int, whole bool) {
	whole = true
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // gone while walked
			}
			whole = false
			return nil
		}
		if !d.IsDir() {
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

// kickUsage asks the usage loop for a new ledger.
func (s *Server) kickUsage() {
	select {
	case s.usageKick <- struct{}{}:
	default:
	}
}

// usageLoop rebuilds the usage ledger when asked, at most every
// usageEvery.
func (s *Server) usageLoop(ctx context.Context) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.usageKick:
		}
		if wait := time.Until(last.Add(usageEvery)); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		last = time.Now()
		v := s.buildUsage(ctx)
		s.use.Store(v)
		s.events.publish(event{name: "usage", data: "1"})
	}
}
