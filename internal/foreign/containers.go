package foreign

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A container is one file that holds many sessions: opencode's, Crush's
// and Goose's SQLite databases, Aider's chat history of one project. No
// file is a session of one, so a session of one is named by the file's
// path, a separator, and the session's id (…/opencode.db/ses_…,
// …/.crush/crush.db/<uuid>, …/.aider.chat.history.md/<run>), a path that
// reads as where the session lives and that a person may give as it is.

// containers are the files that hold sessions, by their names: whose
// they are, and which ids name a session in one.
var containers = map[string]struct {
	harness string
	id      func(string) bool
	// Database: a SQLite database, read through a snapshot and changed
	// when its -wal is.
	database bool
}{
	opencodeDB:  {HarnessOpencode, func(id string) bool { return strings.HasPrefix(id, "ses_") }, true},
	crushDB:     {HarnessCrush, validContainedID, true},
	gooseDB:     {HarnessGoose, validContainedID, true},
	aiderChatMD: {HarnessAider, validContainedID, false},
}

// validContainedID reports whether id may name a session in a container:
// a name, not a path.
func validContainedID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`)
}

// containedPath is the path that names session id of container.
func containedPath(container, id string) string {
	return container + string(filepath.Separator) + id
}

// SplitContained is the harness, container and session id a path names
// (…/crush.db/<id>), by the names alone.
func SplitContained(path string) (harness, container, id string, ok bool) {
	container, id = filepath.Split(path)
	container = strings.TrimSuffix(container, string(filepath.Separator))
	c, known := containers[filepath.Base(container)]
	if !known || !c.id(id) {
		return "", "", "", false
	}
	return c.harness, container, id, true
}

// IsContainedSession reports whether path names a session of a
// container that is there: a path a person may give, though no file has
// it.
func IsContainedSession(path string) bool {
	_, container, _, ok := SplitContained(path)
	if !ok {
		return false
	}
	fi, err := os.Lstat(container)
	return err == nil && fi.Mode().IsRegular()
}

// ContainerOf is the file a contained session's path names, and whether
// it is a SQLite database (whose -wal changes with it).
func ContainerOf(path string) (container string, database bool, ok bool) {
	_, container, _, ok = SplitContained(path)
	if !ok {
		return "", false, false
	}
	return container, containers[filepath.Base(container)].database, true
}

// sessionIn is the session of list whose id is id, the one the path
// (of container) names.
func sessionIn(list []Session, path, container, id string) (Session, error) {
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
	}
	return Session{}, fmt.Errorf("%s: %w: no session %s in %s", path, fs.ErrNotExist, id, container)
}

// IsContainerFile reports whether path is a container (by its name) or
// the -wal of a database one: a file whose change is a change of the
// sessions it holds.
func IsContainerFile(path string) bool {
	name := filepath.Base(path)
	if c, ok := containers[strings.TrimSuffix(name, "-wal")]; ok {
		return c.database || !strings.HasSuffix(name, "-wal")
	}
	return false
}

// Ancestors are dir and every directory above it, nearest first: where a
// harness that keeps its sessions in the project (Crush, Aider) may have
// them for a person working in dir.
func Ancestors(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == filepath.Dir(d) {
			return out
		}
	}
}
