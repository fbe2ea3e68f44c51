package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// PullOptions tune Pull.
type PullOptions struct {
	// Sessions, when set, are the sessions to pull; nil pulls the current
	// revision of every stored session, subagents' too.
	Sessions []*Session
	// Progress, when set, is called as sessions are done.
	Progress func(done, total int)
	// Lock tunes the lockfile an append to a local file takes.
	Lock session.LockOptions
}

// PullStats say what a pull did.
type PullStats struct {
	Sessions  int         `json:"sessions"`  // stored sessions considered
	Written   int         `json:"written"`   // new local files
	Appended  int         `json:"appended"`  // local files that were behind, grown to the stored revision
	UpToDate  int         `json:"upToDate"`  // local files that hold the stored revision already (or more of it)
	Retitled  int         `json:"retitled"`  // local files whose title slot was older than the stored one: rewritten in place
	Conflicts int         `json:"conflicts"` // local files that went another way: left alone, listed in Failed
	Bytes     int64       `json:"bytes"`
	Blobs     int         `json:"blobs"` // image blobs written into the blob store
	Failed    []FileError `json:"-"`
}

// ErrDiverged is a pull's error for a local file that is not a prefix of
// the stored revision, nor the stored revision a prefix of it: it was
// rewritten, or continued differently here. A pull never overwrites it;
// a push stores it as a new revision.
var ErrDiverged = errors.New("the local file and the stored session went different ways")

// Pull writes stored sessions into dataDir's sessions directory as omp
// writes its files, byte for byte as they were pushed, so that omp and
// xdev resume them. A session with no local file is written to a temp
// file and linked into place once whole (mode 0600, directories 0700). A
// local file the stored revision extends gets the missing lines appended
// under omp's lockfile; one that holds as much or more is left alone, and
// one that went another way is left alone and reported (ErrDiverged).
// Nothing local is ever truncated or replaced.
func (db *DB) Pull(ctx context.Context, dataDir string, opts PullOptions) (PullStats, error) {
	var st PullStats
	list := opts.Sessions
	if list == nil {
		var err error
		if list, err = db.List(ctx, ListOptions{Subagents: true}); err != nil {
			return st, err
		}
	}
	st.Sessions = len(list)
	root := session.SessionsDir(dataDir)
	local := localFiles(dataDir, list)
	for i, s := range list {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		path, err := localPath(root, s.Path)
		if p, ok := local[s.Path]; ok {
			path = p
		}
		if err == nil {
			err = db.pullOne(ctx, s, path, opts.Lock, &st)
		}
		if err != nil {
			if errors.Is(err, ErrDiverged) {
				st.Conflicts++
			}
			st.Failed = append(st.Failed, FileError{path, err})
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(list))
		}
	}
	// The blobs the sessions name: every stored one for a pull of all,
	// else those the pulled files reference.
	var names map[string]bool
	if opts.Sessions != nil {
		names = map[string]bool{}
		for _, s := range list {
			p, err := localPath(root, s.Path)
			if err != nil {
				continue // refused above, and reported there
			}
			if q, ok := local[s.Path]; ok {
				p = q
			}
			if err := session.CollectBlobRefs(p, names); err != nil && !errors.Is(err, fs.ErrNotExist) {
				// Its images cannot be known, so none is fetched for it:
				// said, not taken for a session without images.
				st.Failed = append(st.Failed, FileError{p, fmt.Errorf("reading it for the blobs it names: %w", err)})
			}
		}
	}
	return st, db.pullBlobs(ctx, dataDir, names, &st)
}

// localFiles maps the stored paths of list that are masked (storedPath)
// to the files of dataDir they were pushed from: the files whose paths
// mask to them. Only when some stored path is masked are the data dir's
// files listed.
func localFiles(dataDir string, list []*Session) map[string]string {
	masked := false
	for _, s := range list {
		masked = masked || strings.Contains(s.Path, "[REDACTED ")
	}
	if !masked {
		return nil
	}
	files, _ := session.Files(dataDir)
	root := session.SessionsDir(dataDir)
	out := map[string]string{}
	for _, f := range files {
		if r, ok := strings.CutPrefix(f.Path, root+string(filepath.Separator)); ok {
			if m := storedPath(filepath.ToSlash(r), true); m != filepath.ToSlash(r) {
				out[m] = f.Path
			}
		}
	}
	return out
}

// localPath is where a stored path goes under root. A path that would
// leave root (absolute, or with "..") is refused: a database is not
// trusted to write anywhere else.
func localPath(root, rel string) (string, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) || filepath.Ext(p) != ".jsonl" {
		return filepath.Join(root, "(refused)"), fmt.Errorf("stored path %q is not a session file's path under a sessions directory", rel)
	}
	return filepath.Join(root, p), nil
}

func (db *DB) pullOne(ctx context.Context, s *Session, path string, lock session.LockOptions, st *PullStats) error {
	f, fi, err := regularfile.Open(path, 0)
	if errors.Is(err, os.ErrNotExist) {
		w := &countWriter{}
		err := createFile(path, func(out io.Writer) error {
			w.w = out
			return db.WriteSession(ctx, s, w)
		})
		if err != nil {
			return err
		}
		st.Written++
		st.Bytes += w.n
		return stampMtime(path, s)
	}
	if err != nil {
		return err
	}
	end, err := completeEnd(f, fi.Size())
	if err != nil {
		f.Close()
		return err
	}
	local, err := session.ReadSlotLine(f, fi.Size())
	if err != nil {
		f.Close()
		return err
	}
	stored, err := db.storedSlot(ctx, db.pool, s.Key)
	if err != nil {
		f.Close()
		return err
	}
	// The bytes both hold must agree: the last 4 KiB before the shorter's
	// end, the title slot aside (a retitle rewrites it in place).
	agree := func(r io.ReaderAt, end int64, local []byte) (bool, error) {
		if (local == nil) != (stored == nil) {
			return false, nil
		}
		n := min(end, s.Size)
		same, err := db.sameBytes(ctx, db.pool, s, r, max(int64(len(local)), n-tailCheck), n)
		if err == nil && same && end < s.Size {
			same, err = db.lineStarts(ctx, db.pool, s.Key, end)
		}
		return same, err
	}
	same, err := agree(f, end, local)
	onDisk := local // the file's slot, which a retitle replaces
	// at is where the stored lines this file lacks start: its end, or
	// for a masked revision pushed from it, its masked lines' end.
	at := end
	if err == nil && !same && s.Masked && fi.Size() == end {
		// A masked revision agrees with the file it was pushed from once
		// that file's lines are masked as the push masked them.
		var v *maskedView
		if v, err = maskView(path, f, 0, end, 0); err == nil {
			if same, err = agree(v, v.end, v.slot); same {
				at = v.end
				if local != nil {
					local = v.slot
				}
			}
		}
	}
	// A torn last line is brought up to date when it is the start of the
	// stored line there (the write finished elsewhere): the file is a
	// byte prefix of the stored revision. Any other torn line is a
	// different write, and appending after it would glue lines together.
	from := end
	if err == nil && same && fi.Size() != end && end < s.Size {
		if fi.Size() <= s.Size {
			same, err = db.sameBytes(ctx, db.pool, s, f, end, fi.Size())
		} else {
			same = false
		}
		from = fi.Size()
	}
	f.Close()
	switch {
	case err != nil:
		return err
	case !same:
		return fmt.Errorf("%s: %w (the stored revision %d is %d bytes, the file %d): xdev sync pushes the file as a new revision",
			path, ErrDiverged, s.Revision, s.Size, fi.Size())
	}
	// A slot retitled elsewhere later than here is put in place, as a
	// retitle writes it; a newer local one waits for the next push.
	if local != nil && !bytes.Equal(local, stored) && session.SlotWrittenAfter(stored, local) {
		if err := session.ReplaceSlot(path, onDisk, stored, lock); err != nil {
			return err
		}
		st.Retitled++
	}
	if at >= s.Size {
		st.UpToDate++
		return nil
	}
	// Fetch the missing lines whole before touching the file, so a failed
	// fetch leaves it as it was (into a file with no name: a killed pull
	// leaves nothing behind).
	tmp, err := atomicfile.Scratch()
	if err != nil {
		return err
	}
	defer tmp.Close()
	if err := db.writeLines(ctx, s.Key, at, tmp); err != nil {
		return err
	}
	// From where the file ends: past its torn line's start, if it has one.
	if _, err := tmp.Seek(from-end, io.SeekStart); err != nil {
		return err
	}
	k, err := session.AppendRaw(path, from, tmp, lock)
	if err != nil {
		return err
	}
	st.Appended++
	st.Bytes += k
	return stampMtime(path, s)
}

// createFile makes a new session file at path, and its directory, once
// whole (atomicfile.Create), removing first what killed writers left
// there.
func createFile(path string, fill func(io.Writer) error) error {
	session.SweepLeftovers(filepath.Dir(path))
	return atomicfile.Create(path, fill)
}

// stampMtime gives a pulled file the stored session's modification time,
// so that "newest first" here is the order the sessions were written in,
// not the order they were pulled in.
func stampMtime(path string, s *Session) error {
	if s.Updated.IsZero() {
		return nil
	}
	return os.Chtimes(path, time.Time{}, s.Updated)
}

// countWriter counts what it passes on.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
