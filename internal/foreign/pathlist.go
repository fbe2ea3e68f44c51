package foreign

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A PathLister is a Source whose listing is of files, one session each,
// what it says of each depending only on that file and the harness's
// listing inputs (listingInputs): it can say what a listing says of a
// few files alone, without a walk of every one. What a watcher that saw
// a few transcripts change (xdev serve) asks, where a whole listing
// stats and reads the head of every transcript the harness keeps.
type PathLister interface {
	// ListPaths is what List(subagents) says of the files at paths, and
	// only of them: the sessions of those that are its transcripts (in no
	// order); a path it lists nothing of is gone, or not a transcript.
	// ok is false where only a whole listing can say: a path is one of
	// the listing's inputs (its own index of titles or prompts), or lies
	// among the transcripts and is no file (a directory made, or one
	// removed or renamed away with the transcripts under it).
	ListPaths(paths []string, subagents bool) (sessions []Session, ok bool)
}

// ListPaths is Claude Code's (PathLister): the transcripts of a project
// directory (projects/ or .projects/), a subagent's agent-*.jsonl beside
// them and those under <session>/subagents/, each read as a listing
// reads it (claudeListed; history.jsonl read again only once its stat
// changed, cachedClaudeHistory).
func (c claudeSource) ListPaths(paths []string, subagents bool) ([]Session, bool) {
	var history map[string]*claudeHistory
	var registered []string
	read := false
	var out []Session
	for _, p := range cleanPaths(paths) {
		if slices.Contains(c.listingInputs(), p) {
			return nil, false
		}
		project, sub, nested, transcript, among := c.transcriptPath(p)
		if !among {
			continue // not under a projects directory: nothing a listing reads
		}
		if !transcript {
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
				return nil, false // a directory, gone or made: what was under it is not named
			}
			continue // a file that is no transcript
		}
		if sub && !subagents {
			continue
		}
		if !read {
			history, registered, read = cachedClaudeHistory(c.root), claudeRegistered(c.root), true
		}
		// A project's own transcripts are its directory's regular files;
		// a subagents directory's are what a glob of it names, read
		// through a link as claudeListed reads them.
		if fi, err := os.Lstat(p); !nested && (err != nil || !fi.Mode().IsRegular()) {
			if err == nil && fi.IsDir() {
				return nil, false
			}
			continue // gone, or not a regular file: a listing skips it
		}
		if s, ok := claudeListed(p, claudeProjectCwd(project, registered), history, nil); ok {
			s.Subagent = sub
			out = append(out, s)
		}
	}
	return out, true
}

// claudeHistories keeps the last history.jsonl ListPaths read of each
// root, by its stat: a server's watcher asks again for every few
// transcripts that change (twice: its listing and its index), and the
// file changes only when a prompt is typed, where a person's of 15,000
// prompts (3.5 MB) took 33 ms to read.
var claudeHistories struct {
	sync.Mutex
	byRoot map[string]historyRead
}

// historyRead is a history read, and the stat it was read at.
type historyRead struct {
	stamp   fileStamp
	history map[string]*claudeHistory
}

// cachedClaudeHistory is readClaudeHistory(root), read again only when
// the file's stat changed (or changed too lately to tell by it). What it
// returns is shared: read it, never change it.
func cachedClaudeHistory(root string) map[string]*claudeHistory {
	path := filepath.Join(root, "history.jsonl")
	stamp := stampFile(path)
	racy := !stamp.Missing && time.Since(time.Unix(0, stamp.Mtime)) < racyWindow
	claudeHistories.Lock()
	defer claudeHistories.Unlock()
	if h, ok := claudeHistories.byRoot[root]; ok && h.stamp == stamp && !racy {
		return h.history
	}
	history := readClaudeHistory(root)
	if claudeHistories.byRoot == nil {
		claudeHistories.byRoot = map[string]historyRead{}
	}
	if racy {
		delete(claudeHistories.byRoot, root)
	} else {
		claudeHistories.byRoot[root] = historyRead{stamp, history}
	}
	return history
}

// transcriptPath says where p lies among the transcripts a listing reads
// (claudeFiles): among is whether it is under a projects directory's
// project directory; transcript whether it is named as a transcript is
// there, of the project named project, a subagent's where sub, under a
// session's subagents directory where nested.
func (c claudeSource) transcriptPath(p string) (project string, sub, nested, transcript, among bool) {
	for _, container := range []string{"projects", ".projects"} {
		rel, err := filepath.Rel(filepath.Join(c.root, container), p)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) == 1 {
			return "", false, false, false, false // a file or directory beside the projects
		}
		name := parts[len(parts)-1]
		switch {
		case len(parts) == 2 && strings.HasSuffix(name, ".jsonl"):
			return parts[0], strings.HasPrefix(name, "agent-"), false, true, true
		case len(parts) == 4 && parts[2] == "subagents" && strings.HasSuffix(name, ".jsonl"):
			return parts[0], true, true, true, true
		}
		return parts[0], false, false, false, true
	}
	return "", false, false, false, false
}

// ListPaths is Codex's (PathLister): the rollouts under sessions/,
// .sessions/ and archived_sessions/, each read as a listing reads it
// (codexListed, session_index.jsonl read once).
func (c codexSource) ListPaths(paths []string, subagents bool) ([]Session, bool) {
	var index map[string]codexIndexRow
	var out []Session
	for _, p := range cleanPaths(paths) {
		if slices.Contains(c.listingInputs(), p) {
			return nil, false
		}
		root := ""
		for _, r := range codexRoots {
			if rel, err := filepath.Rel(filepath.Join(c.root, r), p); err == nil && filepath.IsLocal(rel) {
				root = r
				break
			}
		}
		if root == "" {
			continue // not among the rollouts
		}
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode().IsRegular() && isRolloutName(p):
		case err == nil && fi.Mode().IsRegular():
			continue // a file that is no rollout
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			continue // a walk lists no link
		case os.IsNotExist(err) && isRolloutName(p):
			continue // a rollout gone
		default:
			return nil, false // a directory, gone or made, or what cannot be told
		}
		if index == nil {
			index = codexIndex(c.root)
		}
		s, listed, err := codexListed(p, index, nil)
		if err != nil {
			// As a listing has it: listed with the reason.
			s = CodexSession{CodexInfo: CodexInfo{ID: CodexRolloutID(p)}, Path: p, Err: err, Size: fi.Size(), Modified: float64(fi.ModTime().UnixMilli())}
			listed = true
		}
		if !listed || s.Subagent && !subagents {
			continue
		}
		s.Archived = root == "archived_sessions"
		out = append(out, codexSession(s))
	}
	return out, true
}

// cleanPaths are paths cleaned, each once.
func cleanPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, filepath.Clean(p))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
