package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// DirStats describe what WriteDir wrote.
type DirStats struct {
	Sessions  int
	Subagents int
	Projects  int
	Bytes     int64
}

// WriteDir writes n small sessions (2-30 KB each) into dataDir's sessions
// directory, laid out as omp lays them out: 40 projects, omp file names,
// modification times spread over the 90 days after their creation, and a
// subagent transcript beside one session in twenty.
func WriteDir(dataDir string, n int, seed uint64) (DirStats, error) {
	r := rand.New(rand.NewPCG(seed, 0xd1))
	var st DirStats
	const projects = 40
	st.Projects = projects
	for i := range n {
		cwd := fmt.Sprintf("/work/proj-%02d", i%projects)
		created := base.Add(time.Duration(i) * 7 * time.Minute)
		opts := Options{Size: int64(2000 + r.IntN(28000)), Seed: seed<<20 + uint64(i), Cwd: cwd, SmallOutputs: true, Created: created}
		dir := filepath.Join(session.SessionsDir(dataDir), session.Slug(cwd))
		// The id goes into the file name, so write to a temp name first.
		tmp := filepath.Join(dir, fmt.Sprintf(".gen-%d.tmp", i))
		s, err := WriteFile(tmp, opts)
		if err != nil {
			return st, err
		}
		path := filepath.Join(dir, session.FileName(created, s.ID))
		if err := os.Rename(tmp, path); err != nil {
			return st, err
		}
		st.Sessions++
		st.Bytes += s.Bytes
		if i%20 == 7 {
			sub, err := writeSubagent(path, fmt.Sprintf("Task-%d", i))
			if err != nil {
				return st, err
			}
			st.Subagents++
			st.Bytes += sub
		}
		mtime := created.Add(time.Duration(r.IntN(90*24)) * time.Hour)
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			return st, err
		}
	}
	return st, nil
}

func writeSubagent(parent, agent string) (int64, error) {
	s, err := session.CreateSubagent(parent, agent, &session.SessionInit{SystemPrompt: "You are " + agent + ".", Task: "look around", Tools: []string{"read", "grep"}}, session.NewOptions{})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("look around " + strings.Repeat("…", 10)), Timestamp: 1}); err != nil {
		return 0, err
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
