package foreign

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/jsonx"
)

// OpencodeDir is opencode's data dir: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode, where opencode (through xdg-basedir) keeps
// opencode.db.
func OpencodeDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode"), nil
	}
	return envOrHome("", filepath.Join(".local", "share", "opencode"))
}

// opencodeDB is the name of opencode's database in its data dir.
const opencodeDB = "opencode.db"

type opencodeSource struct{ root string }

func (o opencodeSource) Harness() string { return HarnessOpencode }
func (o opencodeSource) Root() string    { return o.root }

// A session of opencode's database is named by the database's path,
// then the session's id (…/opencode.db/ses_…): see containers.go.

// splitOpencodePath is the database and session id an opencode
// session's path (…/opencode.db/ses_…) names.
func splitOpencodePath(path string) (db, id string, ok bool) {
	h, db, id, ok := SplitContained(path)
	return db, id, ok && h == HarnessOpencode
}

// List lists the sessions of opencode's database from its session table
// and, for each, the first text of its first user message (one row of
// message and one of part by their indexes): never every message.
// Subagent sessions (a parent_id) are listed only with subagents.
func (o opencodeSource) List(subagents bool) ([]Session, error) {
	out, err := o.listDB(subagents)
	if err != nil {
		return nil, err
	}
	inDB := map[string]bool{}
	for _, s := range out {
		inDB[s.ID] = true
	}
	// opencode moved its storage/ files into the database and may leave
	// them: a session in both is the database's.
	for _, s := range listOpencodeStorage(filepath.Join(o.root, "storage")) {
		if !inDB[s.ID] && (subagents || !s.Subagent) {
			out = append(out, s)
		}
	}
	sortNewestFirst(out)
	return out, nil
}

// listDB lists the sessions of opencode.db, if there is one.
func (o opencodeSource) listDB(subagents bool) ([]Session, error) {
	db := filepath.Join(o.root, opencodeDB)
	if _, err := os.Lstat(db); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []Session
	err := withOpencode(db, func(c *sqlite3.Conn) error {
		// The first prompt: opencode 2's projected history when the
		// session has one (session_message), else the message and part rows.
		v2 := `''`
		if hasTable(c, "session_message") {
			v2 = `(SELECT json_object('text', json_extract(x.data, '$.text')) FROM session_message x
				WHERE x.session_id = s.id AND x.type = 'user' ORDER BY x.seq LIMIT 1)`
		}
		st, _, err := c.Prepare(`SELECT s.id, coalesce(s.parent_id, ''), s.title, s.directory, s.time_created, s.time_updated,
			coalesce(s.model, ''),
			coalesce(` + v2 + `, (SELECT p.data FROM message m JOIN part p ON p.message_id = m.id
				WHERE m.session_id = s.id AND json_extract(m.data, '$.role') = 'user' AND json_extract(p.data, '$.type') = 'text'
				ORDER BY m.time_created, m.id, p.id LIMIT 1), '')
			FROM session s`)
		if err != nil {
			return err
		}
		defer st.Close()
		for st.Step() {
			s := Session{Harness: HarnessOpencode, ID: st.ColumnText(0), ParentSession: st.ColumnText(1), Title: st.ColumnText(2),
				Cwd: st.ColumnText(3), Created: Time(float64(st.ColumnInt64(4))), Modified: Time(float64(st.ColumnInt64(5)))}
			s.Path = containedPath(db, s.ID)
			s.Subagent = s.ParentSession != ""
			if v, err := jsonx.Parse([]byte(st.ColumnText(7))); err == nil {
				s.FirstMessage, _ = stringField(v, "text")
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

func (o opencodeSource) At(path string) (Session, error) {
	if storage, ok := opencodeStorageOf(path); ok {
		return opencodeStorageSession(storage, path), nil
	}
	db, id, ok := splitOpencodePath(path)
	if !ok {
		return Session{}, fmt.Errorf("%s: not an opencode session (a path of opencode.db, then the session's id)", path)
	}
	list, err := opencodeSource{filepath.Dir(db)}.List(true)
	if err != nil {
		return Session{}, err
	}
	return sessionIn(list, path, db, id)
}

// Stamp is what says a session changed: its time_updated, which opencode
// moves with every message and part it writes.
func (o opencodeSource) Stamp(s Session) (size, mtime int64, err error) {
	return 0, s.Modified.UnixNano(), nil
}

func (o opencodeSource) Stream(s Session, purpose Purpose) Stream {
	return func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamOpencode(s.Path, purpose, begin, emit)
	}
}

// StreamOpencode converts the opencode session the path names
// (…/opencode.db/ses_…) into omp entries, one branch in the order of its
// messages and their parts (docs/import.md has the mapping): a user
// message's text parts become a user message; an assistant message's
// reasoning, text and tool parts an assistant message (a tool part a tool
// call), with the message's tokens and cost as usage, each tool part's
// result following as a tool result; a change of model a model change.
// step-start, step-finish, patch, snapshot and file parts become no
// entry. Each entry names, as its source line, the message's row.
func StreamOpencode(path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	if storage, ok := opencodeStorageOf(path); ok {
		return streamOpencodeStorage(storage, path, purpose, begin, emit)
	}
	db, id, ok := splitOpencodePath(path)
	if !ok {
		return fmt.Errorf("%s: not an opencode session (a path of opencode.db, then the session's id)", path)
	}
	return withOpencode(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT title, directory, time_created FROM session WHERE id = ?`)
		if err != nil {
			return err
		}
		st.BindText(1, id)
		if !st.Step() {
			st.Close()
			if err := st.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%s: no session %s", db, id)
		}
		meta := &Converted{Title: st.ColumnText(0), Cwd: st.ColumnText(1), Started: Time(float64(st.ColumnInt64(2)))}
		st.Close()
		if meta.Title != "" {
			meta.TitleSource = "auto"
		}
		if err := begin(meta); err != nil {
			return err
		}
		ch := &chain{prefix: "opencode", purpose: purpose, emit: emit}
		if done, err := streamOpencodeV2(c, id, ch); done || err != nil {
			return err
		}
		msgs, _, err := c.Prepare(`SELECT m.rowid, m.id, m.time_created, m.data FROM message m WHERE m.session_id = ? ORDER BY m.time_created, m.id`)
		if err != nil {
			return err
		}
		defer msgs.Close()
		msgs.BindText(1, id)
		parts, _, err := c.Prepare(`SELECT data FROM part WHERE message_id = ? ORDER BY id`)
		if err != nil {
			return err
		}
		defer parts.Close()
		model := ""
		for msgs.Step() {
			row, mid, created := int(msgs.ColumnInt64(0)), msgs.ColumnText(1), float64(msgs.ColumnInt64(2))
			m, err := jsonx.Parse([]byte(msgs.ColumnText(3)))
			if err != nil || !isRecordValue(m) {
				meta.Skipped++
				continue
			}
			var ps []jsonx.Value
			parts.Reset()
			parts.BindText(1, mid)
			for parts.Step() {
				if p, err := jsonx.Parse([]byte(parts.ColumnText(0))); err == nil && isRecordValue(p) {
					ps = append(ps, p)
				}
			}
			if err := parts.Err(); err != nil {
				return fmt.Errorf("%s: parts of message %s: %w", db, mid, err)
			}
			if err := opencodeMessage(ch, m, ps, created, row, &model); err != nil {
				return err
			}
		}
		return msgs.Err()
	})
}

// opencodeMessage adds the entries of one message m, with its parts ps,
// created at created (ms) in row row; model is the last model changed to.
func opencodeMessage(ch *chain, m jsonx.Value, ps []jsonx.Value, created float64, row int, model *string) error {
	ts := timestampMs(m.Get("time").Get("created"), created)
	switch {
	case m.Get("role").Is("user"):
		var text []jsonx.Value
		for _, p := range ps {
			if t, ok := stringField(p, "text"); ok && p.Get("type").Is("text") && !p.Get("synthetic").Truthy() {
				text = append(text, textBlock(t))
			}
		}
		if len(text) == 0 {
			return nil
		}
		return ch.message(userMessage(text, ts), ts, row)
	case m.Get("role").Is("assistant"):
		provider, _ := stringField(m, "providerID")
		mm, _ := stringField(m, "modelID")
		if mm != "" && provider+"/"+mm != *model {
			*model = provider + "/" + mm
			if err := ch.modelChange(provider, mm, ts, row); err != nil {
				return err
			}
		}
		var content, results []jsonx.Value
		for _, p := range ps {
			switch typ, _ := p.Get("type").Text(); typ {
			case "reasoning":
				if t, ok := stringField(p, "text"); ok {
					content = append(content, thinkingBlock(t))
				}
			case "text":
				if t, ok := stringField(p, "text"); ok {
					content = append(content, textBlock(t))
				}
			case "tool":
				callID, _ := stringField(p, "callID")
				name, _ := stringField(p, "tool")
				state := p.Get("state")
				content = append(content, toolCallBlock(callID, name, state.Get("input")))
				if state.Get("status").Is("completed") || state.Get("status").Is("error") {
					out, _ := state.Get("output").Text()
					if e, ok := state.Get("error").Text(); ok && out == "" {
						out = e
					}
					end := timestampMs(state.Get("time").Get("end"), ts)
					results = append(results, toolResult(callID, name, jsonx.ArrayOf(textBlock(out)), state.Get("status").Is("error"), end))
				}
			}
		}
		if len(content) == 0 {
			return nil
		}
		if err := ch.message(assistantMessage(content, provider, provider, mm, opencodeTokens(m), ts), ts, row); err != nil {
			return err
		}
		for _, r := range results {
			rts, _ := r.Get("timestamp").Float()
			if err := ch.message(r, rts, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// streamOpencodeV2 converts session id's projected history, opencode 2's
// session_message rows (one a message, in seq order), when it has one:
// done says it did. A row's data is the message without its id and type
// (opencode's SessionMessage): a user's text, an assistant's model,
// content (text, reasoning and tool items, a tool's state with its input
// and content), tokens and cost. Each becomes the message and parts of the
// older rows it was projected from (opencode's v1-read mapping, reversed),
// converted alike; other types of row (none is known) are skipped.
func streamOpencodeV2(c *sqlite3.Conn, id string, ch *chain) (done bool, err error) {
	if !hasTable(c, "session_message") {
		return false, nil
	}
	st, _, err := c.Prepare(`SELECT rowid, type, time_created, data FROM session_message WHERE session_id = ? ORDER BY seq`)
	if err != nil {
		return false, err
	}
	defer st.Close()
	st.BindText(1, id)
	model := ""
	for st.Step() {
		done = true
		row, typ, created := int(st.ColumnInt64(0)), st.ColumnText(1), float64(st.ColumnInt64(2))
		d, err := jsonx.Parse([]byte(st.ColumnText(3)))
		if err != nil || !isRecordValue(d) {
			continue
		}
		m, ps := opencodeV1Of(typ, d)
		if !m.Defined() {
			continue
		}
		if err := opencodeMessage(ch, m, ps, created, row, &model); err != nil {
			return true, err
		}
	}
	return done, st.Err()
}

// opencodeV1Of is a projected message (its type and data) as the message
// and parts it was projected from.
func opencodeV1Of(typ string, d jsonx.Value) (jsonx.Value, []jsonx.Value) {
	created := member("time", jsonx.ObjectOf(member("created", d.Get("time").Get("created"))))
	switch typ {
	case "user":
		t, _ := d.Get("text").Text()
		return jsonx.ObjectOf(member("role", jsonx.Str("user")), created),
			[]jsonx.Value{jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(t)))}
	case "assistant":
		m := jsonx.ObjectOf(member("role", jsonx.Str("assistant")), created,
			member("providerID", d.Get("model").Get("providerID")), member("modelID", d.Get("model").Get("id")),
			member("tokens", d.Get("tokens")), member("cost", d.Get("cost")))
		var ps []jsonx.Value
		for _, item := range d.Get("content").Items() {
			switch it, _ := item.Get("type").Text(); it {
			case "text", "reasoning":
				ps = append(ps, jsonx.ObjectOf(member("type", jsonx.Str(it)), member("text", item.Get("text"))))
			case "tool":
				st := item.Get("state")
				var out []string
				for _, c := range st.Get("content").Items() {
					if t, ok := c.Get("text").Text(); ok {
						out = append(out, t)
					}
				}
				ps = append(ps, jsonx.ObjectOf(member("type", jsonx.Str("tool")), member("callID", item.Get("id")),
					member("tool", item.Get("name")), member("state", jsonx.ObjectOf(
						member("status", st.Get("status")), member("input", st.Get("input")),
						member("output", jsonx.Str(strings.Join(out, "\n"))), member("error", st.Get("error").Get("message")),
						member("time", jsonx.ObjectOf(member("end", item.Get("time").Get("completed"))))))))
			}
		}
		return m, ps
	}
	return jsonx.Value{}, nil
}

// opencodeTokens is an assistant message's tokens and cost as omp's
// usage: opencode's input excludes the cache, as omp's does; reasoning
// tokens count as output.
func opencodeTokens(m jsonx.Value) tokens {
	t := m.Get("tokens")
	f := func(v jsonx.Value) float64 { x, _ := v.Float(); return x }
	cost := f(m.Get("cost"))
	return tokens{input: f(t.Get("input")), output: f(t.Get("output")) + f(t.Get("reasoning")),
		cacheRead: f(t.Get("cache").Get("read")), cacheWrite: f(t.Get("cache").Get("write")), total: f(t.Get("total")), cost: cost}
}

// opencodeTables are the tables and columns xdev reads: opencode 1.x's
// schema (the 1.18 database in ../shared/fixtures/real has them).
var opencodeTables = map[string][]string{
	"session": {"id", "parent_id", "title", "directory", "time_created", "time_updated"},
	"message": {"id", "session_id", "time_created", "data"},
	"part":    {"id", "message_id", "data"},
}

// withOpencode runs fn on a snapshot of opencode's database db (see
// withDatabase), once its schema is checked to be one xdev reads.
func withOpencode(db string, fn func(*sqlite3.Conn) error) error {
	return withDatabase(HarnessOpencode, db, checkTables(opencodeTables, "xdev reads opencode 1.x databases (session, message and part tables)"), fn)
}
