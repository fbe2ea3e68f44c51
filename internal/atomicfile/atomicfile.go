// Package atomicfile writes files so that a reader, or a crash, sees either
// nothing (or the file as it was) or the whole new content, never a part.
//
// The content goes to a temp file beside the target (same directory, so
// the same filesystem), is synced, and only then takes the target's name:
// Create links it into place, which fails if the name is taken, and
// Replace renames it over the old file. If anything fails before that, the
// temp file is removed and the target is untouched: a failed write never
// truncates, damages or removes a file that was there.
//
// The temp file has no name while it is written, where the system allows
// (Linux's O_TMPFILE): a process killed mid-write leaves nothing behind.
// Elsewhere it is named TempPrefix-style, ".<target>.xdev-<pid>-<n>.tmp",
// which no session file's name (*.jsonl) can ever match, and a temp file
// whose process is gone is a Leftover that a later command removes.
//
// A file whose directory is missing takes its name with the directory:
// the directories are made under a temp name of the same kind, the file
// linked inside, and the directory renamed into place (Temp.Link). A
// reader never sees an empty directory appear, and a process killed
// before the rename leaves only a temp directory, also a Leftover;
// listers skip such names (IsTemp).
//
// New files are 0600: what xdev writes comes from transcripts, which hold
// secrets.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Create makes a new file at path holding what fill writes, and path's
// directory and its missing parents (0700) when it takes its name. It
// fails with an error wrapping fs.ErrExist if path exists, and never
// replaces it.
func Create(path string, fill func(w io.Writer) error) error {
	return write(path, true, fill, nil)
}

// Replace writes what fill writes to path, replacing the file there (if
// any) only once the new content is complete and synced. path's
// directory must exist.
func Replace(path string, fill func(w io.Writer) error) error {
	return write(path, false, fill, nil)
}

// ReplaceIf is Replace with a last word: ready runs once the new content
// is complete and synced, just before the rename, and an error from it
// leaves the file at path untouched. It is for a condition that must hold
// at the moment of the swap, not only when the write began (no other
// process writing the old file).
func ReplaceIf(path string, fill func(w io.Writer) error, ready func() error) error {
	return write(path, false, fill, ready)
}

// ReplaceCache is Replace for a file that can always be made again (a
// cache): it still appears whole or not at all to a reader, but is not
// synced to disk, so a crash may leave it empty or torn, and its reader
// must check what it reads (a checksum). It saves the two syncs, which on
// a busy disk take longer than writing it.
func ReplaceCache(path string, fill func(w io.Writer) error) error {
	t, err := NewTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer t.Abort()
	t.noSync = true
	if err := fill(t); err != nil {
		return err
	}
	return t.Rename(path)
}

func write(path string, exclusive bool, fill func(w io.Writer) error, ready func() error) error {
	t, err := NewTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer t.Abort()
	if err := fill(t); err != nil {
		return err
	}
	if ready != nil {
		if err := t.finish(); err != nil {
			return err
		}
		if err := ready(); err != nil {
			return err
		}
	}
	if exclusive {
		return t.Link(path)
	}
	return t.Rename(path)
}

// Temp is a file being written that takes its name only when whole: Link
// or Rename gives it one, Abort (a no-op after either) drops it. Writes
// are buffered.
type Temp struct {
	f    *os.File
	w    *bufio.Writer
	dir  string
	base string
	name string // the temp file's name, while it has one of its own
	done bool
	// noSync: a cache's (ReplaceCache): neither the file nor its
	// directory is synced.
	noSync bool
}

// ForCache marks t a cache's file, as ReplaceCache writes one: it still
// appears whole or not at all, but neither it nor its directory is
// synced, so a crash may leave it empty or torn and its reader must check
// what it reads.
func (t *Temp) ForCache() { t.noSync = true }

// NewTemp starts a temp file for a file to be called base in dir. dir
// need not exist yet: the temp file is made in its nearest existing
// parent (the same filesystem), and dir only when the file takes its
// name, so a process killed before then leaves no empty directory.
func NewTemp(dir, base string) (*Temp, error) {
	if dir == "" {
		dir = "."
	}
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() || dir == filepath.Dir(dir) {
			break
		}
		dir = filepath.Dir(dir)
	}
	t := &Temp{dir: dir, base: base}
	f, err := os.OpenFile(dir, os.O_RDWR|oTmpfile, 0o600)
	if err == nil && !procFD() {
		f.Close() // no way to name it afterwards
		err = errors.ErrUnsupported
	}
	if err != nil {
		// No O_TMPFILE (another system, or a filesystem without it).
		if f, err = os.CreateTemp(dir, tempPattern(base)); err != nil {
			return nil, err
		}
		t.name = f.Name()
	}
	// 64 KiB a write(2): larger buys no speed, and a command that
	// writes thousands of files (a first conversion) would make a MiB of
	// garbage each.
	t.f, t.w = f, bufio.NewWriterSize(f, 64<<10)
	return t, nil
}

func (t *Temp) Write(p []byte) (int, error) { return t.w.Write(p) }

// WriteByte writes one byte.
func (t *Temp) WriteByte(c byte) error { return t.w.WriteByte(c) }

// finish flushes and syncs the content.
func (t *Temp) finish() error {
	if err := t.w.Flush(); err != nil {
		return err
	}
	if t.noSync {
		return nil
	}
	return t.f.Sync()
}

// Link names the file path, and fails with an error wrapping fs.ErrExist
// if the name is taken (a link, unlike a rename, never replaces). If
// path's directory is missing, it appears with the file already in it:
// the missing directories are made under a temp name beside the first of
// them (a hidden directory tagged like a temp file, see Leftover), the
// file is linked inside, and the directory renamed into place, so a
// process killed at any point leaves no empty directory where readers
// look, only a temp directory of a process that is gone.
func (t *Temp) Link(path string) error {
	if err := t.finish(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return t.linkWithDir(path)
	}
	if err := t.linkAt(path); err != nil {
		return err
	}
	t.Abort() // drops the temp name, if it had one
	return SyncDir(dir)
}

// linkAt gives the file the name path, in a directory that exists.
func (t *Temp) linkAt(path string) error {
	var err error
	if t.name != "" {
		err = os.Link(t.name, path)
	} else {
		err = linkAnonymous(t.f, path)
	}
	if os.IsExist(err) {
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	}
	return err
}

// testHookBeforeRename, when set, runs as linkWithDir is about to rename
// its temp directory into place (a test kills the process there).
var testHookBeforeRename func()

// linkWithDir links the file at path, whose directory is missing, by way
// of a temp directory renamed into place (see Link). If the directory
// appears meanwhile (another writer made it), the file is linked into it
// instead and the temp directory removed.
func (t *Temp) linkWithDir(path string) error {
	dir := filepath.Clean(filepath.Dir(path))
	first := dir // the first missing directory, below one that exists
	for {
		up := filepath.Dir(first)
		if _, err := os.Lstat(up); err == nil || up == first {
			break
		}
		first = up
	}
	parent := filepath.Dir(first)
	tmp, err := os.MkdirTemp(parent, tempPattern(filepath.Base(first)))
	if err != nil {
		return err
	}
	rest, err := filepath.Rel(first, dir)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	inner := filepath.Join(tmp, rest)
	staged := filepath.Join(inner, filepath.Base(path))
	if err := os.MkdirAll(inner, 0o700); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := t.linkAt(staged); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if !t.noSync {
		for d := inner; ; d = filepath.Dir(d) {
			if err := SyncDir(d); err != nil {
				os.RemoveAll(tmp)
				return err
			}
			if d == tmp {
				break
			}
		}
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename()
	}
	err = renameNoReplace(tmp, first)
	if err != nil && (errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY)) {
		// Made meanwhile: link into it, as into any existing directory.
		var undo func()
		if undo, err = mkdirAll(dir); err == nil {
			if err = os.Link(staged, path); err != nil {
				undo()
				if os.IsExist(err) {
					err = fmt.Errorf("%s: %w", path, fs.ErrExist)
				}
			}
		}
		os.RemoveAll(tmp)
		if err != nil {
			return err
		}
		t.Abort()
		return SyncDir(dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	t.Abort()
	return SyncDir(parent)
}

// Rename names the file path, replacing what is there; path's directory
// must exist.
func (t *Temp) Rename(path string) error {
	if err := t.finish(); err != nil {
		return err
	}
	if t.name == "" {
		// A name of its own first, for the rename; a crash in between
		// leaves a Leftover.
		for i := 0; ; i++ {
			name := filepath.Join(t.dir, fmt.Sprintf(".%s.xdev-%d-r%d.tmp", t.base, os.Getpid(), i))
			err := linkAnonymous(t.f, name)
			if err == nil {
				t.name = name
				break
			}
			if !os.IsExist(err) || i > 100 {
				return err
			}
		}
	}
	if err := os.Rename(t.name, path); err != nil {
		return err // Abort removes the temp name
	}
	t.name = "" // it is path's now
	t.Abort()
	if t.noSync {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// Abort drops the file, unless Link or Rename named it. It may be called
// more than once.
func (t *Temp) Abort() {
	if t.done {
		return
	}
	t.done = true
	t.f.Close()
	if t.name != "" {
		os.Remove(t.name)
	}
}

// procFD reports whether /proc/self/fd is there to name an anonymous file
// through.
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// tempPattern is the name of a named temp file for base: hidden, tagged
// with this process, ending in .tmp, so it can never be taken for a
// session file (*.jsonl) and its owner can be told alive or gone.
func tempPattern(base string) string {
	return "." + base + ".xdev-" + strconv.Itoa(os.Getpid()) + "-*.tmp"
}

// StaleAfter is how old a temp file of an unknown process (one named by
// an older xdev, ".<name>.<n>.tmp") must be to be taken for a leftover.
const StaleAfter = time.Hour

// Leftover reports whether the file called name in a directory, with
// info, is a temp file of ours whose writer is gone: one tagged with a
// process that no longer runs, or an untagged one of an older xdev not
// written to for StaleAfter. A directory is one when tagged (Link's temp
// directory) and its process is gone. It never matches a name ending in
// .jsonl.
func Leftover(name string, info fs.FileInfo) bool {
	if !info.Mode().IsRegular() && !info.IsDir() {
		return false
	}
	if pid, ok := tempOwner(name); ok {
		return pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	if info.IsDir() || !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	// An older xdev's: ".<file>.jsonl.<digits>.tmp".
	rest := strings.TrimSuffix(name, ".tmp")
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !strings.HasSuffix(rest[:i], ".jsonl") {
		return false
	}
	if _, err := strconv.ParseUint(rest[i+1:], 10, 64); err != nil {
		return false
	}
	return time.Since(info.ModTime()) > StaleAfter
}

// IsTemp reports whether name is a temp file's or temp directory's of
// this package (".<name>.xdev-<pid>-<n>.tmp"), its writer alive or not: a
// lister skips it, since what is inside has not taken its name yet.
func IsTemp(name string) bool {
	_, ok := tempOwner(name)
	return ok
}

// tempOwner returns the process a tagged temp name was made by.
func tempOwner(name string) (pid int, ok bool) {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return 0, false
	}
	rest := strings.TrimSuffix(name, ".tmp")
	i := strings.LastIndex(rest, ".xdev-")
	if i < 0 {
		return 0, false
	}
	p, _, ok := strings.Cut(rest[i+len(".xdev-"):], "-")
	n, err := strconv.Atoi(p)
	if !ok || err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// renameChecked renames old to new unless new exists, checked just
// before: where the system cannot refuse the rename itself.
func renameChecked(old, new string) error {
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	return os.Rename(old, new)
}

// SyncDir makes a rename or link in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// mkdirAll makes dir and its missing parents (0700: they will hold
// transcripts) and returns undo, which removes the directories it made,
// deepest first, if they are still empty: a write that fails after making
// its directory leaves no empty directory behind. undo is never nil.
func mkdirAll(dir string) (undo func(), err error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	undo = func() {
		for _, d := range made {
			if os.Remove(d) != nil { // not empty, or gone: leave the rest
				return
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		undo()
		return func() {}, err
	}
	return undo, nil
}

// Scratch returns a new, empty temp file that has no name: it is gone
// when closed, or when the process dies, so a killed command leaves
// nothing behind in the temp directory. (On Linux, an O_TMPFILE file;
// elsewhere, a temp file unlinked at once.)
func Scratch() (*os.File, error) {
	if f, err := os.OpenFile(os.TempDir(), os.O_RDWR|oTmpfile, 0o600); err == nil {
		return f, nil
	}
	f, err := os.CreateTemp("", "xdev-scratch-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
