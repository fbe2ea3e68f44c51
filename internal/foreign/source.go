package foreign

import (
	"fmt"
	"os"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
)

// The harnesses whose sessions this package reads.
const (
	HarnessClaude = "claude" // Claude Code: ~/.claude/projects/<project>/<uuid>.jsonl
	HarnessCodex  = "codex"  // Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
	HarnessPi     = "pi"     // pi: ~/.pi/agent/sessions, omp's format without the slot
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
	// Err says why a file found where the harness keeps its sessions is
	// not one of its sessions (another harness's format, say); the other
	// fields are then partial.
	Err error

	codex CodexInfo
}

// Sessions lists Codex rollouts as Sessions.
func codexSessions(list []CodexSession) []Session {
	out := make([]Session, len(list))
	for i, c := range list {
		out[i] = codexSession(c)
	}
	return out
}

func codexSession(c CodexSession) Session {
	return Session{Harness: HarnessCodex, ID: c.ID, Path: c.Path, Cwd: c.Cwd, Title: c.Title, FirstMessage: c.FirstMessage,
		Created: Time(c.Created), Modified: Time(c.Modified), Size: c.Size, codex: c.CodexInfo}
}

// List lists one harness's sessions under root, newest first. Subagent
// transcripts are listed only with subagents.
func List(harness, root string, subagents bool) ([]Session, error) {
	switch harness {
	case HarnessClaude:
		return ListClaude(root, subagents)
	case HarnessCodex:
		list, err := ListCodex(root)
		return codexSessions(list), err
	}
	return nil, fmt.Errorf("no lister for %q sessions", harness)
}

// At describes the transcript at path, of the given harness, as a listing
// of root would.
func At(harness, root, path string) (Session, error) {
	switch harness {
	case HarnessClaude:
		return ClaudeSessionAt(root, path)
	case HarnessCodex:
		c, err := CodexSessionAt(root, path)
		return codexSession(c), err
	}
	return Session{}, fmt.Errorf("no reader for %q sessions", harness)
}

// Convert converts a listed Claude Code or Codex session into omp entries,
// as omp's importer for its harness does.
func Convert(s Session) (*Converted, error) {
	switch s.Harness {
	case HarnessClaude:
		return ConvertClaude(s.Path, s.Cwd)
	case HarnessCodex:
		return ConvertCodex(s.Path, s.codex)
	}
	return nil, fmt.Errorf("%s: %s sessions are read as they are, not converted", s.Path, s.Harness)
}

// Source is the provenance omp records for an import of s.
func (s Session) Source() Source {
	return Source{Harness: s.Harness, ID: s.ID, Path: s.Path, Cwd: s.Cwd}
}

// Detect names the harness that wrote the transcript at path, from its
// first readable line: "codex" for a session_meta record, "claude" for a
// Claude Code record (one with a sessionId, or a summary line), "" for an
// omp-format session (a title slot or header, which xdev opens as it is,
// pi's included). A file it cannot tell is an error naming it.
func Detect(path string) (string, error) {
	first, _, err := firstRecord(path)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.Size() == 0 {
			return "", fmt.Errorf("%s: empty file", path)
		}
		return "", fmt.Errorf("%s: no JSON object on any line: not a session", path)
	}
	if h := harnessOf(first); h != "?" {
		return h, nil
	}
	return "", fmt.Errorf("%s: line 1 is neither an omp, pi, Claude Code nor Codex record", path)
}

// harnessOf names the harness whose record a transcript's first object
// is: "" for omp's format (a title slot or header), "?" when it cannot
// tell.
func harnessOf(first jsonx.Value) string {
	typ := first.Get("type")
	switch {
	case typ.Is("session") || typ.Is("title"):
		return ""
	case typ.Is("session_meta") || typ.Is("response_item") || typ.Is("event_msg") || typ.Is("turn_context"):
		return HarnessCodex
	case first.Get("sessionId").Kind() == jsonx.String || typ.Is("summary") || typ.Is("user") || typ.Is("assistant") ||
		typ.Is("custom-title") || typ.Is("ai-title"):
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
