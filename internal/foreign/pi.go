package foreign

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"path/filepath"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// PiDir is pi's agent dir, ~/.pi/agent.
func PiDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".pi", "agent"), nil
}

type piSource struct{ root string }

func (p piSource) Harness() string                { return HarnessPi }
func (p piSource) Root() string                   { return p.root }
func (p piSource) Stream(Session, Purpose) Stream { return nil }

// List lists pi's sessions as session.List reads omp's (pi's files are
// omp's format without the title slot), each titled by its last
// session_info name.
func (p piSource) List(subagents bool) ([]Session, error) {
	infos, err := session.List(p.root, &session.ListOptions{Subagents: subagents})
	if err != nil {
		return nil, err
	}
	out := make([]Session, len(infos))
	for k, i := range infos {
		out[k] = piSession(i)
	}
	return out, nil
}

func (p piSource) At(path string) (Session, error) {
	s, err := session.Open(path, nil)
	if err != nil {
		return Session{}, err
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		return Session{}, err
	}
	title, _ := s.Title()
	return Session{Harness: HarnessPi, ID: s.ID(), Path: path, Cwd: s.Header().Cwd, Title: cmp.Or(PiName(path), title),
		Modified: fi.ModTime(), Size: fi.Size()}, nil
}

func piSession(i session.SessionInfo) Session {
	s := Session{Harness: HarnessPi, ID: i.ID, Path: i.Path, Cwd: i.Cwd, Title: i.Title, FirstMessage: i.FirstMessage,
		Created: i.Created, Modified: i.Modified, Size: i.Size, Subagent: i.Subagent, Err: i.Err}
	if i.Err == nil {
		s.Title = cmp.Or(PiName(i.Path), i.Title)
	}
	return s
}

// PiName is the name pi gave the session at path: the last session_info
// entry's name in the file's last 64 KiB (pi appends one when a session
// is named with /name), else "".
func PiName(path string) string {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	off := max(0, fi.Size()-claudeHeadBytes)
	tail, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return ""
	}
	name := ""
	for line := range bytes.Lines(tail) {
		if !bytes.Contains(line, []byte(`"session_info"`)) {
			continue
		}
		if v, err := jsonx.Parse(line); err == nil && v.Get("type").Is("session_info") {
			if n, ok := v.Get("name").Text(); ok {
				name = n
			}
		}
	}
	return name
}
