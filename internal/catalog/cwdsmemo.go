package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// Working directories, remembered. Crush's and Aider's sessions are
// looked for in the working directory of every other session
// (projects.go), which took a listing of every other place: at 25,000
// sessions a stat of each and their list caches read, 0.4 s and 50 MB of
// every search and usage report that never showed one. But a listing's
// working directories change only when a session comes, goes or is
// replaced, and each of those changes the modification time of the
// directory it lies in; a session only appended to keeps the cwd its
// first lines record. So a place that says where its sessions lie
// (foreign.SessionDirser; a data dir's sessions directory and its
// projects') has the working directories of its last listing kept in
// xdev's cache (lists/cwds-<place>-<hash>.json) with the modification
// time of each of those directories, and taken as they are while none
// moved: a stat of each directory (hundreds), not of each session.
//
// What the memo does not see, by choice: a cwd Claude Code's
// history.jsonl gives a session (appended to at every prompt, it would
// spoil the memo at every prompt; the session's own records name the
// same project), and a transcript rewritten in place with another cwd
// (no harness does so).

// cwdsMemoFormat is the memo file's version.
const cwdsMemoFormat = 1

type cwdsMemo struct {
	Format int `json:"format"`
	// Dirs are the directories sessions lie in, each with its
	// modification time (ns) when the listing began; -1: not there.
	Dirs map[string]int64 `json:"dirs"`
	Cwds []string         `json:"cwds"`
}

// sessionDirsOf is where place h's sessions lie, nil for a place that
// does not say (then it is listed).
func (c *Catalog) sessionDirsOf(h Harness) []foreign.SessionDir {
	switch p := c.Place(h).(type) {
	case dataDirPlace:
		if p.dir == "" {
			return nil
		}
		return []foreign.SessionDir{{Path: session.SessionsDir(p.dir), Depth: 1}}
	case harnessPlace:
		if d, ok := p.src.(foreign.SessionDirser); ok {
			return d.SessionDirs()
		}
	}
	return nil
}

// cwdsMemoPath is the memo file of the place whose sessions lie in dirs.
func cwdsMemoPath(h Harness, dirs []foreign.SessionDir) string {
	cache := cacheDir("lists")
	if cache == "" {
		return ""
	}
	sum := sha256.New()
	for _, d := range dirs {
		io.WriteString(sum, d.Path+"\x00")
	}
	return filepath.Join(cache, "cwds-"+string(h)+"-"+hex.EncodeToString(sum.Sum(nil)[:10])+".json")
}

// rememberedCwds are the working directories the memo of place h keeps,
// if none of its directories moved since.
func (c *Catalog) rememberedCwds(h Harness) ([]string, bool) {
	dirs := c.sessionDirsOf(h)
	path := cwdsMemoPath(h, dirs)
	if path == "" {
		return nil, false
	}
	data, err := regularfile.ReadFile(path, 1<<26)
	if err != nil {
		return nil, false
	}
	var m cwdsMemo
	if json.Unmarshal(data, &m, jsontext.AllowInvalidUTF8(true)) != nil || m.Format != cwdsMemoFormat || len(m.Dirs) == 0 {
		return nil, false
	}
	for _, d := range dirs {
		if _, ok := m.Dirs[filepath.Clean(d.Path)]; !ok {
			return nil, false
		}
	}
	for dir, mtime := range m.Dirs {
		if dirMtime(dir) != mtime {
			return nil, false
		}
	}
	return m.Cwds, true
}

// cwdsStamp is the modification time of each directory place h's
// sessions lie in (sessionDirsOf), taken before it is listed, and
// whether they can be trusted to tell a change: none moved within
// racyWindow (secretscache.go's) of now (two changes in one clock tick), nor is any place
// the catalog does not say.
func (c *Catalog) cwdsStamp(h Harness) (map[string]int64, bool) {
	dirs := c.sessionDirsOf(h)
	if len(dirs) == 0 {
		return nil, false
	}
	stamps := map[string]int64{}
	now := time.Now().UnixNano()
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		mtime := dirMtime(dir)
		stamps[dir] = mtime
		if mtime < 0 || depth == 0 {
			return
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.IsDir() {
				walk(filepath.Join(dir, e.Name()), depth-1)
			}
		}
	}
	for _, d := range dirs {
		walk(filepath.Clean(d.Path), d.Depth)
	}
	for _, mtime := range stamps {
		if now-mtime < int64(racyWindow) {
			return stamps, false
		}
	}
	return stamps, true
}

// dirMtime is the modification time (ns) of the directory at path, -1
// when there is none there.
func dirMtime(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return -1
	}
	return fi.ModTime().UnixNano()
}

// rememberCwds keeps cwds, the working directories of place h's
// listing, with stamps, its directories as they were before it. A
// memo that cannot be written costs the next command a listing.
func (c *Catalog) rememberCwds(h Harness, stamps map[string]int64, cwds []string) {
	path := cwdsMemoPath(h, c.sessionDirsOf(h))
	if path == "" || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	clean := make([]string, 0, len(cwds))
	for _, d := range cwds {
		if d != "" && !strings.ContainsRune(d, 0) {
			clean = append(clean, d)
		}
	}
	atomicfile.ReplaceCache(path, func(w io.Writer) error {
		return json.MarshalWrite(w, cwdsMemo{Format: cwdsMemoFormat, Dirs: stamps, Cwds: clean}, json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
	})
}
