package foreign

import (
	"os"
	"path/filepath"

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
	return Session{Harness: HarnessPi, ID: s.ID(), Path: path, Cwd: s.Header().Cwd, Title: session.Stat(path).ListTitle(),
		Modified: fi.ModTime(), Size: fi.Size()}, nil
}

func piSession(i session.SessionInfo) Session {
	// session.List titles a session by pi's session_info name when it has
	// no other: the one rule for every listing of the same file.
	return Session{Harness: HarnessPi, ID: i.ID, Path: i.Path, Cwd: i.Cwd, Title: i.Title, FirstMessage: i.FirstMessage,
		Created: i.Created, Modified: i.Modified, Size: i.Size, Subagent: i.Subagent, Err: i.Err}
}
