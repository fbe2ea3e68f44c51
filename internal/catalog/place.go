package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/sessionname"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// A Place is where sessions live: on this machine, where one harness
// keeps them (an omp-format data dir, xdev's or omp's, or another
// harness's directory, foreign.Kinds), and beyond it, a team's PostgreSQL
// store (Database). Catalog.Place gives the place of a harness, and every
// operation over places goes through this interface: listing (ListPlaces),
// naming (Resolve looks through every place of the machine but the data
// dir at once), searching (PlacesIn), costing (Usage), and saying where
// xdev looked (Where). The interface is sealed: a harness is added as a
// foreign.Source and its registry entry, which harnessPlace serves; only
// the data dir is written. Its implementations: dataDirPlace,
// harnessPlace and *Database.
type Place interface {
	// Harness is whose sessions the place holds (DB for a database).
	Harness() Harness
	// Where is where the place keeps its sessions (or would keep them:
	// what a person is told xdev looked at; "" when it has no home here;
	// a database's URL without its password), and whether it is there.
	Where() (dir string, here bool)
	// List lists its sessions, newest first (ListOptions); nothing when
	// it is not here.
	List(ctx context.Context, opts ListOptions) ([]Row, error)
	// Index is where its local search index reads; an error wrapping
	// fs.ErrNotExist when it is not here, ErrNoIndex for a place searched
	// on its server (Database.Search).
	Index() (SearchPlace, error)
	// Writable reports whether xdev writes sessions here: the data dir
	// only (a database is written by xdev sync alone).
	Writable() bool

	// named are its sessions that the name arg matches at all, by the
	// one naming rule (sessionname.Of); a place that cannot be read
	// holds none.
	named(ctx context.Context, arg string) []Ref
	// usageJobs are its sessions as the usage ledger reads them.
	usageJobs(ctx context.Context) ([]usageJob, error)
	// usageJobsAt are the jobs usageJobs would make of the files at
	// paths (a watcher's, which changed) and only of them, stat'ed; gone
	// are the cache keys of the paths that are no session of the place
	// now. ok is false where only a walk can say (a directory made, or
	// one that may have gone with sessions under it; a place that cannot
	// name its sessions by their files).
	usageJobsAt(paths []string) (jobs []usageJob, gone []string, ok bool)
}

// The places a Place may be.
var (
	_ Place = dataDirPlace{}
	_ Place = harnessPlace{}
	_ Place = (*Database)(nil)
)

// Place is the place of harness h on this machine.
func (c *Catalog) Place(h Harness) Place {
	if h == Xdev || h == Omp {
		dir := c.otherDataDir(h)
		if h == c.cfg.DataDirHarness && c.cfg.DataDir != "" {
			dir = c.cfg.DataDir
		}
		return dataDirPlace{c: c, h: h, dir: dir}
	}
	return harnessPlace{c: c, h: h, src: c.sources[h]}
}

// others are the places here but the data dir, where Resolve looks
// second: every harness's, and the data dir's harness's default one when
// a flag put the data dir elsewhere (fork --data-dir's destination).
func (c *Catalog) others() []Place {
	var out []Place
	for _, h := range Every {
		p := c.Place(h)
		if !p.Writable() {
			out = append(out, p)
		} else if d := c.otherDataDir(h); d != "" {
			out = append(out, dataDirPlace{c: c, h: h, dir: d})
		}
	}
	return out
}

// dataDirPlace is an omp-format data dir: the catalog's (the one xdev
// writes), or omp's or xdev's default where the data dir is elsewhere.
type dataDirPlace struct {
	c   *Catalog
	h   Harness
	dir string // "" when the harness has none apart from the data dir
}

func (p dataDirPlace) Harness() Harness { return p.h }

func (p dataDirPlace) Where() (string, bool) {
	if p.dir == "" {
		return "", false
	}
	dir := session.SessionsDir(p.dir)
	_, err := os.Stat(dir)
	return dir, err == nil
}

func (p dataDirPlace) here() bool { _, ok := p.Where(); return ok }

func (p dataDirPlace) Writable() bool { return p.dir != "" && p.dir == p.c.cfg.DataDir }

func (p dataDirPlace) List(_ context.Context, opts ListOptions) ([]Row, error) {
	if !p.here() {
		return nil, nil
	}
	rows, err := ListDataDir(p.h, p.dir, opts)
	if err == nil && opts.Cwd == "" {
		p.c.noteCwds(p.h, rows)
	}
	return rows, err
}

func (p dataDirPlace) Index() (SearchPlace, error) {
	if !p.here() {
		return SearchPlace{}, fmt.Errorf("no %s sessions: %w", p.h.Name(), fs.ErrNotExist)
	}
	return DataDirPlace(p.h, p.dir), nil
}

func (p dataDirPlace) named(ctx context.Context, arg string) []Ref {
	return namedRows(ctx, p, arg, func(r Row) Ref { return Ref{Harness: p.h, Path: r.Path, ID: r.ID, InDataDir: p.Writable()} })
}

// namedRows are the sessions of p's listing (subagents' included) that
// the name arg matches at all, each as ref makes its Ref; none when p
// cannot be listed.
func namedRows(ctx context.Context, p Place, arg string, ref func(Row) Ref) []Ref {
	rows, err := p.List(ctx, ListOptions{Subagents: true})
	if err != nil {
		return nil
	}
	var out []Ref
	for _, r := range rows {
		// A stored session's name is a slash path on every system.
		if r.Err == nil && sessionname.Of(arg, r.ID, path.Base(filepath.ToSlash(r.Path))) != sessionname.None {
			out = append(out, ref(r))
		}
	}
	return out
}

func (p dataDirPlace) usageJobs(context.Context) ([]usageJob, error) {
	if p.dir == "" {
		return nil, nil
	}
	files, err := session.Files(p.dir)
	if err != nil {
		return nil, err
	}
	return p.jobsOf(files), nil
}

func (p dataDirPlace) usageJobsAt(paths []string) (jobs []usageJob, gone []string, ok bool) {
	if p.dir == "" {
		return nil, nil, false
	}
	files, ok := session.FilesAt(p.dir, paths)
	if !ok {
		return nil, nil, false // a directory
	}
	read := make(map[string]bool, len(files))
	for _, f := range files {
		read[f.Path] = true
	}
	root := session.SessionsDir(p.dir)
	for _, path := range paths {
		if path = filepath.Clean(path); read[path] {
			continue
		}
		if _, err := os.Lstat(path); err != nil && IsUnder(path, root) &&
			!strings.HasSuffix(path, ".jsonl") && !atomicfile.IsTemp(filepath.Base(path)) {
			// Gone, and no session file's name: a directory, maybe, that
			// went with sessions under it.
			return nil, nil, false
		}
		gone = append(gone, string(p.h)+" "+path)
	}
	return p.jobsOf(files), gone, true
}

// jobsOf are the usage jobs of the data dir's session files.
func (p dataDirPlace) jobsOf(files []session.SessionFile) []usageJob {
	jobs := make([]usageJob, 0, len(files))
	// The walk stat'ed every file: its stamps are known.
	stamps := make([]usagecache.Stamp, len(files))
	for k, f := range files {
		stamps[k] = usagecache.Stamp{Size: f.Size, ModTime: f.ModTime.UnixNano(), Ino: f.Ino}
		jobs = append(jobs, usageJob{key: string(p.h) + " " + f.Path, file: f.Path, known: &stamps[k],
			read: func() (usage.Session, error) {
				s, err := usage.ReadSession(f.Path)
				s.Harness = string(p.h)
				return s, err
			}})
	}
	return jobs
}

// harnessPlace is the directory of a harness read in place, through its
// foreign.Source: its sessions are never written.
type harnessPlace struct {
	c   *Catalog
	h   Harness
	src foreign.Source // nil when the harness has no home here
}

func (p harnessPlace) Harness() Harness { return p.h }

func (p harnessPlace) Where() (string, bool) {
	if p.src == nil {
		return "", false
	}
	_, err := os.Stat(p.src.Root())
	return p.src.Root(), err == nil || p.inProjects()
}

func (p harnessPlace) Writable() bool { return false }

// inProjects reports whether the harness keeps sessions in projects
// (foreign.ProjectReader) and some are found: then it is here though its
// own directory is not (Aider's ~/.aider, Crush's global data dir).
func (p harnessPlace) inProjects() bool {
	if _, ok := p.src.(foreign.ProjectReader); !ok {
		return false
	}
	list, _ := p.c.sessionsOf(p.h, false)
	return len(list) > 0
}

func (p harnessPlace) List(_ context.Context, opts ListOptions) ([]Row, error) {
	if p.src == nil {
		return nil, nil
	}
	var list []foreign.Session
	var err error
	if l, ok := p.src.(foreign.CwdLister); ok && opts.Cwd != "" {
		list, err = l.ListCwd(opts.Cwd, opts.Subagents) // one project's files, not every one's
	} else {
		list, err = p.c.sessionsOf(p.h, opts.Subagents)
	}
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, s := range list {
		if opts.Cwd != "" && !sameDir(s.Cwd, opts.Cwd) && !foreign.GeminiProject(s, opts.Cwd) && s.Err == nil {
			continue
		}
		out = append(out, rowOfForeign(p.h, s))
	}
	if opts.Cwd == "" {
		p.c.noteCwds(p.h, out)
	}
	return out, nil
}

// rowOfForeign is the row of harness h's session s, as its listing has
// it.
func rowOfForeign(h Harness, s foreign.Session) Row {
	return Row{Harness: h, ID: s.ID, Title: s.Title, Cwd: s.Cwd, Path: s.Path, Created: s.Created,
		Modified: s.Modified, Size: s.Size, FirstMessage: s.FirstMessage, Subagent: s.Subagent,
		ParentSession: s.ParentSession, Err: s.Err}.masked()
}

func (p harnessPlace) Index() (SearchPlace, error) {
	if p.src == nil {
		return SearchPlace{}, fmt.Errorf("no %s sessions: %w", p.h.Name(), fs.ErrNotExist)
	}
	if k, _ := foreign.KindOf(string(p.h)); k.OmpFormat {
		// Read as it is, as a data dir is.
		if _, err := os.Stat(session.SessionsDir(p.src.Root())); err != nil {
			return SearchPlace{}, fmt.Errorf("no %s sessions: %w", p.h.Name(), err)
		}
		return SearchPlace{Harness: p.h, Dir: p.src.Root(), Root: p.src.Root()}, nil
	}
	if _, err := os.Stat(p.src.Root()); err != nil && !p.inProjects() {
		return SearchPlace{}, fmt.Errorf("no %s sessions: %w", p.h.Name(), err)
	}
	m, err := p.c.mirror(p.h)
	if err != nil {
		return SearchPlace{}, err
	}
	return SearchPlace{Harness: p.h, Dir: m.Dir, Root: p.src.Root(), mirror: m, inPlace: m.InPlace()}, nil
}

func (p harnessPlace) named(_ context.Context, arg string) []Ref {
	if p.src == nil {
		return nil
	}
	if fn, ok := p.src.(foreign.FileNamer); ok {
		// Matched by the files' names, none opened; the one chosen is
		// described by Resolve (Ref.Foreign nil until then).
		var out []Ref
		for _, s := range fn.Files() {
			if sessionname.Of(arg, s.ID, filepath.Base(s.Path)) != sessionname.None {
				out = append(out, Ref{Harness: p.h, Path: s.Path, ID: s.ID})
			}
		}
		return out
	}
	list, err := p.c.sessionsOf(p.h, true)
	if err != nil {
		return nil // a harness that cannot be read holds nothing to find
	}
	if _, projects := p.src.(foreign.ProjectReader); !projects {
		p.c.noteCwdsOf(p.h, len(list), func(k int) string { return list[k].Cwd })
	}
	var out []Ref
	for i := range list {
		if s := &list[i]; s.Err == nil && sessionname.Of(arg, s.ID, filepath.Base(s.Path)) != sessionname.None {
			out = append(out, Ref{Harness: p.h, Path: s.Path, ID: s.ID, Foreign: s})
		}
	}
	return out
}

// usageJobsAt names another harness's files as its usage walk would,
// where the harness can say what it names of a few files alone
// (foreign.UsageSessionsAt: Claude Code's transcripts, Codex's rollouts);
// each file is stat'ed.
func (p harnessPlace) usageJobsAt(paths []string) (jobs []usageJob, gone []string, ok bool) {
	if p.src == nil {
		return nil, nil, false
	}
	list, ok := foreign.UsageSessionsAt(p.src, paths)
	if !ok {
		return nil, nil, false
	}
	grows := foreign.ReadsGrown(p.src)
	named := make(map[string]bool, len(list))
	stamps := make([]usagecache.Stamp, len(list))
	for k := range list {
		s := list[k]
		if s.Err != nil {
			continue
		}
		named[s.Path] = true
		j := p.jobOf(s.Path, func() (foreign.Session, error) { return s, nil }, grows)
		if j.wal || j.file != s.Path {
			return nil, nil, false // a file of many sessions
		}
		st, ok := usagecache.StatStamp(j.file)
		if !ok {
			return nil, nil, false
		}
		stamps[k] = st
		j.known = &stamps[k]
		jobs = append(jobs, j)
	}
	for _, path := range paths {
		if path = filepath.Clean(path); !named[path] {
			gone = append(gone, string(p.h)+" "+path)
		}
	}
	return jobs, gone, true
}

func (p harnessPlace) usageJobs(context.Context) ([]usageJob, error) {
	if p.src == nil {
		return nil, nil
	}
	var list []foreign.Session
	// listed is the session of the listing at a path.
	var listed func(path string) (foreign.Session, error)
	fn, lazy := p.src.(foreign.FileNamer)
	if lazy = lazy && foreign.UsageByListing(p.src); lazy {
		// Named by their files, none opened: the listing a read takes its
		// session from (its cwd, title, parent) is made once, when one is
		// read, which a report of groups kept never does. A file the
		// listing leaves out (not a session of the harness) is no job.
		list = fn.Files()
		byPath := sync.OnceValues(func() (map[string]foreign.Session, error) {
			l, err := foreign.UsageSessions(p.src)
			m := make(map[string]foreign.Session, len(l))
			for _, s := range l {
				if s.Err == nil {
					m[s.Path] = s
				}
			}
			return m, err
		})
		listed = func(path string) (foreign.Session, error) {
			m, err := byPath()
			if err != nil {
				return foreign.Session{}, err
			}
			s, ok := m[path]
			if !ok {
				return foreign.Session{}, errNotListed
			}
			return s, nil
		}
	} else {
		var err error
		if list, err = foreign.UsageSessions(p.src); err != nil {
			return nil, err
		}
	}
	grows := foreign.ReadsGrown(p.src)
	jobs := make([]usageJob, 0, len(list))
	for k := range list {
		s := &list[k]
		if s.Err != nil {
			continue
		}
		// session is s as its read needs it: the listing's, where it was
		// named by its file only. A job holds no copy of s, which is 256
		// bytes, 3.8 MB of a walk of 15,000 transcripts: the listing's
		// slice, or where only the path names the session, its path.
		var session func() (foreign.Session, error)
		if path := s.Path; lazy {
			session = func() (foreign.Session, error) { return listed(path) }
		} else {
			session = func() (foreign.Session, error) { return *s, nil }
		}
		jobs = append(jobs, p.jobOf(s.Path, session, grows))
	}
	return jobs, nil
}

// jobOf is the usage job of the session at path, which session gives as
// its read needs it; grows where the harness's files are read on from
// where a read ended (foreign.ReadsGrown).
func (p harnessPlace) jobOf(path string, session func() (foreign.Session, error), grows bool) usageJob {
	j := usageJob{key: string(p.h) + " " + path, file: path,
		read: func() (usage.Session, error) {
			s, err := session()
			if err != nil {
				return usage.Session{}, err
			}
			return foreign.Usage(p.src, s)
		}}
	if container, database, ok := foreign.ContainerOf(path); ok {
		// One file holds many sessions (a database, a chat history):
		// its stamp, and a database's write-ahead log's, are each
		// session's.
		j.file, j.wal = container, database
	}
	if grows {
		j.readFrom = func(prev usage.Session, from int64) (usage.Session, bool, error) {
			s, err := session()
			if err != nil {
				return usage.Session{}, false, err
			}
			return foreign.UsageFrom(p.src, s, prev, from)
		}
	}
	return j
}

// errNotListed is the read of a usage job whose file its harness's
// listing leaves out: not one of its sessions, and no session of a
// ledger (nothing skipped).
var errNotListed = errors.New("not a session of its harness")
