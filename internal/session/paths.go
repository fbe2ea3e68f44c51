package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// OmpDataDirEnv names omp's agent dir, as omp reads it.
const OmpDataDirEnv = "PI_CODING_AGENT_DIR"

// OmpDataDir returns omp's agent dir, where omp 18.2.3 keeps its sessions
// and blobs: $PI_CODING_AGENT_DIR, else ~/.omp/agent.
func OmpDataDir() (string, error) {
	if d := os.Getenv(OmpDataDirEnv); d != "" {
		return filepath.Abs(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory; set " + OmpDataDirEnv)
	}
	return filepath.Join(home, ".omp", "agent"), nil
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
	slug, _ := slugScope(cwd)
	return slug
}

// slugScope returns Slug(cwd) and which rule made it: "home", "tmp", "abs".
func slugScope(cwd string) (slug, scope string) {
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
			return "-" + repl.Replace(rel), "home"
		}
	}
	if rel, ok := within(canonical(os.TempDir())); ok {
		if rel == "" {
			return "-tmp", "tmp"
		}
		return "-tmp-" + repl.Replace(rel), "tmp"
	}
	return absSlug(c), "abs"
}

// legacySlugs returns the other names omp has given the sessions directory
// of cwd, which it migrates (renames) when it next opens that project:
// the absolute form "--abs-path--" of the cwd as given and as resolved, and
// the hashed form "<home|tmp|abs>-<basename>-<sha256>" of omp 17.2.5-17.2.8.
// List reads them too, without moving anything.
func legacySlugs(cwd string) []string {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		abs = filepath.Clean(cwd)
	}
	c := canonical(cwd)
	slug, scope := slugScope(cwd)
	var out []string
	add := func(name string) {
		if name != slug && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	add(absSlug(abs))
	add(absSlug(c))
	readable := strings.Trim(nonReadable().ReplaceAllString(filepath.Base(c), "-"), "-")
	if len(readable) > 80 {
		readable = readable[len(readable)-80:]
	}
	if readable == "" {
		readable = "project"
	}
	sum := sha256.Sum256([]byte(strings.ReplaceAll(c, "\\", "/")))
	add(scope + "-" + readable + "-" + hex.EncodeToString(sum[:]))
	return out
}

var nonReadable = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9._-]+`) })

// absSlug is omp's name for a directory outside home and the temp dir.
func absSlug(abs string) string {
	repl := strings.NewReplacer("/", "-", "\\", "-", ":", "-")
	return "--" + repl.Replace(strings.TrimPrefix(strings.TrimPrefix(abs, "/"), "\\")) + "--"
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
