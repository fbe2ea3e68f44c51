// Package catalog knows where sessions live, on this machine and in a
// team's database, and how to find the one a person names.
//
// # Places
//
// A Catalog is made from a Config: the data dir (xdev's, or omp's with
// --omp, or one a flag names), the working directory, and the roots of the
// other harnesses whose sessions xdev reads in place (foreign.Kinds, the
// registry: Claude Code, Codex, pi, …; each root defaults to where that
// harness keeps them). Everything xdev writes goes into the data dir; the
// other places are only read.
//
// A Place is where sessions live, one interface with three
// implementations: an omp-format data dir (xdev's, omp's), another
// harness's directory, read through its foreign.Source, and a team's
// PostgreSQL store (*Database). Catalog.Place gives the place of a
// harness; listing (ListPlaces), naming, searching and costing go through
// it.
//
// # Naming a session
//
// Resolve turns a SESSION argument into a Ref by one rule, the same for
// every command:
//
//  1. An empty argument is an error (ErrEmptyArgument).
//  2. A path: an argument that holds a path separator or ends in .jsonl
//     (or .jsonl.zst) and names something that is there. It must be a
//     regular file (a directory, FIFO or device is refused before it is
//     read). Whose session it is follows from where it lies (under the
//     data dir, or under a harness's root), else from what it holds.
//  3. A session of the data dir, by the one naming rule (package
//     sessionname: its id, its file name with or without .jsonl or the id
//     part of the file name, exactly, else as a prefix, whatever the
//     case); the working directory's project first, then every project.
//     Several matches are an *AmbiguousError.
//  4. Unless a flag chose the data dir (Config.Explicit): a session of
//     another place here, by the same rule over all of them at once: the
//     other omp-format data dirs (omp's; xdev's own when the data dir is
//     elsewhere, as fork --data-dir's destination is) and every other
//     harness; several matches are an *AmbiguousError.
//
// A stored session (Database.Find) is named by the same rule.
//
// The first rule that matches decides; a rule that finds several sessions
// is an error, never a guess.
//
// # Listing
//
// A Row is a session as a listing shows it, whatever its place:
// ListDataDir lists an omp-format data dir (each file's head and tail:
// title, status, first message), List another harness's sessions (from
// each transcript's head and the harness's own indexes). Neither reads a
// whole session. A file where sessions live that is not one is a Row
// with Err, to be reported, never dropped. Relist keeps a data dir's
// listing current from the paths a watcher names, reading only those
// files, and says when it cannot (a directory made or removed whole),
// for a whole listing instead.
//
// # Reading
//
// Open gives a Ref as a reader opens it (Readable): the data dir's and
// other omp-format files as they are; a Claude Code or Codex session
// through its mirror in xdev's cache (foreign.Mirror.Ensure), converted
// for reading when its source changed. Nothing is written beside a
// source, nor to a temp dir. Readable.Line names an entry's line in the
// file a person has (the source transcript's).
//
// # Searching
//
// A SearchPlace is where one index reads (Place.Search): a data dir as it
// is (DataDirPlace), or a harness's sessions (pi's dir as it is; Claude
// Code's and Codex's transcripts in place, converted as the index reads
// them, foreign.Mirror.IndexSource; the others' through their mirror
// files). OpenIndexes opens and refreshes the index of each place;
// Indexes.Search runs a query on all of them and merges the hits by
// position (search.Merge), since the bm25 ranks of separate indexes share
// no scale; a hit names the source's path, line and modification time.
//
// An index that a running `xdev serve` keeps fresh is not refreshed by
// OpenIndexes: its live marker (internal/live) is held, and the server
// answers that it took every change made before the question. A process
// that keeps indexes open (serve) refreshes one with Indexes.Refresh.
//
// # Every harness at once
//
// Every lists the harnesses in the order a view of all of them shows
// them, and every command that reads sessions reads all of them by
// default (most of a person's sessions are another harness's): Scope is
// the harnesses a command reads given the one a person named (the data
// dir alone when a flag chose it), Where the directory each keeps its
// sessions in and whether it is on this machine; Places are their places
// and ListPlaces lists the sessions of some (DataDirOf names the
// omp-format data dirs here), PlacesIn their search places,
// SearchPlace.Watched the directory a watcher of a place watches, and RefOf
// names a listed row as Resolve would.
//
// # Databases
//
// A Database is a team's PostgreSQL store, a place beside the machine's
// (OpenDatabase reads and never creates; OpenDatabaseForSync may make or
// migrate xdev's schema): xdev's tables, synced sessions by revision, or
// omp's SQL table as omp's SqlSessionStorage keeps it. It lists its
// sessions as Rows by the local rules, finds one (Find) as Resolve names a
// data dir's (id, prefix, file name, path; ID@N a revision), opens it
// windowed from the server (StoredSession.OpenStore) or for a reader
// (StoredSession.Readable: through its rows, or one row of omp's table
// cached whole under xdev's cache dir), searches on the server
// (Database.Search, hits in the local shape), and syncs with a data dir
// (Push, Pull: never truncating or replacing a local file).
//
// # Importing
//
// Import converts a Claude Code or Codex session as omp's importer does
// into a new session of the data dir, refusing one imported before.
//
// # Usage
//
// Usage builds the usage ledger (internal/usage) of a set of places:
// every session and subagent transcript of each, an omp-format file read
// by usage.ReadSession and another harness's by foreign.Usage. What was
// read of each file is kept in xdev's cache (package usagecache) by the
// file's stamp: its header, its digest, its calls and the keys they hold,
// so that a warm ledger reads only the files that changed (a Claude Code
// transcript that only grew, from where it ended) and decodes calls only
// of the sessions that may share one. While a running xdev serve vouches
// for a cache (internal/live; it builds its ledger with
// UsageOptions.Vouching, so that the cache names every session as it
// is), a ledger of the same places takes its sessions from the cache
// with no walk, but for the harnesses with a session written a moment
// ago. Database.Usage is the ledger of a team's stored sessions.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/sessionname"
)

// Harness names who wrote a session.
type Harness string

// The harnesses.
const (
	Xdev   Harness = "xdev"   // the data dir (xdev's own)
	Omp    Harness = "omp"    // omp's agent dir
	Claude Harness = "claude" // Claude Code
	Codex  Harness = "codex"  // Codex
	Pi     Harness = "pi"     // pi
	// Copilot is GitHub Copilot CLI.
	Copilot Harness = "copilot"
	// Gemini is Gemini CLI.
	Gemini Harness = "gemini"
	// Opencode is opencode (its SQLite database).
	Opencode Harness = "opencode"
	// Qwen is Qwen Code.
	Qwen Harness = "qwen"
	// Continue is Continue.
	Continue Harness = "continue"
	// Kimi is Kimi CLI.
	Kimi Harness = "kimi"
	// Cline is Cline.
	Cline Harness = "cline"
	// Crush is Crush (a SQLite database in each project).
	Crush Harness = "crush"
	// Goose is Goose (its SQLite database).
	Goose Harness = "goose"
	// Aider is Aider (a chat history in each project).
	Aider Harness = "aider"
	// File is an omp-format session file that lies in no known place.
	File Harness = "file"
	// DB is a session stored in a team's PostgreSQL (internal/pgstore).
	DB Harness = "db"
)

// Foreign are the harnesses read in place, in the order Resolve looks
// through them: foreign's registry (foreign.Kinds), so that a harness is
// added there once.
var Foreign = func() []Harness {
	out := make([]Harness, len(foreign.Kinds))
	for i, k := range foreign.Kinds {
		out[i] = Harness(k.Name)
	}
	return out
}()

// Converted reports whether h's sessions are converted to be read (they
// are in another format than omp's).
func (h Harness) Converted() bool {
	k, ok := foreign.KindOf(string(h))
	return ok && !k.OmpFormat
}

// Names names the harnesses hs as a person reads them, the last after
// conj: "Claude Code, Codex or pi".
func Names(hs []Harness, conj string) string {
	var b strings.Builder
	for i, h := range hs {
		switch {
		case i == 0:
		case i == len(hs)-1:
			b.WriteString(" " + conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(h.Name())
	}
	return b.String()
}

// ConvertedHarnesses are the harnesses whose sessions are converted to
// be read (and can be imported), in Foreign's order.
func ConvertedHarnesses() []Harness {
	var out []Harness
	for _, h := range Foreign {
		if h.Converted() {
			out = append(out, h)
		}
	}
	return out
}

// RootFlag is the command-line flag that moves the root of h, a harness
// read in place (Foreign), from its default ("claude-dir"), and its
// help: what the directory is and where it is by default.
func (h Harness) RootFlag() (name, help string) {
	k, _ := foreign.KindOf(string(h))
	return string(h) + "-dir", k.DirHelp
}

// OmpResumes reports whether omp resumes h's sessions as they are (the
// data dirs: xdev's, omp's), so that what omp would refuse or mangle in
// one matters.
func (h Harness) OmpResumes() bool { return h == Xdev || h == Omp }

// Name is how a person calls h.
func (h Harness) Name() string {
	if k, ok := foreign.KindOf(string(h)); ok {
		return k.Display
	}
	return string(h)
}

// Config says where the catalog looks.
type Config struct {
	// DataDir is the data dir (absolute); DataDirHarness says whose it is,
	// Xdev or Omp (Xdev when empty).
	DataDir        string
	DataDirHarness Harness
	// Explicit: a flag chose the data dir, so a name is looked for there
	// only.
	Explicit bool
	// Cwd is the working directory: its project's sessions match first.
	Cwd string
	// Roots moves a harness's root (Claude, Codex, Pi) from its default.
	Roots map[Harness]string
	// Projects are directories whose own sessions (Crush's, Aider's) are
	// read beside those found elsewhere (see projects.go); nil for those
	// $XDEV_PROJECTS lists (ProjectsEnv).
	Projects []string
	// Sources replaces a harness's source outright (a test's fake).
	Sources map[Harness]foreign.Source
	// ResolveWritesCache lets Resolve write the list cache (ListCacheDir)
	// it matches names through, for a process that resolves many (xdev
	// mcp). Resolve always reads it (the same matches, reading the heads
	// of only the files that changed since it was written); without this
	// it never writes it, so that a command that fails leaves xdev's
	// cache as it was.
	ResolveWritesCache bool
	// ListOnce keeps each harness's listing for the catalog's life
	// (listings.go): for a command that runs once, which then stats
	// every transcript once however many times it lists. A long-lived
	// process (serve, mcp) leaves it off, to see sessions come and go.
	ListOnce bool
}

// Catalog is the places of one Config.
type Catalog struct {
	cfg         Config
	sources     map[Harness]foreign.Source
	projectDirs projectDirs
	listings    listings
}

// New makes the catalog of cfg.
func New(cfg Config) (*Catalog, error) {
	if cfg.DataDirHarness == "" {
		cfg.DataDirHarness = Xdev
	}
	c := &Catalog{cfg: cfg, sources: map[Harness]foreign.Source{}}
	for _, h := range Foreign {
		if src, ok := cfg.Sources[h]; ok {
			c.sources[h] = src
			continue
		}
		root := cfg.Roots[h]
		if root == "" {
			var err error
			if root, err = foreign.DefaultRoot(string(h)); err != nil {
				continue // no home directory: the harness is not here
			}
		}
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
		src, err := foreign.NewSource(string(h), root)
		if err != nil {
			return nil, err
		}
		if pr, ok := src.(foreign.ProjectReader); ok {
			src = pr.WithProjects(c.projects)
		}
		if lc, ok := src.(foreign.ListCacher); ok {
			src = lc.WithListCache(ListCacheDir())
		}
		c.sources[h] = src
	}
	return c, nil
}

// DataDir is the data dir.
func (c *Catalog) DataDir() string { return c.cfg.DataDir }

// Ref is a session Resolve found.
type Ref struct {
	// Harness is who wrote it; Path is its file, absolute.
	Harness Harness
	Path    string
	// ID is the session's id as its harness gives it.
	ID string
	// InDataDir: the file lies in the data dir's sessions directory, where
	// xdev may write.
	InDataDir bool
	// Foreign is the session as its harness's source lists it (Claude,
	// Codex, Pi); nil for the data dir's and other omp-format files.
	Foreign *foreign.Session
}

// ErrEmptyArgument is Resolve's error for an empty SESSION.
var ErrEmptyArgument = errors.New("SESSION is empty: give an id, an id prefix, a file name or a path")

// ErrNotFound wraps every error for a name nothing matches.
var ErrNotFound = session.ErrNotFound

// AmbiguousError is Resolve's error for a name several sessions match:
// the naming rule's one error (package sessionname), each match naming
// its harness.
type AmbiguousError = sessionname.AmbiguousError

// Resolve finds the session arg names, by the rule in the package comment.
func (c *Catalog) Resolve(arg string) (Ref, error) {
	if arg == "" {
		return Ref{}, ErrEmptyArgument
	}
	if foreign.IsContainedSession(arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return Ref{}, err
		}
		return c.atContained(abs)
	}
	if session.SessionPath(arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return Ref{}, err
		}
		return c.At(abs)
	}
	info, err := session.ResolveIn(c.cfg.DataDir, arg, &session.ResolveOptions{Cwd: c.cfg.Cwd, Cache: ListCacheDir(),
		CacheReadOnly: !c.cfg.ResolveWritesCache})
	if err == nil {
		return Ref{Harness: c.cfg.DataDirHarness, Path: info.Path, ID: info.ID, InDataDir: true}, nil
	}
	if !errors.Is(err, session.ErrNotFound) || c.cfg.Explicit {
		return Ref{}, err
	}
	ref, ferr := c.resolveForeign(arg)
	if errors.Is(ferr, session.ErrNotFound) {
		return Ref{}, fmt.Errorf("%w (nor is it a session of %s)", err, Names(append([]Harness{Xdev, Omp}, Foreign...), "or"))
	}
	return ref, ferr
}

// maxDescribed is how many sessions an ambiguous name may match for
// those found by their files' names to be read, to leave out the files
// that are not sessions; a name that matches more is ambiguous anyway.
const maxDescribed = 64

// resolveForeign finds the session arg names among the other places
// here (the other omp-format data dirs, xdev's and omp's, and the other
// harnesses), by the one naming rule (internal/sessionname) over all of
// them at once.
func (c *Catalog) resolveForeign(arg string) (Ref, error) {
	var all []Ref
	for _, p := range c.others() {
		all = append(all, p.named(context.Background(), arg)...)
	}
	name := func(r *Ref) (string, string) { return r.ID, filepath.Base(r.Path) }
	one, several := sessionname.Pick(arg, all, name)
	if len(several) > 0 && len(several) <= maxDescribed {
		// Some may have been found by their files' names alone: those
		// that are not sessions (a torn .zst) are no candidates, as a
		// listing would not have listed them.
		kept := several[:0:0]
		for _, r := range several {
			if r.Foreign == nil && c.sources[r.Harness] != nil {
				if d, err := c.At(r.Path); err != nil || d.Foreign == nil || d.Foreign.Err != nil {
					continue
				}
			}
			kept = append(kept, r)
		}
		one, several = sessionname.Pick(arg, kept, name)
	}
	switch {
	case one != nil && one.Foreign == nil && c.sources[one.Harness] != nil:
		// Found by its file's name (foreign.FileNamer): described now,
		// as a listing would have.
		return c.At(one.Path)
	case one != nil:
		return *one, nil
	case len(several) > 0:
		return Ref{}, sessionname.Ambiguous(arg, several, func(r *Ref) sessionname.Match {
			return sessionname.Match{Harness: string(r.Harness), ID: r.ID, Path: r.Path}
		})
	}
	return Ref{}, fmt.Errorf("%w: no session %q of %s", session.ErrNotFound, arg, Names(append([]Harness{Xdev, Omp}, Foreign...), "or"))
}

// At describes the session file at path (absolute): whose it is, from
// where it lies and what it holds. It must be a regular file.
func (c *Catalog) At(path string) (Ref, error) {
	if _, err := regularfile.Stat(path); err != nil {
		return Ref{}, err
	}
	format, err := foreign.Detect(path)
	if err != nil {
		return Ref{}, err
	}
	if format != "" {
		h := Harness(format)
		src := c.sources[h]
		if src == nil || !within(path, src.Root()) {
			// Read by its format wherever it lies; the harness's root
			// only adds what its indexes know (titles, times).
			if src, err = foreign.NewSource(format, rootOf(h, path)); err != nil {
				return Ref{}, err
			}
		}
		s, err := src.At(path)
		if err != nil {
			return Ref{}, err
		}
		return Ref{Harness: h, Path: path, ID: s.ID, Foreign: &s}, nil
	}
	// A file that does not read as a session still names one: verify
	// says what is wrong with it, show says why it cannot be shown.
	ref := Ref{Harness: File, Path: path, ID: session.Stat(path).ID}
	switch {
	case c.cfg.DataDir != "" && within(path, session.SessionsDir(c.cfg.DataDir)):
		ref.Harness, ref.InDataDir = c.cfg.DataDirHarness, true
	case c.otherDataDir(Omp) != "" && within(path, session.SessionsDir(c.otherDataDir(Omp))):
		ref.Harness = Omp
	case c.otherDataDir(Xdev) != "" && within(path, session.SessionsDir(c.otherDataDir(Xdev))):
		ref.Harness = Xdev
	case c.sources[Pi] != nil && within(path, c.sources[Pi].Root()):
		s, err := c.sources[Pi].At(path)
		if err != nil {
			return Ref{}, err
		}
		ref.Harness, ref.Foreign = Pi, &s
	}
	return ref, nil
}

// atContained is the session a contained session's path (absolute)
// names (…/opencode.db/ses_…, …/crush.db/<id>): a session of the
// container at its head (a database, a chat history), wherever that lies.
func (c *Catalog) atContained(path string) (Ref, error) {
	format, container, _, _ := foreign.SplitContained(path)
	h := Harness(format)
	src := c.sources[h]
	if src == nil || !within(path, src.Root()) {
		var err error
		if src, err = foreign.NewSource(format, rootOf(h, container)); err != nil {
			return Ref{}, err
		}
	}
	s, err := src.At(path)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Harness: h, Path: path, ID: s.ID, Foreign: &s}, nil
}

// otherDataDir is the default data dir of h (Xdev or Omp) when it is not
// the catalog's data dir: a session there is that program's, or xdev's
// own where the data dir is elsewhere (fork --data-dir's destination),
// not one of the data dir's.
func (c *Catalog) otherDataDir(h Harness) string {
	dir, err := defaultDataDir(h)
	if err != nil || dir == c.cfg.DataDir {
		return ""
	}
	return dir
}

// defaultDataDir is the data dir of Xdev or Omp when no flag moves it.
func defaultDataDir(h Harness) (string, error) {
	if h == Omp {
		return session.OmpDataDir()
	}
	return session.DefaultDataDir()
}

// rootOf guesses the root of harness h's data dir from one of its files
// outside the configured root: the directory above the one that holds
// its files (foreign.Kind.FilesUnder: Claude Code's projects/, Codex's
// sessions/, …); else the file's own directory.
func rootOf(h Harness, path string) string {
	k, _ := foreign.KindOf(string(h))
	for dir := filepath.Dir(path); k.FilesUnder != "" && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if filepath.Base(dir) == k.FilesUnder {
			return filepath.Dir(dir)
		}
	}
	return filepath.Dir(path)
}

// within reports whether path is root or lies under it, comparing the
// two as they are and through their symlinks.
// Holds reports whether path lies in one of the places the catalog
// reads: the data dir's sessions, the other data dir it knows (omp's or
// xdev's), or a harness's directory. A path elsewhere can still be
// resolved (a file a person names is read by its format wherever it
// lies); a server that answers for the catalog's places only (an MCP
// server an agent steers) asks this first.
func (c *Catalog) Holds(path string) bool {
	for _, h := range Every {
		if dir, _ := c.Place(h).Where(); within(path, dir) {
			return true
		}
	}
	// A session of a harness that keeps them in the projects (Crush's,
	// Aider's) lies in no harness's directory: it is held when its
	// harness lists it, from the projects the catalog knows.
	if h, _, _, ok := foreign.SplitContained(path); ok {
		if _, projects := c.sources[Harness(h)].(foreign.ProjectReader); projects {
			list, _ := c.sources[Harness(h)].List(true)
			for _, s := range list {
				if s.Path == path {
					return true
				}
			}
		}
	}
	return false
}

func within(path, root string) bool {
	if root == "" {
		return false
	}
	if under(path, root) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(path)
	rr, err2 := filepath.EvalSymlinks(root)
	return err1 == nil && err2 == nil && under(rp, rr)
}

func under(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
