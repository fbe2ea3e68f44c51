package corpus

import (
	"errors"
	"fmt"
	"iter"
	"os"

	"github.com/ncruces/go-sqlite3"
)

// opencodeSchema is opencode 1.18.13's tables that hold sessions, as its
// real database (../shared/fixtures/real/opencode-sqlite) creates them
// (its backquoted names double-quoted).
const opencodeSchema = `CREATE TABLE "project" (
	  "id" text PRIMARY KEY,
	  "worktree" text NOT NULL,
	  "vcs" text,
	  "name" text,
	  "icon_url" text,
	  "icon_url_override" text,
	  "icon_color" text,
	  "time_created" integer NOT NULL,
	  "time_updated" integer NOT NULL,
	  "time_initialized" integer,
	  "sandboxes" text NOT NULL,
	  "commands" text
	);
CREATE TABLE "session" (
	  "id" text PRIMARY KEY,
	  "project_id" text NOT NULL,
	  "workspace_id" text,
	  "parent_id" text,
	  "slug" text NOT NULL,
	  "directory" text NOT NULL,
	  "path" text,
	  "title" text NOT NULL,
	  "version" text NOT NULL,
	  "share_url" text,
	  "summary_additions" integer,
	  "summary_deletions" integer,
	  "summary_files" integer,
	  "summary_diffs" text,
	  "metadata" text,
	  "cost" real DEFAULT 0 NOT NULL,
	  "tokens_input" integer DEFAULT 0 NOT NULL,
	  "tokens_output" integer DEFAULT 0 NOT NULL,
	  "tokens_reasoning" integer DEFAULT 0 NOT NULL,
	  "tokens_cache_read" integer DEFAULT 0 NOT NULL,
	  "tokens_cache_write" integer DEFAULT 0 NOT NULL,
	  "revert" text,
	  "permission" text,
	  "agent" text,
	  "model" text,
	  "time_created" integer NOT NULL,
	  "time_updated" integer NOT NULL,
	  "time_compacting" integer,
	  "time_archived" integer,
	  CONSTRAINT "fk_session_project_id_project_id_fk" FOREIGN KEY ("project_id") REFERENCES "project"("id") ON DELETE CASCADE
	);
CREATE TABLE "message" (
	  "id" text PRIMARY KEY,
	  "session_id" text NOT NULL,
	  "time_created" integer NOT NULL,
	  "time_updated" integer NOT NULL,
	  "data" text NOT NULL,
	  CONSTRAINT "fk_message_session_id_session_id_fk" FOREIGN KEY ("session_id") REFERENCES "session"("id") ON DELETE CASCADE
	);
CREATE TABLE "part" (
	  "id" text PRIMARY KEY,
	  "message_id" text NOT NULL,
	  "session_id" text NOT NULL,
	  "time_created" integer NOT NULL,
	  "time_updated" integer NOT NULL,
	  "data" text NOT NULL,
	  CONSTRAINT "fk_part_message_id_message_id_fk" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE
	);
CREATE INDEX "message_session_time_created_id_idx" ON "message" ("session_id","time_created","id");
CREATE INDEX "part_message_id_id_idx" ON "part" ("message_id","id");
CREATE INDEX "part_session_idx" ON "part" ("session_id");
CREATE INDEX "session_project_idx" ON "session" ("project_id");
CREATE INDEX "session_workspace_idx" ON "session" ("workspace_id");
CREATE INDEX "session_parent_idx" ON "session" ("parent_id")`

// An OpencodeSession is one session of an opencode database as
// WriteOpencodeSessions writes it: its row's fields, and its messages in
// order.
type OpencodeSession struct {
	ID, Directory, Title string
	Created, Updated     int64 // ms
	Messages             []OpencodeMessage
}

// An OpencodeMessage is one message row: its data (opencode's JSON, its
// role and times) and its parts' data in order. IDs are given in order.
type OpencodeMessage struct {
	Created int64 // ms
	Data    string
	Parts   []string
}

// WriteOpencode writes an opencode 1.18 database at path (which must not
// exist) of sessions sessions of messages messages each, alternately
// user and assistant, each with a reasoning and a text part: what
// listing and reading an opencode history of that size cost.
func WriteOpencode(path string, sessions, messages int) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s exists", path)
	}
	t0 := int64(1790000000000)
	return WriteOpencodeSessions(path, func(yield func(OpencodeSession) bool) {
		for s := range sessions {
			at := t0 + int64(s)*1000
			o := OpencodeSession{ID: fmt.Sprintf("ses_gen%06d", s), Directory: fmt.Sprintf("/work/proj-%02d", s%40),
				Title:   fmt.Sprintf("%s %s session %d", Vocabulary(s%VocabularySize), Vocabulary((s*7)%VocabularySize), s),
				Created: at, Updated: at + 999}
			for m := range messages {
				ts := at + int64(m)
				role := []string{"user", "assistant"}[m%2]
				o.Messages = append(o.Messages, OpencodeMessage{Created: ts,
					Data: fmt.Sprintf(`{"role":%q,"time":{"created":%d},"modelID":"m","providerID":"p","tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`, role, ts),
					Parts: []string{`{"type":"reasoning","text":"thinking it over, at some length, as a model does"}`,
						fmt.Sprintf(`{"type":"text","text":"message %d of session %d: %s %s %s"}`, m, s,
							Vocabulary((s+m)%VocabularySize), Vocabulary((s*3+m)%VocabularySize), Vocabulary((s*5+m*11)%VocabularySize))}})
			}
			if !yield(o) {
				return
			}
		}
	})
}

// WriteOpencodeSessions adds the sessions sessions yields to the opencode
// 1.18 database at path, in its project "global", in one transaction;
// when there is no file at path it makes the database first. A session's
// message and part ids are made from its order among them and theirs.
func WriteOpencodeSessions(path string, sessions iter.Seq[OpencodeSession]) error {
	schema := ""
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		schema = opencodeSchema + ";"
	}
	c, err := sqlite3.Open(path)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(schema + `BEGIN; INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')`); err != nil {
		return err
	}
	ses, _, err := c.Prepare(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'global', 's', ?, ?, '1.18.13', ?, ?)`)
	if err != nil {
		return err
	}
	defer ses.Close()
	msg, _, err := c.Prepare(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer msg.Close()
	part, _, err := c.Prepare(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer part.Close()
	write := func(s int, o OpencodeSession) error {
		ses.BindText(1, o.ID)
		ses.BindText(2, o.Directory)
		ses.BindText(3, o.Title)
		ses.BindInt64(4, o.Created)
		ses.BindInt64(5, o.Updated)
		if err := ses.Exec(); err != nil {
			return err
		}
		for m, om := range o.Messages {
			mid := fmt.Sprintf("msg_%06d_%03d", s, m)
			msg.BindText(1, mid)
			msg.BindText(2, o.ID)
			msg.BindInt64(3, om.Created)
			msg.BindInt64(4, om.Created)
			msg.BindText(5, om.Data)
			if err := msg.Exec(); err != nil {
				return err
			}
			for p, data := range om.Parts {
				part.BindText(1, fmt.Sprintf("prt_%06d_%03d_%d", s, m, p))
				part.BindText(2, mid)
				part.BindText(3, o.ID)
				part.BindInt64(4, om.Created)
				part.BindInt64(5, om.Created)
				part.BindText(6, data)
				if err := part.Exec(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	s := 0
	for o := range sessions {
		if err := write(s, o); err != nil {
			return err
		}
		s++
	}
	return c.Exec(`COMMIT`)
}
