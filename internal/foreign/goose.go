package foreign

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/usage"
)

// Goose (block/goose) keeps its sessions in one SQLite database,
// sessions/sessions.db under its data dir (crates/goose/src/session/
// session_manager.rs; schema_version 5 as of late 2025):
//
//	sessions  id ("20251202_1"), name, description, session_type,
//	    working_dir, created_at, updated_at (SQL timestamps, UTC),
//	    total_tokens, input_tokens, output_tokens and their accumulated_*
//	    sums over the session's calls
//	messages  id, session_id, role (user, assistant), content_json (a
//	    JSON array of Goose's MessageContent, tagged by type: text,
//	    image, toolRequest {id, toolCall {status, value {name,
//	    arguments}}}, toolResponse {id, toolResult {status, value
//	    {content, isError} or, older, value [content]}}, thinking,
//	    redactedThinking, systemNotification, …), created_timestamp (Unix
//	    seconds), metadata_json {userVisible, agentVisible}
//
// Before the database, Goose kept a session a JSONL file in the same
// directory, sessions/<id>.jsonl: a first line of metadata
// {working_dir, description, …, accumulated_input_tokens, …}, then one
// message a line {role, created, content}. Its source still reads them
// (to import into the database); xdev lists one the database does not
// hold. The one real database seen has a session and no messages: what
// a message holds rests on Goose's source (docs/import.md).
//
// Usage is recorded per session, not per call: each session is one call
// of its accumulated tokens (its last call's when no sum is kept), of the
// model newer schemas record (model_config_json, provider_name; schema 5
// records none, so its calls are unpriced).

// GooseDir is Goose's data dir: $GOOSE_PATH_ROOT/data, else
// $XDG_DATA_HOME/goose, else %APPDATA%\Block\goose\data on Windows and
// ~/.local/share/goose elsewhere (Goose's Paths::data_dir, through the
// etcetera crate's XDG strategy).
func GooseDir() (string, error) {
	if d := os.Getenv("GOOSE_PATH_ROOT"); d != "" {
		return filepath.Join(d, "data"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "goose"), nil
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("APPDATA"); d != "" {
			return filepath.Join(d, "Block", "goose", "data"), nil
		}
	}
	return envOrHome("", filepath.Join(".local", "share", "goose"))
}

// gooseDB is the name of Goose's database, in sessions/ under its data
// dir.
const gooseDB = "sessions.db"

type gooseSource struct{ root string }

func (g gooseSource) Harness() string { return HarnessGoose }
func (g gooseSource) Root() string    { return g.root }

// gooseTables are the tables and columns xdev reads.
var gooseTables = map[string][]string{
	"sessions": {"id", "name", "description", "working_dir", "created_at", "updated_at"},
	"messages": {"id", "session_id", "role", "content_json", "created_timestamp"},
}

func withGoose(db string, fn func(*sqlite3.Conn) error) error {
	return withDatabase(HarnessGoose, db, checkTables(gooseTables, "not a Goose database xdev reads"), fn)
}

// gooseTime is a SQL timestamp of Goose's ("2025-12-02 16:58:55", UTC)
// as Unix ms; 0 when it is none.
func gooseTime(s string) float64 {
	for _, layout := range []string{time.DateTime, time.RFC3339Nano, "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.UnixMilli())
		}
	}
	return 0
}

// List lists the sessions of Goose's database, each from its row and
// the first text of its first user message, and the JSONL sessions
// beside it that the database does not hold.
func (g gooseSource) List(bool) ([]Session, error) {
	dir := filepath.Join(g.root, "sessions")
	db := filepath.Join(dir, gooseDB)
	var out []Session
	inDB := map[string]bool{}
	if _, err := os.Lstat(db); err == nil {
		list, err := listGooseDB(db)
		if err != nil {
			out = append(out, Session{Harness: HarnessGoose, ID: gooseDB, Path: db, Err: err})
		}
		for _, s := range list {
			inDB[s.ID] = true
		}
		out = append(out, list...)
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || inDB[id] || !e.Type().IsRegular() {
			continue
		}
		out = append(out, gooseJSONLSession(filepath.Join(dir, e.Name())))
	}
	sortNewestFirst(out)
	return out, nil
}

func listGooseDB(db string) ([]Session, error) {
	var out []Session
	err := withGoose(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT s.id, s.name, s.description, s.working_dir, coalesce(s.created_at, ''), coalesce(s.updated_at, ''),
			coalesce((SELECT m.content_json FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
				ORDER BY m.created_timestamp, m.id LIMIT 1), ''),
			coalesce((SELECT sum(length(m.content_json)) FROM messages m WHERE m.session_id = s.id), 0)
			FROM sessions s`)
		if err != nil {
			return err
		}
		defer st.Close()
		for st.Step() {
			s := Session{Harness: HarnessGoose, ID: st.ColumnText(0), Title: cmp.Or(st.ColumnText(2), st.ColumnText(1)),
				Cwd: st.ColumnText(3), Created: Time(gooseTime(st.ColumnText(4))), Modified: Time(gooseTime(st.ColumnText(5)))}
			if !validContainedID(s.ID) {
				continue
			}
			s.Path = containedPath(db, s.ID)
			s.Size = st.ColumnInt64(7) // its messages' bytes: the database holds every session
			if content, err := jsonx.Parse([]byte(st.ColumnText(6))); err == nil {
				s.FirstMessage = gooseText(content)
			}
			out = append(out, s)
		}
		return st.Err()
	})
	return out, err
}

// gooseText is the text items of a message's content, joined.
func gooseText(content jsonx.Value) string {
	var out []string
	for _, c := range content.Items() {
		if t, ok := stringField(c, "text"); ok && c.Get("type").Is("text") {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// gooseJSONLSession describes a JSONL session from its metadata line and
// its first user message, within its first records.
func gooseJSONLSession(path string) Session {
	s := Session{Harness: HarnessGoose, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Path: path}
	if fi, err := os.Stat(path); err == nil {
		s.Size, s.Modified = fi.Size(), fi.ModTime()
	}
	n, stop := 0, errors.New("enough")
	_, err := eachLine(path, func(b []byte, line int) (bool, error) {
		n++
		v, err := jsonx.Parse(b)
		if err != nil || !isRecordValue(v) {
			return false, nil
		}
		if line == 1 && !v.Get("role").Defined() {
			s.Cwd, _ = v.Get("working_dir").Text()
			s.Title, _ = v.Get("description").Text()
			return true, nil
		}
		if created, ok := v.Get("created").Float(); ok && s.Created.IsZero() {
			s.Created = Time(created * 1000)
		}
		if v.Get("role").Is("user") && s.FirstMessage == "" {
			s.FirstMessage = gooseText(v.Get("content"))
		}
		if s.FirstMessage != "" || n >= detectRecords {
			return true, stop
		}
		return true, nil
	})
	if err != nil && !errors.Is(err, stop) {
		s.Err = err
	}
	return s
}

func (g gooseSource) At(path string) (Session, error) {
	if strings.HasSuffix(path, ".jsonl") {
		return gooseJSONLSession(path), nil
	}
	h, db, id, ok := SplitContained(path)
	if !ok || h != HarnessGoose {
		return Session{}, fmt.Errorf("%s: not a Goose session (a path of sessions.db, then the session's id)", path)
	}
	list, err := listGooseDB(db)
	if err != nil {
		return Session{}, err
	}
	return sessionIn(list, path, db, id)
}

func (g gooseSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamGoose(s.Path, purpose, begin, emit)
	}
}

// StreamGoose converts the Goose session the path names (…/sessions.db/
// <id>, or a JSONL session file) into omp entries, one branch in the
// order of its messages (docs/import.md has the mapping). Each entry
// names, as its source line, its message's row id (the line of a JSONL
// file).
func StreamGoose(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	ch := &chain{prefix: "goose", purpose: purpose, emit: emit}
	if strings.HasSuffix(path, ".jsonl") {
		s := gooseJSONLSession(path)
		if s.Err != nil {
			return s.Err
		}
		meta := &Converted{Title: s.Title, Cwd: s.Cwd, Started: s.Created}
		if err := begin(meta); err != nil {
			return err
		}
		skipped, err := eachLine(path, func(b []byte, line int) (bool, error) {
			v, err := jsonx.Parse(b)
			if err != nil || !isRecordValue(v) {
				return false, nil
			}
			if !v.Get("role").Defined() {
				return line == 1, nil // the metadata line
			}
			created, _ := v.Get("created").Float()
			return true, gooseMessage(ch, v.Get("role"), v.Get("content"), v.Get("metadata"), created*1000, line)
		})
		meta.Skipped += skipped
		return err
	}
	h, db, id, ok := SplitContained(path)
	if !ok || h != HarnessGoose {
		return fmt.Errorf("%s: not a Goose session (a path of sessions.db, then the session's id)", path)
	}
	return withGoose(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT name, description, working_dir, coalesce(created_at, '') FROM sessions WHERE id = ?`)
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
		meta := &Converted{Title: cmp.Or(st.ColumnText(1), st.ColumnText(0)), Cwd: st.ColumnText(2), Started: Time(gooseTime(st.ColumnText(3)))}
		st.Close()
		if meta.Title != "" {
			meta.TitleSource = "auto"
		}
		if err := begin(meta); err != nil {
			return err
		}
		metaCol := `''`
		if hasColumn(c, "messages", "metadata_json") {
			metaCol = `coalesce(metadata_json, '')`
		}
		msgs, _, err := c.Prepare(`SELECT id, role, content_json, created_timestamp, ` + metaCol + ` FROM messages WHERE session_id = ? ORDER BY created_timestamp, id`)
		if err != nil {
			return err
		}
		defer msgs.Close()
		msgs.BindText(1, id)
		for msgs.Step() {
			content, err := jsonx.Parse([]byte(msgs.ColumnText(2)))
			if err != nil || content.Kind() != jsonx.Array {
				meta.Skipped++
				continue
			}
			md, _ := jsonx.Parse([]byte(msgs.ColumnText(4)))
			role := jsonx.Str(msgs.ColumnText(1))
			if err := gooseMessage(ch, role, content, md, float64(msgs.ColumnInt64(3))*1000, int(msgs.ColumnInt64(0))); err != nil {
				return err
			}
		}
		return msgs.Err()
	})
}

// gooseMessage adds the entries of one message: a user's text a user
// message, its tool responses tool results; an assistant's thinking,
// text and tool requests an assistant message. A message the agent did
// not see (metadata agentVisible false: a notice the chat showed) is
// left out.
func gooseMessage(ch *chain, role, content, metadata jsonx.Value, ts float64, line int) error {
	if v := metadata.Get("agentVisible"); v.Kind() == jsonx.Bool && !v.Truthy() {
		return nil
	}
	var blocks, results []jsonx.Value
	for _, c := range content.Items() {
		switch typ, _ := c.Get("type").Text(); typ {
		case "text":
			if t, ok := stringField(c, "text"); ok {
				blocks = append(blocks, textBlock(t))
			}
		case "thinking":
			if t, ok := stringField(c, "thinking"); ok && role.Is("assistant") {
				blocks = append(blocks, thinkingBlock(t))
			}
		case "toolRequest", "frontendToolRequest":
			if role.Is("assistant") {
				id, _ := stringField(c, "id")
				call := c.Get("toolCall")
				name, _ := stringField(call.Get("value"), "name")
				blocks = append(blocks, toolCallBlock(id, name, call.Get("value").Get("arguments")))
			}
		case "toolResponse":
			id, _ := stringField(c, "id")
			r := c.Get("toolResult")
			out, isErr := gooseToolOutput(r)
			results = append(results, toolResult(id, "", jsonx.ArrayOf(textBlock(out)), isErr, ts))
		}
	}
	for _, r := range results {
		if err := ch.message(r, ts, line); err != nil {
			return err
		}
	}
	if len(blocks) == 0 {
		return nil
	}
	if role.Is("assistant") {
		return ch.message(assistantMessage(blocks, "", "", "", tokens{}, ts), ts, line)
	}
	return ch.message(userMessage(blocks, ts), ts, line)
}

// gooseToolOutput is the text of a tool result and whether it failed:
// {status "success", value {content, isError}} (or, older, value
// [content]), or {status "error", error}.
func gooseToolOutput(r jsonx.Value) (string, bool) {
	if r.Get("status").Is("error") {
		e, _ := r.Get("error").Text()
		return e, true
	}
	v := r.Get("value")
	items := v
	if isRecordValue(v) {
		items = v.Get("content")
	}
	var out []string
	for _, it := range items.Items() {
		if t, ok := stringField(it, "text"); ok {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n"), v.Get("isError").Truthy()
}

// Usage is the session's recorded tokens as one call: the accumulated
// sums over its calls, else its last call's, of the model newer schemas
// name (model_config_json's model_name, provider_name; schema 5 names
// none: unpriced), priced by the price table (Goose records no cost).
func (g gooseSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessGoose, s)
	h, db, id, ok := SplitContained(s.Path)
	if !ok || h != HarnessGoose {
		return u, nil // a JSONL session: its metadata's counts are not read
	}
	err := withGoose(db, func(c *sqlite3.Conn) error {
		if !hasColumn(c, "sessions", "accumulated_input_tokens") {
			return nil
		}
		// Newer schemas name the session's model: model_config_json
		// {model_name, …} and provider_name.
		model, provider := `''`, `''`
		if hasColumn(c, "sessions", "model_config_json") {
			model = `coalesce(json_extract(CASE WHEN json_valid(model_config_json) THEN model_config_json END, '$.model_name'), '')`
		}
		if hasColumn(c, "sessions", "provider_name") {
			provider = `coalesce(provider_name, '')`
		}
		st, _, err := c.Prepare(`SELECT coalesce(accumulated_input_tokens, input_tokens, 0), coalesce(accumulated_output_tokens, output_tokens, 0),
			coalesce(updated_at, ''), ` + model + `, ` + provider + ` FROM sessions WHERE id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		st.BindText(1, id)
		if !st.Step() {
			return st.Err()
		}
		in, out := float64(max(0, st.ColumnInt64(0))), float64(max(0, st.ColumnInt64(1)))
		if in == 0 && out == 0 {
			return nil
		}
		call := usage.Call{Time: gooseTime(st.ColumnText(2)), Model: usage.RefModel(cmp.Or(st.ColumnText(4), "goose"), cmp.Or(st.ColumnText(3), "unknown"), ""),
			Tokens: usage.Tokens{Input: in, Output: out}}
		call.Total = call.Tokens.Sum()
		u.Calls = append(u.Calls, call)
		return nil
	})
	return u, err
}

// Stamp is what says a session changed: a database session's
// updated_at, a JSONL session's file.
func (g gooseSource) Stamp(s Session) (size, mtime int64, err error) {
	if _, _, _, ok := SplitContained(s.Path); ok {
		return 0, s.Modified.UnixNano(), nil
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), nil
}
