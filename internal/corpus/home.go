package corpus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/session"
)

// HomeOptions describe a user's archive as users report theirs: tens of
// thousands of sessions of several harnesses, gigabytes in all.
type HomeOptions struct {
	Sessions int   // how many sessions, besides Largest
	Bytes    int64 // their total size, at least: each session ends its last turn
	Seed     uint64
	// Largest, when not zero, adds one omp session of this size (the
	// 1.8 GB file users report), the newest of the archive.
	Largest int64
	// Projects is how many working directories the sessions share; 100
	// when zero.
	Projects int
}

// HomeStats describe what WriteHome wrote.
type HomeStats struct {
	Sessions  map[string]int   // by harness: omp, claude, codex
	Bytes     map[string]int64 // by harness
	Largest   string           // the Largest session's path, if any
	Smallest  int64            // the smallest session's bytes
	Biggest   int64            // the biggest one's, besides Largest
	TotalSize int64
}

// The harnesses of a home and their shares of its sessions: omp (xdev's
// own format), Claude Code and Codex, each in its own layout under the
// home (~/.omp/agent/sessions, ~/.claude/projects, ~/.codex/sessions).
var homeMix = []struct {
	harness string
	share   float64
}{{"omp", 0.4}, {"claude", 0.4}, {"codex", 0.2}}

// sizeSigma is the spread of session sizes: log-normal, as real archives
// are (a median of a quarter of the mean, one session in a thousand ten
// times the mean or more). With 25,000 sessions of 10 GB that is a
// median near 110 KB and a largest near 50 MB.
const sizeSigma = 1.6

// WriteHome writes a home directory at home (which must not exist) of
// opts.Sessions sessions of opts.Bytes in all, drawn as real archives
// are: sizes log-normal between 8 KB and a few hundred times the mean,
// the harnesses mixed as homeMix says, each in its own layout and format,
// every session made of the same real-shaped content as Write's (prompts,
// thinking, tool calls, 1–200 KB outputs of code and logs) with the
// Vocabulary's rare words at known frequencies. Modification times are
// spread over a year, newest last. The same options write the same bytes
// (save modification times); sessions are written by GOMAXPROCS workers.
func WriteHome(home string, opts HomeOptions) (HomeStats, error) {
	if _, err := os.Lstat(home); err == nil {
		return HomeStats{}, fmt.Errorf("%s exists", home)
	} else if !errors.Is(err, os.ErrNotExist) {
		return HomeStats{}, err
	}
	if opts.Sessions <= 0 || opts.Bytes <= 0 {
		return HomeStats{}, errors.New("a home needs sessions and bytes")
	}
	if opts.Projects <= 0 {
		opts.Projects = 100
	}
	sizes := homeSizes(opts.Sessions, opts.Bytes, opts.Seed)
	st := HomeStats{Sessions: map[string]int{}, Bytes: map[string]int64{}, Smallest: math.MaxInt64}
	var (
		mu    sync.Mutex
		first error
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	begin := time.Date(2025, 12, 1, 8, 0, 0, 0, time.UTC)
	step := 365 * 24 * time.Hour / time.Duration(opts.Sessions+1)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				s := homeSession{
					index:   i,
					harness: homeHarness(i, opts.Seed),
					size:    sizes[i],
					seed:    opts.Seed<<32 + uint64(i),
					created: begin.Add(time.Duration(i) * step),
					cwd:     fmt.Sprintf("/work/project-%03d", i%opts.Projects),
				}
				path, n, err := s.write(home)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("session %d (%s): %w", i, s.harness, err)
				}
				st.Sessions[s.harness]++
				st.Bytes[s.harness] += n
				st.TotalSize += n
				st.Smallest, st.Biggest = min(st.Smallest, n), max(st.Biggest, n)
				mu.Unlock()
				if err == nil {
					mtime := s.created.Add(time.Duration(30+i%600) * time.Minute)
					err = os.Chtimes(path, mtime, mtime)
				}
			}
		})
	}
	for i := range opts.Sessions {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return st, first
	}
	if opts.Largest > 0 {
		s := homeSession{index: opts.Sessions, harness: "omp", size: opts.Largest, seed: opts.Seed<<32 + uint64(opts.Sessions),
			created: begin.Add(time.Duration(opts.Sessions) * step), cwd: "/work/project-large"}
		path, n, err := s.write(home)
		if err != nil {
			return st, fmt.Errorf("the largest session: %w", err)
		}
		st.Largest = path
		st.Sessions["omp"]++
		st.Bytes["omp"] += n
		st.TotalSize += n
	}
	return st, nil
}

// homeSizes draws n session sizes, log-normal, scaled so they sum to
// total; none is below 8 KB.
func homeSizes(n int, total int64, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, 0x51e5))
	draws := make([]float64, n)
	sum := 0.0
	for i := range draws {
		draws[i] = math.Exp(r.NormFloat64() * sizeSigma)
		sum += draws[i]
	}
	sizes := make([]int64, n)
	for i, d := range draws {
		sizes[i] = max(8<<10, int64(d/sum*float64(total)))
	}
	return sizes
}

// homeHarness says which harness session i of a home is, by homeMix.
func homeHarness(i int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed+uint64(i), 0x4a55))
	x := r.Float64()
	for _, m := range homeMix {
		if x < m.share {
			return m.harness
		}
		x -= m.share
	}
	return homeMix[len(homeMix)-1].harness
}

// homeSession is one session of a home being written.
type homeSession struct {
	index   int
	harness string
	size    int64
	seed    uint64
	created time.Time
	cwd     string
}

// write writes the session where its harness keeps it and returns its
// path and size. Each file is written under a temporary name and renamed,
// so a reader never sees half of one.
func (s homeSession) write(home string) (string, int64, error) {
	var (
		path  string
		write func(*os.File) (int64, error)
	)
	switch s.harness {
	case "omp":
		dir := filepath.Join(session.SessionsDir(filepath.Join(home, ".omp", "agent")), session.Slug(s.cwd))
		var id string
		write = func(f *os.File) (int64, error) {
			st, err := Write(f, Options{Size: s.size, Seed: s.seed, Cwd: s.cwd, Created: s.created})
			id = st.ID
			return st.Bytes, err
		}
		// omp names the file by the id, known once written.
		tmp, n, err := writeTemp(dir, write)
		if err != nil {
			return "", n, err
		}
		path = filepath.Join(dir, session.FileName(s.created, id))
		return path, n, os.Rename(tmp, path)
	case "claude":
		id := transcriptID(s.seed)
		path = filepath.Join(home, ".claude", "projects", claudeProjectDir(s.cwd), id+".jsonl")
		write = func(f *os.File) (int64, error) { return writeClaudeTranscript(f, s, id) }
	case "codex":
		id := transcriptID(s.seed)
		path = filepath.Join(home, ".codex", "sessions", s.created.Format("2006/01/02"),
			"rollout-"+s.created.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
		write = func(f *os.File) (int64, error) { return writeCodexRollout(f, s, id) }
	default:
		return "", 0, fmt.Errorf("no harness %q", s.harness)
	}
	tmp, n, err := writeTemp(filepath.Dir(path), write)
	if err != nil {
		return "", n, err
	}
	return path, n, os.Rename(tmp, path)
}

// writeTemp writes a new file in dir by write, under a temporary name it
// returns.
func writeTemp(dir string, write func(*os.File) (int64, error)) (string, int64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	f, err := os.CreateTemp(dir, ".gen-*.tmp")
	if err != nil {
		return "", 0, err
	}
	n, err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", n, err
	}
	return f.Name(), n, nil
}

// transcriptID is a UUIDv4-shaped id drawn from seed.
func transcriptID(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x1d))
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()>>16)
}

// claudeProjectDir is Claude Code's directory name for a cwd: every
// character not a letter or digit becomes '-'.
func claudeProjectDir(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}
