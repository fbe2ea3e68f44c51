package foreign

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
)

// The harnesses whose sessions this package reads.
const (
	HarnessClaude = "claude" // Claude Code: ~/.claude/projects/<project>/<uuid>.jsonl
	HarnessCodex  = "codex"  // Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
	HarnessPi     = "pi"     // pi: ~/.pi/agent/sessions, omp's format without the slot
	// GitHub Copilot CLI: ~/.copilot/session-state/<id>/events.jsonl
	HarnessCopilot = "copilot"
	// Gemini CLI: ~/.gemini/tmp/<projectHash>/chats/session-*.json(l)
	HarnessGemini = "gemini"
	// opencode: ~/.local/share/opencode/opencode.db
	HarnessOpencode = "opencode"
	// Qwen Code: ~/.qwen/projects/<project>/chats/<id>.jsonl
	HarnessQwen = "qwen"
	// Continue: ~/.continue/sessions/<id>.json
	HarnessContinue = "continue"
	// Kimi CLI: ~/.kimi/sessions/<workdir md5>/<id>/context.jsonl
	HarnessKimi = "kimi"
	// Cline: VS Code's globalStorage/saoudrizwan.claude-dev/tasks/<id>/
	HarnessCline = "cline"
	// Crush: <project>/.crush/crush.db, the projects in
	// ~/.local/share/crush/projects.json
	HarnessCrush = "crush"
	// Goose: ~/.local/share/goose/sessions/sessions.db
	HarnessGoose = "goose"
	// Aider: <project>/.aider.chat.history.md, one session per run
	HarnessAider = "aider"
)

// Session is one foreign transcript as a listing shows it: what was read
// from its head, its tail and its harness's own indexes, never the whole
// file.
type Session struct {
	Harness      string
	ID           string
	Path         string
	Cwd          string
	Title        string
	FirstMessage string
	Created      time.Time
	Modified     time.Time
	Size         int64
	Subagent     bool
	// ParentSession is the id of the session a subagent's was spawned
	// from, where the harness records it (Codex's parent_thread_id).
	ParentSession string
	// Err says why a file found where the harness keeps its sessions is
	// not one of its sessions (another harness's format, say); the other
	// fields are then partial.
	Err error

	// mtimeNs is the file's modification time (ns) as the listing stat'ed
	// it, 0 when unknown: with Size, the stamp a mirror's refresh keeps
	// a conversion by, without a second stat of every transcript.
	mtimeNs int64
	codex   CodexInfo
}

// A Source is one harness's sessions on this machine: what list, show,
// export, search and import need of it. NewSource makes one.
type Source interface {
	// Harness names it: HarnessClaude, HarnessCodex, HarnessPi.
	Harness() string
	// Root is the harness's data dir.
	Root() string
	// List lists its sessions, newest first, from each file's head, tail
	// and size and the harness's own indexes, never a whole transcript.
	// Subagent transcripts are listed only with subagents. A file that is
	// there but is not one of its sessions is listed with Err set.
	List(subagents bool) ([]Session, error)
	// At describes the file at path as List would, wherever it lies.
	At(path string) (Session, error)
	// Stream is the conversion of one of its sessions into omp entries
	// for purpose, or nil for a harness that writes omp's format (pi),
	// whose files the store opens as they are.
	Stream(s Session, purpose Purpose) Stream
	// Usage reads the model calls of one of its sessions, each once,
	// with the harness's own cost where it records one.
	Usage(s Session) (usage.Session, error)
}

// A CwdLister is a Source that can list the sessions of one project
// without reading every session's head: a harness that keeps each
// project's sessions in a directory of its own. What it lists includes
// every session of that cwd, and may hold others (the caller filters).
type CwdLister interface {
	ListCwd(cwd string, subagents bool) ([]Session, error)
}

// A ProjectReader is a Source whose sessions live in the projects
// themselves (Crush's <project>/.crush/crush.db, Aider's
// <project>/.aider.chat.history.md), not under its root: besides the
// projects its harness records (Crush's projects.json) it reads those of
// the directories dirs gives when it lists, which the catalog finds
// (the working directory, the projects a person names, the directories
// the other harnesses' sessions ran in), never by walking the disk.
type ProjectReader interface {
	WithProjects(dirs func() []string) Source
}

// A ListCacher is a Source whose listing can keep what it read of each
// file in a list cache in dir (listcache.go), so that the next listing
// reads only the files that changed.
type ListCacher interface {
	WithListCache(dir string) Source
}

// A SessionDirser is a Source that says which directories its
// sessions lie in: the top ones, each with how deep below it sessions
// are found. A session comes, goes or is replaced only by changing one
// of their modification times, while one only appended to keeps the
// working directory its first lines record; so the catalog keeps the
// working directories of a listing for as long as these directories do
// not move (catalog's cwdsmemo.go). A directory only a session's own
// files churn in (Claude Code's <session>/tool-results/) is left below
// Depth: what lies there is the session's, of its working directory.
type SessionDirser interface {
	SessionDirs() []SessionDir
}

// A SessionDir is a directory sessions lie in, to Depth directories
// below it (-1: any).
type SessionDir struct {
	Path  string
	Depth int
}

// A FileNamer is a Source whose sessions are named by their files, so
// that the sessions a name matches are found without opening one: its
// Files give each transcript's id, path, project and whether it is a
// subagent's (Claude Code's <id>.jsonl), and At describes the one chosen.
type FileNamer interface {
	Files() []Session
}

// Purpose says what a conversion is for, where the two differ.
type Purpose int

const (
	// ForResume converts as omp's importer does: what `xdev import`
	// writes and a resume sends.
	ForResume Purpose = iota
	// ForReading converts for a person or a search to read: the whole
	// conversation, a Claude Code compaction marked where it happened
	// rather than cut off as a new root (see StreamClaude).
	ForReading
)

// NewSource is the source of harness's sessions under root (DefaultRoot
// gives the usual one).
func NewSource(harness, root string) (Source, error) {
	k, ok := KindOf(harness)
	if !ok {
		return nil, unknownHarness(harness)
	}
	return k.New(root), nil
}

// DefaultRoot is where harness keeps its sessions (its Kind's
// DefaultRoot).
func DefaultRoot(harness string) (string, error) {
	k, ok := KindOf(harness)
	if !ok {
		return "", unknownHarness(harness)
	}
	return k.DefaultRoot()
}

type claudeSource struct{ root, listCache string }

func (c claudeSource) Harness() string { return HarnessClaude }
func (c claudeSource) Root() string    { return c.root }
func (c claudeSource) List(subagents bool) ([]Session, error) {
	return listClaude(c.root, subagents, nil, c.listCache)
}

// WithListCache is the source whose listings keep a list cache in dir.
func (c claudeSource) WithListCache(dir string) Source { c.listCache = dir; return c }
func (c claudeSource) At(path string) (Session, error) { return ClaudeSessionAt(c.root, path) }

// SessionDirs are the projects directories and each project's (claudeFiles
// reads no deeper but a session's subagents, whose cwd is the session's).
func (c claudeSource) SessionDirs() []SessionDir {
	return []SessionDir{{filepath.Join(c.root, "projects"), 1}, {filepath.Join(c.root, ".projects"), 1}}
}
func (c claudeSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamClaude(s.Path, s.Cwd, purpose, begin, emit)
	}
}

type codexSource struct{ root, listCache string }

func (c codexSource) Harness() string { return HarnessCodex }
func (c codexSource) Root() string    { return c.root }

// WithListCache is the source whose listings keep a list cache in dir.
func (c codexSource) WithListCache(dir string) Source { c.listCache = dir; return c }

// SessionDirs are the rollouts' directories, every level of them (the
// days').
func (c codexSource) SessionDirs() []SessionDir {
	var out []SessionDir
	for _, r := range codexRoots {
		out = append(out, SessionDir{filepath.Join(c.root, r), -1})
	}
	return out
}

func (c codexSource) List(subagents bool) ([]Session, error) {
	list, err := listCodex(c.root, c.listCache)
	out := make([]Session, 0, len(list))
	for _, r := range list {
		if r.Subagent && !subagents {
			continue
		}
		out = append(out, codexSession(r))
	}
	return out, err
}
func (c codexSource) At(path string) (Session, error) {
	r, err := CodexSessionAt(c.root, path)
	return codexSession(r), err
}
func (c codexSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamCodex(s.Path, s.codex, purpose, begin, emit)
	}
}

func codexSession(c CodexSession) Session {
	return Session{Harness: HarnessCodex, ID: c.ID, Path: c.Path, Cwd: c.Cwd, Title: c.Title, FirstMessage: c.FirstMessage,
		Created: Time(c.Created), Modified: Time(c.Modified), Size: c.Size, Err: c.Err, Subagent: c.Subagent,
		ParentSession: c.Parent, mtimeNs: c.mtimeNs, codex: c.CodexInfo}
}

// SourceLine is the member a conversion for reading puts first in each
// entry: the line of the source transcript the entry came from, so that a
// search hit or a reader names the source's line, not the conversion's.
// First, so that the line is known from an entry's first bytes.
const SourceLine = "sourceLine"

// sourceLinePrefix is how an entry with SourceLine begins.
const sourceLinePrefix = `{"` + SourceLine + `":`

// withSourceLine puts SourceLine first in an entry's JSON object.
func withSourceLine(entry []byte, line int) []byte {
	if len(entry) < 2 || entry[0] != '{' {
		return entry
	}
	out := append([]byte(sourceLinePrefix), strconv.Itoa(line)...)
	if len(entry) > 2 {
		out = append(out, ',')
	}
	return append(out, entry[1:]...)
}

// SourceLineOf is the source line an entry of a conversion for reading
// names (SourceLine), read from the entry's first bytes (a prefix of the
// entry will do), if it names one.
func SourceLineOf(entry []byte) (int, bool) {
	rest, ok := bytes.CutPrefix(entry, []byte(sourceLinePrefix))
	if !ok {
		return 0, false
	}
	n := 0
	for k, c := range rest {
		if c < '0' || c > '9' {
			if k == 0 || n < 1 || c != ',' && c != '}' {
				return 0, false
			}
			return n, true
		}
		if n > 1<<40 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return 0, false
}

// sortNewestFirst puts a listing in the order every Source lists: the
// most recently changed first, then by path, so that equal times list
// the same way every time.
func sortNewestFirst(out []Session) {
	slices.SortFunc(out, func(a, b Session) int {
		return cmp.Or(b.Modified.Compare(a.Modified), strings.Compare(b.Path, a.Path))
	})
}

// openListed opens s.Path for a listing to read its head, setting s's
// size and time from its stat; on failure it sets s.Err and says false.
func openListed(s *Session) (*os.File, fs.FileInfo, bool) {
	f, fi, err := regularfile.Open(s.Path, 0)
	if fi != nil {
		s.Size, s.Modified = fi.Size(), fi.ModTime()
	}
	if err != nil {
		s.Err = err
		return nil, nil, false
	}
	return f, fi, true
}

// Provenance is what omp records of s in an import of it.
func (s Session) Provenance() Provenance {
	return Provenance{Harness: s.Harness, ID: s.ID, Path: s.Path, Cwd: s.Cwd}
}

// Detect names the harness that wrote the transcript at path from what it
// holds: "codex" for Codex records (session_meta, response_item, …),
// "claude" for Claude Code records (any record with a sessionId, or one of
// the types Claude Code writes: user, assistant, summary,
// file-history-snapshot, progress, queue-operation, custom-title…), ""
// for an omp-format session (a title slot or header, which xdev opens as
// it is, pi's included). The first record that tells decides; records
// that tell nothing (another harness's bookkeeping, a type this reader
// does not know) are passed over, up to detectRecords records or
// detectBytes bytes. A file it cannot tell is an error naming it.
func Detect(path string) (string, error) {
	fi, err := regularfile.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Size() == 0 {
		return "", fmt.Errorf("%s: empty file", path)
	}
	r, err := openTranscript(path)
	if err != nil {
		return "", err
	}
	defer r.Close()
	br := bufio.NewReaderSize(io.LimitReader(r, detectBytes), 64<<10)
	if strings.HasSuffix(path, ".json") {
		// A Gemini CLI chat, a Continue session, a Cline task's file is
		// one JSON document, not lines.
		head, _ := br.Peek(continueHeadBytes)
		switch {
		case geminiDocument(head):
			return HarnessGemini, nil
		case continueDocument(head):
			return HarnessContinue, nil
		case clineFile(path, head):
			return HarnessCline, nil
		}
	}
	objects := 0
	for n := 0; n < detectRecords; n++ {
		line, _, err := readLineBounded(br, session.DefaultMaxLineBytes)
		if n == 0 {
			line = session.TrimBOM(line) // as every UTF-8 reader of the harnesses drops it
		}
		if len(line) > 0 {
			if v, perr := jsonx.Parse(line); perr == nil && v.Kind() == jsonx.Object {
				objects++
				if h := harnessOf(v); h != "?" {
					return h, nil
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	if objects == 0 {
		return "", fmt.Errorf("%s: no JSON object in its first %s: not a session", path, sizeText(detectBytes))
	}
	return "", fmt.Errorf("%s: its first records are neither omp's, pi's, Claude Code's nor Codex's", path)
}

// How far Detect reads.
const (
	detectRecords = 200
	detectBytes   = 64 << 20
)

func sizeText(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// claudeTypes are the record types Claude Code writes, as its transcripts
// show them (../shared/fixtures/real and the versions issue 23 lists).
var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "attachment": true,
	"file-history-snapshot": true, "progress": true, "queue-operation": true,
	"custom-title": true, "ai-title": true, "away_summary": true, "agent-name": true,
	"last-prompt": true, "pr-link": true, "tag": true, "mode": true, "worktree-state": true,
}

// codexTypes are the record types of a Codex rollout.
var codexTypes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true,
}

// harnessOf names the harness whose record v is: "" for omp's format (a
// title slot or header), "?" when the record does not tell.
func harnessOf(v jsonx.Value) string {
	typ, _ := v.Get("type").Text()
	switch {
	case (typ == "session" || typ == "title") && v.Get("sessionId").Kind() != jsonx.String:
		return ""
	case codexTypes[typ] && v.Get("payload").Kind() != jsonx.Undefined:
		return HarnessCodex
	case copilotRecord(v):
		return HarnessCopilot
	case geminiRecord(v):
		return HarnessGemini
	case opencodeRecord(v):
		return HarnessOpencode
	case qwenRecord(v):
		return HarnessQwen
	case kimiRecord(v):
		return HarnessKimi
	case v.Get("sessionId").Kind() == jsonx.String || claudeTypes[typ]:
		return HarnessClaude
	}
	return "?"
}

// formatName says whose record format h names.
func formatName(h string) string {
	switch h {
	case "":
		return "an omp or pi session's header"
	case HarnessCodex:
		return "a Codex record"
	}
	return "a " + h + " record"
}
