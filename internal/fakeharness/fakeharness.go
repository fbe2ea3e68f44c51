// Package fakeharness writes Claude Code transcripts and Codex rollouts
// as those harnesses lay them out (projects/<slug>/<id>.jsonl and the
// subagents' beside and under a session's directory;
// sessions/YYYY/MM/DD/rollout-…-<id>.jsonl, archived_sessions/), with
// the few records a listing and a search read: for the tests of what
// reads another harness's files as they change under it.
package fakeharness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Dirs are a Claude Code and a Codex data dir being written, and the
// clock their files are stamped by (each write moves it on).
type Dirs struct {
	Claude, Codex string
	Clock         time.Time
	// Step is how far each write moves the clock (0: none, ties).
	Step func() time.Duration
	// Transcripts and Rollouts are the files written, in order.
	Transcripts, Rollouts []string
	n                     int
}

// New is Dirs under root (root/claude, root/codex), its clock at clock.
func New(root string, clock time.Time) *Dirs {
	return &Dirs{Claude: filepath.Join(root, "claude"), Codex: filepath.Join(root, "codex"), Clock: clock}
}

// Next is a number never given before, for ids and words.
func (d *Dirs) Next() int {
	d.n++
	return d.n
}

// Write appends lines to the file at path (made, with its directories,
// if not there) and stamps it with the clock moved on. A path that is
// there and no regular file (a FIFO) is left alone: opening one to write
// would wait for a reader.
func (d *Dirs) Write(path string, lines ...string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if d.Step != nil {
		d.Clock = d.Clock.Add(d.Step())
	}
	os.Chtimes(path, d.Clock, d.Clock)
	return err
}

// Timestamp is the clock as the harnesses write a record's time.
func (d *Dirs) Timestamp() string { return d.Clock.UTC().Format("2006-01-02T15:04:05.000Z") }

// UserLine is a Claude Code user record of session id saying text.
func (d *Dirs) UserLine(id, text string) string {
	return fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":"/w/p","uuid":"u%d","timestamp":%q,"message":{"role":"user","content":%q}}`, id, d.Next(), d.Timestamp(), text)
}

// TitleLine is a Claude Code custom-title record of session id.
func TitleLine(id, title string) string {
	return fmt.Sprintf(`{"type":"custom-title","customTitle":%q,"sessionId":%q}`, title, id)
}

// TranscriptID is the session id of a Claude Code transcript: its
// file's name.
func TranscriptID(path string) string { return strings.TrimSuffix(filepath.Base(path), ".jsonl") }

// Transcript writes a new Claude Code transcript in the project
// directory named project, its first prompt text, and returns its path.
func (d *Dirs) Transcript(project, text string) (string, error) {
	id := fmt.Sprintf("c%07d-0000-4000-8000-000000000000", d.Next())
	path := filepath.Join(d.Claude, "projects", project, id+".jsonl")
	if err := d.Write(path, d.UserLine(id, text)); err != nil {
		return "", err
	}
	d.Transcripts = append(d.Transcripts, path)
	return path, nil
}

// Subagent writes a subagent's transcript of the session at parent:
// beside it (agent-N.jsonl), or under its directory's subagents/ where
// nested. It returns "" for a parent that is a subagent's under another.
func (d *Dirs) Subagent(parent string, nested bool) (string, error) {
	if filepath.Base(filepath.Dir(parent)) == "subagents" {
		return "", nil
	}
	name := fmt.Sprintf("agent-%d.jsonl", d.Next())
	path := filepath.Join(filepath.Dir(parent), name)
	if nested {
		path = filepath.Join(strings.TrimSuffix(parent, ".jsonl"), "subagents", name)
	}
	if err := d.Write(path, d.UserLine(TranscriptID(parent), "sub task")); err != nil {
		return "", err
	}
	d.Transcripts = append(d.Transcripts, path)
	return path, nil
}

// HistoryLine is a line of Claude Code's history.jsonl: a prompt typed in
// session id.
func (d *Dirs) HistoryLine(id, text string) string {
	return fmt.Sprintf(`{"display":%q,"timestamp":%d,"sessionId":%q,"project":"/w/h"}`, text, d.Clock.UnixMilli(), id)
}

// CodexEvent is a Codex event_msg record of type typ saying message.
func (d *Dirs) CodexEvent(typ, message string) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":%q,"message":%q}}`, d.Timestamp(), typ, message)
}

// Rollout writes a new Codex rollout of March 2026's day day: its
// session_meta (none where !meta, a rollout Codex's listing leaves out)
// and a prompt text. It returns its path.
func (d *Dirs) Rollout(day string, meta bool, text string) (string, error) {
	n := d.Next()
	id := fmt.Sprintf("019d%04x-aaaa-7bbb-8ccc-%012x", n, n)
	path := filepath.Join(d.Codex, "sessions", "2026", "03", day, "rollout-2026-03-01T10-00-00-"+id+".jsonl")
	first := fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":"/w/p"}}`, d.Timestamp(), id, d.Timestamp())
	if !meta {
		first = d.CodexEvent("user_message", "hi")
	}
	if err := d.Write(path, first, d.CodexEvent("user_message", text)); err != nil {
		return "", err
	}
	d.Rollouts = append(d.Rollouts, path)
	return path, nil
}

// RolloutID is the session id a rollout's name ends in.
func RolloutID(path string) string {
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".zst"), ".jsonl")
	return name[max(0, len(name)-36):]
}

// IndexLine is a line of Codex's session_index.jsonl naming session id.
func (d *Dirs) IndexLine(id, name string) string {
	return fmt.Sprintf(`{"id":%q,"thread_name":%q,"updated_at":%q}`, id, name, d.Timestamp())
}

// A Change is one thing a person or a harness did to the dirs: the paths
// a watcher names for it (a directory made names its files), and
// whether only a whole listing can see it (Whole: a file the listing
// reads besides the transcripts written, a directory removed with them).
type Change struct {
	Paths []string
	Whole bool
}

// ClaudeChanges are the changes made to the Claude Code dir, each of the
// files written so far, picked with rng: a transcript new (in a project
// and in a new one), appended to or retitled, a subagent's beside or
// nested, one removed or replaced by a FIFO or a link, files that are no
// transcript, history.jsonl written, a session's directory removed.
func (d *Dirs) ClaudeChanges(rng *rand.Rand) []func() (Change, error) {
	pick := func() string { return d.Transcripts[rng.IntN(len(d.Transcripts))] }
	one := func(path string, err error) (Change, error) { return Change{Paths: []string{path}}, err }
	return []func() (Change, error){
		func() (Change, error) { return one(d.Transcript("-w-p", fmt.Sprint("task ", d.n))) },
		func() (Change, error) { return one(d.Transcript(fmt.Sprintf("-w-new%d", d.n), "a new project")) },
		func() (Change, error) {
			path := pick()
			line := d.UserLine(TranscriptID(path), "more")
			if rng.IntN(2) == 0 {
				line = TitleLine(TranscriptID(path), fmt.Sprint("title ", rng.IntN(100)))
			}
			return one(path, d.Write(path, line))
		},
		func() (Change, error) {
			path, err := d.Subagent(pick(), rng.IntN(2) == 0)
			if path == "" {
				return Change{}, err
			}
			return one(path, err)
		},
		func() (Change, error) {
			path := pick()
			os.Remove(path)
			return one(path, nil)
		},
		func() (Change, error) {
			path := pick()
			os.Remove(path)
			// Where its directory is gone, nothing is made.
			if rng.IntN(2) == 0 {
				syscall.Mkfifo(path, 0o600)
			} else {
				os.Symlink("/etc/passwd", path)
			}
			return one(path, nil)
		},
		func() (Change, error) {
			notes := filepath.Join(filepath.Dir(pick()), fmt.Sprintf("notes%d.txt", d.Next()))
			loose := filepath.Join(d.Claude, "projects", fmt.Sprintf("loose%d.jsonl", d.Next()))
			err := errors.Join(d.Write(notes, "not a transcript"), d.Write(loose, d.UserLine("loose", "beside the projects")))
			return Change{Paths: []string{notes, loose}}, err
		},
		func() (Change, error) {
			path := filepath.Join(d.Claude, "history.jsonl")
			err := d.Write(path, d.HistoryLine(TranscriptID(pick()), fmt.Sprint("typed ", d.Next())))
			return Change{Paths: []string{path}, Whole: true}, err
		},
		func() (Change, error) {
			dir := strings.TrimSuffix(pick(), ".jsonl")
			if _, err := os.Stat(dir); err != nil {
				return Change{}, nil
			}
			return Change{Paths: []string{dir}, Whole: true}, os.RemoveAll(dir)
		},
	}
}

// CodexChanges are the changes made to the Codex dir, as ClaudeChanges:
// a rollout new (of no session_meta now and then, or of another day),
// appended to, archived, removed, one that cannot be read (a .zst that
// is not one), session_index.jsonl written, a day's directory removed.
func (d *Dirs) CodexChanges(rng *rand.Rand) []func() (Change, error) {
	pick := func() string { return d.Rollouts[rng.IntN(len(d.Rollouts))] }
	one := func(path string, err error) (Change, error) { return Change{Paths: []string{path}}, err }
	return []func() (Change, error){
		func() (Change, error) { return one(d.Rollout("01", rng.IntN(4) != 0, fmt.Sprint("task ", d.n))) },
		func() (Change, error) {
			return one(d.Rollout(fmt.Sprintf("%02d", 2+rng.IntN(20)), true, "another day"))
		},
		func() (Change, error) {
			path := pick()
			return one(path, d.Write(path, d.CodexEvent("agent_message", "done")))
		},
		func() (Change, error) {
			path := pick()
			archived := filepath.Join(d.Codex, "archived_sessions", filepath.Base(path))
			os.MkdirAll(filepath.Dir(archived), 0o700)
			if os.Rename(path, archived) != nil {
				return Change{}, nil
			}
			d.Rollouts = append(d.Rollouts, archived)
			return Change{Paths: []string{path, archived}}, nil
		},
		func() (Change, error) {
			path := pick()
			os.Remove(path)
			return one(path, nil)
		},
		func() (Change, error) {
			n := d.Next()
			path := filepath.Join(d.Codex, "sessions", "2026", "03", "01", fmt.Sprintf("rollout-2026-03-01T10-00-00-019d%04x-aaaa-7bbb-8ccc-%012x.jsonl.zst", n, n))
			return one(path, d.Write(path, "not zstd"))
		},
		func() (Change, error) {
			path := filepath.Join(d.Codex, "session_index.jsonl")
			err := d.Write(path, d.IndexLine(RolloutID(pick()), fmt.Sprint("named ", d.Next())))
			return Change{Paths: []string{path}, Whole: true}, err
		},
		func() (Change, error) {
			dir := filepath.Dir(pick())
			if filepath.Base(dir) == "archived_sessions" {
				return Change{}, nil
			}
			return Change{Paths: []string{dir}, Whole: true}, os.RemoveAll(dir)
		},
	}
}
