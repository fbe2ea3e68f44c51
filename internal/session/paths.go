package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// DataDirEnv overrides the default data dir.
const DataDirEnv = "XDEV_DATA_DIR"

// DefaultDataDir returns $XDEV_DATA_DIR, else ~/.xdev/agent. The layout
// inside is omp's agent dir: sessions/<slug>/<file>.jsonl and blobs/<hex>,
// so either program can be pointed at the other's.
func DefaultDataDir() (string, error) {
	if d := os.Getenv(DataDirEnv); d != "" {
		return filepath.Abs(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory; set " + DataDirEnv)
	}
	return filepath.Join(home, ".xdev", "agent"), nil
}

// SessionsDir returns <dataDir>/sessions.
func SessionsDir(dataDir string) string { return filepath.Join(dataDir, "sessions") }

// BlobsDir returns <dataDir>/blobs.
func BlobsDir(dataDir string) string { return filepath.Join(dataDir, "blobs") }

// canonical resolves p to an absolute path through symlinks, falling back
// to the cleaned absolute path when it does not exist.
func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// Slug returns the directory name omp gives the sessions of cwd: inside the
// home dir "-a-b" (home itself "-"), inside the temp dir "-tmp-a-b" (the
// temp dir itself "-tmp"), anywhere else "--abs-path--". Only '/', '\' and
// ':' are replaced; symlinks are resolved first.
func Slug(cwd string) string {
	c := canonical(cwd)
	repl := strings.NewReplacer("/", "-", "\\", "-", ":", "-")
	within := func(root string) (string, bool) {
		if root == "" {
			return "", false
		}
		if c == root {
			return "", true
		}
		rel, ok := strings.CutPrefix(c, root+string(filepath.Separator))
		return rel, ok
	}
	if home, err := os.UserHomeDir(); err == nil {
		if rel, ok := within(canonical(home)); ok {
			return "-" + repl.Replace(rel)
		}
	}
	if rel, ok := within(canonical(os.TempDir())); ok {
		if rel == "" {
			return "-tmp"
		}
		return "-tmp-" + repl.Replace(rel)
	}
	return "--" + repl.Replace(strings.TrimLeft(c, "/\\")) + "--"
}

// FileName returns omp's name for a session file created at t with id:
// the ISO timestamp with ':' and '.' replaced by '-', '_', the id.
func FileName(t time.Time, id string) string {
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(FormatTime(t))
	return ts + "_" + id + ".jsonl"
}

// NewSessionPath returns a fresh session file path for cwd in dataDir and
// the UUIDv7 session id it embeds.
func NewSessionPath(dataDir, cwd string) (path, id string, err error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	id = u.String()
	return filepath.Join(SessionsDir(dataDir), Slug(cwd), FileName(time.Now(), id)), id, nil
}
