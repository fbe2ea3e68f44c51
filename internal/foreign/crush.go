package foreign

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// Crush (charmbracelet/crush) keeps each project's sessions in the
// project itself: a SQLite database, <project>/.crush/crush.db (the data
// directory is the project's options.data_directory, ".crush" by
// default), in WAL mode. Its global data dir (CrushDir) holds
// projects.json, {projects: [{path, data_dir, last_accessed}]}, every
// project Crush ran in (internal/projects), which is how xdev finds them
// beside the projects it is told of (ProjectReader). The database
// (internal/db/migrations, as of migration 20250627000000):
//
//	sessions  id, parent_session_id (an agent tool's or a title's
//	    session), title, message_count, prompt_tokens,
//	    completion_tokens, cost (USD, the session's with its children's:
//	    Crush adds a child's cost to its parent's), created_at,
//	    updated_at (Unix seconds, whatever the schema's comment says),
//	    summary_message_id
//	messages  id, session_id, role (user, assistant, tool), parts (a
//	    JSON array of {type, data}: text {text}, reasoning {thinking},
//	    image_url, binary, tool_call {id, name, input (JSON text)},
//	    tool_result {tool_call_id, name, content, is_error}, finish
//	    {reason, time}), model, provider, created_at, updated_at,
//	    finished_at; newer ones is_summary_message
//
// Usage is recorded per session, not per message: each session is one
// call of its last model, with its own cost (its recorded cost less its
// children's, which they report themselves).

// CrushDir is Crush's global data dir: $CRUSH_GLOBAL_DATA, else
// $XDG_DATA_HOME/crush, else %LOCALAPPDATA%\crush on Windows and
// ~/.local/share/crush elsewhere (Crush's config.GlobalConfigData).
func CrushDir() (string, error) {
	if d := os.Getenv("CRUSH_GLOBAL_DATA"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "crush"), nil
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "crush"), nil
		}
	}
	return envOrHome("", filepath.Join(".local", "share", "crush"))
}

// The files of Crush.
const (
	crushDB       = "crush.db"
	crushDataDir  = ".crush" // a project's data directory by default
	crushProjects = "projects.json"
)

type crushSource struct {
	root     string
	projects func() []string // project directories found elsewhere
}

func (c crushSource) Harness() string { return HarnessCrush }
func (c crushSource) Root() string    { return c.root }

// WithProjects is the source that also reads the projects dirs names.
func (c crushSource) WithProjects(dirs func() []string) Source {
	c.projects = dirs
	return c
}

// crushProject is a project's database and the directory its sessions
// ran in.
type crushProject struct{ db, dir string }

// databases are the Crush databases of the projects projects.json names
// and of dirs, each once.
func (c crushSource) databases(dirs []string) []crushProject {
	var out []crushProject
	seen := map[string]bool{}
	add := func(db, dir string) {
		if seen[db] {
			return
		}
		if fi, err := os.Lstat(db); err != nil || !fi.Mode().IsRegular() {
			return
		}
		seen[db] = true
		out = append(out, crushProject{db: db, dir: dir})
	}
	if b, err := regularfile.ReadFile(filepath.Join(c.root, crushProjects), 16<<20); err == nil {
		var list struct {
			Projects []struct {
				Path    string `json:"path"`
				DataDir string `json:"data_dir"`
			} `json:"projects"`
		}
		if json.Unmarshal(b, &list) == nil {
			for _, p := range list.Projects {
				data := cmp.Or(p.DataDir, crushDataDir)
				if !filepath.IsAbs(data) {
					data = filepath.Join(p.Path, data)
				}
				if p.Path != "" {
					add(filepath.Join(data, crushDB), p.Path)
				}
			}
		}
	}
	for _, d := range dirs {
		add(filepath.Join(d, crushDataDir, crushDB), d)
	}
	return out
}

// crushProjectOf is the directory a database's sessions ran in: the one
// above its data directory.
func crushProjectOf(db string) string { return filepath.Dir(filepath.Dir(db)) }

// List lists the sessions of every Crush database found (projects.json's
// projects and the ones it was told of), from each sessions table and the
// first text of each session's first user message. A database that
// cannot be read is a row with its error; the others still list.
func (c crushSource) List(subagents bool) ([]Session, error) {
	var dirs []string
	if c.projects != nil {
		dirs = c.projects()
	}
	return c.list(c.databases(dirs), subagents), nil
}

// ListCwd lists the sessions of the project at cwd and those above it.
func (c crushSource) ListCwd(cwd string, subagents bool) ([]Session, error) {
	return c.list(c.databases(Ancestors(cwd)), subagents), nil
}

func (c crushSource) list(projects []crushProject, subagents bool) []Session {
	var out []Session
	for _, p := range projects {
		list, err := listCrushDB(p.db, p.dir, subagents)
		if err != nil {
			out = append(out, Session{Harness: HarnessCrush, ID: filepath.Base(p.dir), Path: p.db, Cwd: p.dir, Err: err})
			continue
		}
		out = append(out, list...)
	}
	sortNewestFirst(out)
	return out
}

// crushTables are the tables and columns xdev reads.
var crushTables = map[string][]string{
	"sessions": {"id", "parent_session_id", "title", "prompt_tokens", "completion_tokens", "cost", "created_at", "updated_at"},
	"messages": {"id", "session_id", "role", "parts", "model", "created_at"},
}

func withCrush(db string, fn func(*sqlite3.Conn) error) error {
	return withDatabase(HarnessCrush, db, checkTables(crushTables, "not a Crush database xdev reads"), fn)
}

// crushTime is a Crush time as Unix ms: seconds as Crush writes them, or
// milliseconds as its schema's comment says (a value past 1e11 s is
// the year 5138).
func crushTime(v int64) float64 {
	if v > 1e11 {
		return float64(v)
	}
	return float64(v) * 1000
}

// listCrushDB lists the sessions of one database, whose sessions ran in
// dir.
func listCrushDB(db, dir string, subagents bool) ([]Session, error) {
	var out []Session
	err := withCrush(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT s.id, coalesce(s.parent_session_id, ''), s.title, s.created_at, s.updated_at,
			coalesce((SELECT m.parts FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
				ORDER BY m.created_at, m.rowid LIMIT 1), ''),
			coalesce((SELECT sum(length(m.parts)) FROM messages m WHERE m.session_id = s.id), 0)
			FROM sessions s`)
		if err != nil {
			return err
		}
		defer st.Close()
		for st.Step() {
			s := Session{Harness: HarnessCrush, ID: st.ColumnText(0), ParentSession: st.ColumnText(1), Title: st.ColumnText(2),
				Cwd: dir, Created: Time(crushTime(st.ColumnInt64(3))), Modified: Time(crushTime(st.ColumnInt64(4)))}
			if !validContainedID(s.ID) {
				continue
			}
			s.Path = containedPath(db, s.ID)
			s.Subagent = s.ParentSession != ""
			s.Size = st.ColumnInt64(6) // its messages' bytes: the database holds every session
			if parts, err := jsonx.Parse([]byte(st.ColumnText(5))); err == nil {
				s.FirstMessage = crushText(parts, "text")
			}
			if s.Subagent && !subagents {
				continue
			}
			out = append(out, s)
		}
		return st.Err()
	})
	return out, err
}

// crushText is the text of a message's parts of type typ, joined.
func crushText(parts jsonx.Value, typ string) string {
	var out []string
	for _, p := range parts.Items() {
		if p.Get("type").Is(typ) {
			if t, ok := stringField(p.Get("data"), "text"); ok {
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, "\n")
}

func (c crushSource) At(path string) (Session, error) {
	h, db, id, ok := SplitContained(path)
	if !ok || h != HarnessCrush {
		return Session{}, fmt.Errorf("%s: not a Crush session (a path of crush.db, then the session's id)", path)
	}
	list, err := listCrushDB(db, crushProjectOf(db), true)
	if err != nil {
		return Session{}, err
	}
	return sessionIn(list, path, db, id)
}

// Stamp is what says a session changed: its updated_at, which Crush
// moves with every message it writes.
func (c crushSource) Stamp(s Session) (size, mtime int64, err error) {
	return 0, s.Modified.UnixNano(), nil
}

func (c crushSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamCrush(s.Path, purpose, begin, emit)
	}
}

// StreamCrush converts the Crush session the path names
// (…/crush.db/<id>) into omp entries, one branch in the order of its
// messages (docs/import.md has the mapping): a user row's text parts a
// user message; an assistant row's reasoning, text and tool calls an
// assistant message, a change of model a model change; a tool row's
// results tool results; the session's summary message a compaction.
// Each entry names, as its source line, its message's row.
func StreamCrush(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	h, db, id, ok := SplitContained(path)
	if !ok || h != HarnessCrush {
		return fmt.Errorf("%s: not a Crush session (a path of crush.db, then the session's id)", path)
	}
	return withCrush(db, func(c *sqlite3.Conn) error {
		summaryCol := `''`
		if hasColumn(c, "sessions", "summary_message_id") {
			summaryCol = `coalesce(summary_message_id, '')`
		}
		st, _, err := c.Prepare(`SELECT title, created_at, ` + summaryCol + ` FROM sessions WHERE id = ?`)
		if err != nil {
			return err
		}
		st.BindText(1, id)
		if !st.Step() {
			st.Close()
			if err := st.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%w: no session %s", fs.ErrNotExist, id)
		}
		meta := &Converted{Title: st.ColumnText(0), Cwd: crushProjectOf(db), Started: Time(crushTime(st.ColumnInt64(1)))}
		summaryID := st.ColumnText(2)
		st.Close()
		if meta.Title != "" {
			meta.TitleSource = "auto"
		}
		if err := begin(meta); err != nil {
			return err
		}
		isSummary := `0`
		if hasColumn(c, "messages", "is_summary_message") {
			isSummary = `coalesce(is_summary_message, 0)`
		}
		msgs, _, err := c.Prepare(`SELECT rowid, id, role, parts, coalesce(model, ''), coalesce(provider, ''), created_at, ` +
			isSummary + ` FROM messages WHERE session_id = ? ORDER BY created_at, rowid`)
		if err != nil {
			return err
		}
		defer msgs.Close()
		msgs.BindText(1, id)
		ch := &chain{prefix: "crush", purpose: purpose, emit: emit}
		names := map[string]string{} // tool call id → tool name
		model := ""
		for msgs.Step() {
			row, mid, role := int(msgs.ColumnInt64(0)), msgs.ColumnText(1), msgs.ColumnText(2)
			parts, err := jsonx.Parse([]byte(msgs.ColumnText(3)))
			if err != nil || parts.Kind() != jsonx.Array {
				meta.Skipped++
				continue
			}
			ts := crushTime(msgs.ColumnInt64(6))
			if mid == summaryID || msgs.ColumnInt64(7) != 0 {
				if t := crushText(parts, "text"); t != "" {
					if err := ch.compaction(t, "Imported Crush summary", ts, row); err != nil {
						return err
					}
				}
				continue
			}
			if err := crushMessage(ch, role, parts, msgs.ColumnText(5), msgs.ColumnText(4), ts, row, &model, names); err != nil {
				return err
			}
		}
		return msgs.Err()
	})
}

// crushMessage adds the entries of one message row.
func crushMessage(ch *chain, role string, parts jsonx.Value, provider, model string, ts float64, row int, last *string, names map[string]string) error {
	switch role {
	case "user":
		var text []jsonx.Value
		for _, p := range parts.Items() {
			if t, ok := stringField(p.Get("data"), "text"); ok && p.Get("type").Is("text") {
				text = append(text, textBlock(t))
			}
		}
		if len(text) == 0 {
			return nil
		}
		return ch.message(userMessage(text, ts), ts, row)
	case "assistant":
		if model != "" && provider+"/"+model != *last {
			*last = provider + "/" + model
			if err := ch.modelChange(provider, model, ts, row); err != nil {
				return err
			}
		}
		var content []jsonx.Value
		for _, p := range parts.Items() {
			d := p.Get("data")
			switch typ, _ := p.Get("type").Text(); typ {
			case "reasoning":
				if t, ok := stringField(d, "thinking"); ok {
					content = append(content, thinkingBlock(t))
				}
			case "text":
				if t, ok := stringField(d, "text"); ok {
					content = append(content, textBlock(t))
				}
			case "tool_call":
				callID, _ := stringField(d, "id")
				name, _ := stringField(d, "name")
				names[callID] = name
				var args jsonx.Value
				if in, ok := d.Get("input").Text(); ok {
					if v, err := jsonx.Parse([]byte(in)); err == nil {
						args = v
					} else {
						args = jsonx.Str(in)
					}
				}
				content = append(content, toolCallBlock(callID, name, args))
			}
		}
		if len(content) == 0 {
			return nil
		}
		return ch.message(assistantMessage(content, provider, provider, model, tokens{}, ts), ts, row)
	case "tool":
		for _, p := range parts.Items() {
			if !p.Get("type").Is("tool_result") {
				continue
			}
			d := p.Get("data")
			callID, _ := stringField(d, "tool_call_id")
			name, _ := stringField(d, "name")
			if name == "" {
				name = names[callID]
			}
			out, _ := d.Get("content").Text()
			if err := ch.message(toolResult(callID, name, jsonx.ArrayOf(textBlock(out)), d.Get("is_error").Truthy(), ts), ts, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// Usage is the session's recorded usage as one call: its tokens, and
// its cost less its children's (Crush adds a child session's cost to
// its parent's; each child reports its own), of the last model its
// messages name. A cost of 0 is Crush's for a model it has no price of:
// unpriced, not free.
func (c crushSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessCrush, s)
	h, db, id, ok := SplitContained(s.Path)
	if !ok || h != HarnessCrush {
		return u, fmt.Errorf("%s: not a Crush session", s.Path)
	}
	err := withCrush(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT s.prompt_tokens, s.completion_tokens, s.cost, s.updated_at,
			coalesce((SELECT sum(k.cost) FROM sessions k WHERE k.parent_session_id = s.id), 0),
			coalesce((SELECT m.provider FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant' AND m.model != ''
				ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1), ''),
			coalesce((SELECT m.model FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant' AND m.model != ''
				ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1), '')
			FROM sessions s WHERE s.id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		st.BindText(1, id)
		if !st.Step() {
			return st.Err()
		}
		in, out := float64(st.ColumnInt64(0)), float64(st.ColumnInt64(1))
		if in == 0 && out == 0 && st.ColumnFloat(2) == 0 {
			return nil // no call answered
		}
		call := usage.Call{Time: crushTime(st.ColumnInt64(3)), Model: usage.RefModel(st.ColumnText(5), cmp.Or(st.ColumnText(6), "unknown"), ""),
			Tokens: usage.Tokens{Input: in, Output: out}}
		call.Total = call.Tokens.Sum()
		if cost := st.ColumnFloat(2); cost > 0 && !math.IsInf(cost, 0) {
			call.Cost, call.HasCost = max(0, cost-st.ColumnFloat(4)), true
		}
		u.Calls = append(u.Calls, call)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return u, err
}
