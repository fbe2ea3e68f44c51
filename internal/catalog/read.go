package catalog

import (
	"context"
	"os"
	"path/filepath"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
)

// A Readable is a session as a reader (show, export, the tree) opens it:
// an omp-format file, and what to tell a person of it.
type Readable struct {
	// Path is the omp-format file to open: the session's own, or for a
	// Claude Code or Codex session its mirror in xdev's cache.
	Path string
	// Shown is the path a person is shown: the source's.
	Shown   string
	Harness Harness
	// Converted: Path is a conversion (foreign.ForReading), whose entries
	// name their source lines.
	Converted bool
	// Skipped counts the source's lines the conversion skipped as
	// unreadable (a torn line, junk).
	Skipped int

	// index and context, when set, open the session other than from Path
	// (a synced session of a database, through its rows; its context
	// windowed from the server).
	index   func() (*session.Index, error)
	context func() (*session.ContextReader, error)
}

// ReadContext reads the context a resume of the session sends, a message
// at a time, through a checkpoint when the file is long (ReadContext).
func (r Readable) ReadContext() (*session.ContextReader, error) {
	if r.context != nil {
		return r.context()
	}
	return ReadContext(r.Path)
}

// ReadContext reads the context a resume of the session file at path
// sends, a message at a time (session.ReadContext). A long file's load
// keeps a checkpoint in xdev's cache (CheckpointDir), so that the next
// read of it reads only the lines appended since.
func ReadContext(path string) (*session.ContextReader, error) {
	return session.ReadContext(path, &session.OpenOptions{Checkpoints: CheckpointDir()})
}

// CheckpointDir is where windowed loads keep their checkpoints
// (session.OpenOptions.Checkpoints): os.UserCacheDir()/xdev/checkpoints,
// or "" (none kept) where there is no cache dir.
func CheckpointDir() string { return cacheDir("checkpoints") }

// ListCacheDir is where listings of data dirs keep their list caches
// (session.ListOptions.Cache): os.UserCacheDir()/xdev/lists, or "".
func ListCacheDir() string { return cacheDir("lists") }

// cacheDir is the directory name of xdev's cache, or "" where there is
// no cache dir.
func cacheDir(name string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "xdev", name)
}

// OpenIndex opens the session's Index, for the views that go over every
// entry.
func (r Readable) OpenIndex() (*session.Index, error) {
	if r.index != nil {
		return r.index()
	}
	return session.OpenIndex(r.Path, nil)
}

// Open returns the session ref names as a reader opens it. A Claude Code
// or Codex session is read through its mirror in xdev's cache, converted
// for reading when its source changed (foreign.Mirror.Ensure): nothing is
// written beside the source, nor to a temp dir a killed reader would
// leave behind.
func (c *Catalog) Open(ctx context.Context, ref Ref) (Readable, error) {
	r := Readable{Path: ref.Path, Shown: ref.Path, Harness: ref.Harness}
	if !ref.Harness.Converted() || ref.Foreign == nil {
		return r, nil
	}
	m, err := c.mirror(ref.Harness)
	if err != nil {
		return r, err
	}
	mf, err := m.Ensure(ctx, *ref.Foreign)
	if err != nil {
		return r, err
	}
	r.Path, r.Skipped, r.Converted = mf.Path, mf.Skipped, true
	return r, nil
}

// mirror is the mirror of harness h's sessions, in xdev's cache.
func (c *Catalog) mirror(h Harness) (*foreign.Mirror, error) {
	src := c.sources[h]
	dir, err := foreign.DefaultMirrorDir(src.Harness(), src.Root())
	if err != nil {
		return nil, err
	}
	list := func() ([]foreign.Session, error) { return c.sessionsOf(h, true) }
	return &foreign.Mirror{Dir: dir, Source: src, Listing: list}, nil
}

// Line is the line a person finds entry i of x at, x being r opened: in
// the file shown, which for a converted session is the source transcript,
// not its mirror.
func (r Readable) Line(x *session.Index, i int) int {
	if r.Converted {
		if head, err := x.Prefix(i, 32); err == nil {
			if n, ok := foreign.SourceLineOf(head); ok {
				return n
			}
		}
	}
	return x.Line(i)
}
