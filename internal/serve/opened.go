package serve

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/session"
)

// opened keeps the indexes of the sessions pages last showed open, so
// that the next window of a long session, or its next live entries, do
// not read the file again: an index is reused while its file's stat is
// the same, and read again once the file changed.
type opened struct {
	mu   sync.Mutex
	list []*openIndex
}

// keepOpen is how many indexes no request uses are kept.
const keepOpen = 4

type openIndex struct {
	path  string
	stamp stamp
	x     *session.Index
	refs  int
	used  time.Time
}

// stamp is what tells a file changed.
type stamp struct {
	ino, size int64
	mtime     int64
}

func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(sys.Ino)
	}
	return st, nil
}

// get returns the index of rd's file, and what to call when done with it.
func (o *opened) get(rd catalog.Readable) (*session.Index, func(), error) {
	st, err := stampOf(rd.Path)
	if err != nil {
		return nil, nil, err
	}
	o.mu.Lock()
	for _, e := range o.list {
		if e.path == rd.Path && e.stamp == st {
			e.refs++
			e.used = time.Now()
			o.mu.Unlock()
			return e.x, o.releaser(e), nil
		}
	}
	o.mu.Unlock()
	x, err := rd.OpenIndex()
	if err != nil {
		return nil, nil, err
	}
	e := &openIndex{path: rd.Path, stamp: st, x: x, refs: 1, used: time.Now()}
	o.mu.Lock()
	o.list = append(o.list, e)
	o.trim()
	o.mu.Unlock()
	return x, o.releaser(e), nil
}

func (o *opened) releaser(e *openIndex) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			e.refs--
			o.trim()
			o.mu.Unlock()
		})
	}
}

// trim closes the indexes no request uses beyond the newest keepOpen, and
// those of a file that has since changed (a newer index of it is open).
func (o *opened) trim() {
	idle := 0
	for i := len(o.list) - 1; i >= 0; i-- {
		e := o.list[i]
		if e.refs > 0 {
			continue
		}
		newer := false
		for _, f := range o.list[i+1:] {
			newer = newer || f.path == e.path
		}
		if idle++; idle > keepOpen || newer {
			e.x.Close()
			o.list = append(o.list[:i], o.list[i+1:]...)
		}
	}
}

// close closes every index (the server is stopping).
func (o *opened) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.list {
		e.x.Close()
	}
	o.list = nil
}
