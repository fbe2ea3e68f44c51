package pgstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/sessionname"
)

// Session is one stored revision of a session file.
type Session struct {
	Key      int64  // the row's key
	Path     string // the file's path under a data dir's sessions directory, '/'-separated
	Revision int    // 1, then one more each time the file was rewritten rather than appended to
	Current  bool   // the revision a pull writes and a read shows

	ID            string // the header's session id
	Origin        string // who pushed the revision first (see PushOptions.Origin)
	Cwd           string
	Title         string
	TitleSource   string // "auto", "user", or "" for none
	Created       time.Time
	Updated       time.Time // the file's modification time when last pushed
	ParentSession string
	Subagent      bool

	Size  int64 // bytes stored: the file up to its last complete line
	Lines int   // lines stored

	// Masked says the lines were stored with their secrets masked, as a
	// push does unless told otherwise (PushOptions.Raw): then Size is the
	// masked lines' length, not the file's.
	Masked bool

	// Listing is what List reads of the stored head and tail, by the rules
	// a local listing reads a file by (session.Describe): the last turn's
	// status, the first message, a compaction's short summary, the title
	// a listing falls back on. Find and a search leave it zero.
	Listing session.SessionInfo

	cursor session.Cursor // where the stored lines end, for an append
}

// Name names the session in messages: "db:" and its path, with the
// revision when it is not the current one.
func (s *Session) Name() string {
	if s.Current || s.Revision == 0 {
		return "db:" + s.Path
	}
	return fmt.Sprintf("db:%s@%d", s.Path, s.Revision)
}

// sessionColumns are the columns scanSession reads, in its order.
const sessionColumns = `key, path, revision, current, id, origin, cwd, title, title_source, created, updated,
	parent_session, subagent, size, lines, entries, header_line, version, last_id, masked`

// scanSession reads a row of sessionColumns, after the columns lead
// scans into (a search hit's).
func scanSession(row pgx.Row, lead ...any) (*Session, error) {
	return scanSessionThen(row, lead)
}

// scanSessionThen is scanSession with the columns trail scans into after
// sessionColumns.
func scanSessionThen(row pgx.Row, lead []any, trail ...any) (*Session, error) {
	s := &Session{}
	var created *time.Time
	var entries, headerLine, version int
	var lastID string
	dst := append(lead, &s.Key, &s.Path, &s.Revision, &s.Current, &s.ID, &s.Origin, &s.Cwd, &s.Title, &s.TitleSource,
		&created, &s.Updated, &s.ParentSession, &s.Subagent, &s.Size, &s.Lines, &entries, &headerLine, &version, &lastID, &s.Masked)
	err := row.Scan(append(dst, trail...)...)
	if err != nil {
		return nil, err
	}
	if created != nil {
		s.Created = *created
	}
	s.cursor = session.Cursor{Offset: s.Size, Line: s.Lines, Entries: entries, HeaderLine: headerLine, Version: version}.WithLastID(lastID)
	return s, nil
}

// ListOptions choose what List returns. The zero value lists the current
// revision of every session but subagents', newest first.
type ListOptions struct {
	Cwd       string // only sessions started in this directory
	Subagents bool   // subagent transcripts too
	Revisions bool   // every revision, not only the current ones
	Limit     int    // at most this many; 0 for all
}

// List lists the stored sessions in one query.
func (db *DB) List(ctx context.Context, opts ListOptions) ([]*Session, error) {
	var where []string
	var args []any
	if !opts.Revisions {
		where = append(where, "current")
	}
	if !opts.Subagents {
		where = append(where, "NOT subagent")
	}
	if opts.Cwd != "" {
		args = append(args, opts.Cwd)
		where = append(where, fmt.Sprintf("cwd = $%d", len(args)))
	}
	// Each session's first HeadBytes and last TailBytes, as whole lines
	// (the stored lines are the file's, each followed by its newline).
	q := `SELECT ` + sessionColumns + `,
	(SELECT string_agg(l.line || '\x0a'::bytea, ''::bytea ORDER BY l.off) FROM ` + db.t("lines") + ` l
		WHERE l.session = s.key AND l.off < ` + fmt.Sprint(session.HeadBytes) + `),
	(SELECT string_agg(l.line || '\x0a'::bytea, ''::bytea ORDER BY l.off) FROM ` + db.t("lines") + ` l
		WHERE l.session = s.key AND l.off + octet_length(l.line) + 1 > s.size - ` + fmt.Sprint(session.TailBytes) + `)
	FROM ` + db.t("sessions") + ` s`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated DESC, path, revision DESC"
	if opts.Limit > 0 {
		args = append(args, opts.Limit)
		q += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		var head, tail []byte
		s, err := scanSessionThen(rows, nil, &head, &tail)
		if err != nil {
			return nil, db.redact(err)
		}
		s.Listing = session.Describe(s.Name(), head, tail, s.Size)
		s.Listing.Modified, s.Listing.Subagent = s.Updated, s.Listing.Subagent || s.Subagent
		out = append(out, s)
	}
	return out, db.redact(rows.Err())
}

func (db *DB) sessions(ctx context.Context, q string, args ...any) ([]*Session, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, db.redact(err)
		}
		out = append(out, s)
	}
	return out, db.redact(rows.Err())
}

// ErrNotFound is returned (wrapped) by Find when nothing matches.
var ErrNotFound = errors.New("no stored session")

// Find returns the current revision of the session arg names: its path
// under the sessions directory, else by the one naming rule of every
// place (internal/sessionname: an id, a file name, a prefix of either,
// whatever the case). "ARG@N" names revision N. A name of more than one
// session is an error listing them.
func (db *DB) Find(ctx context.Context, arg string) (*Session, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, fmt.Errorf("%w: empty name", ErrNotFound)
	}
	rev := 0
	if i := strings.LastIndexByte(arg, '@'); i > 0 {
		if _, err := fmt.Sscanf(arg[i+1:], "%d", &rev); err == nil && rev > 0 {
			arg = arg[:i]
		} else {
			rev = 0
		}
	}
	// A shortlist in SQL of every session the rule could match (a superset:
	// the id part of a name is any part after a '_'), the rule in Go.
	a := strings.ToLower(arg)
	cond, args := "current", []any{arg, likePrefix(a)}
	if rev > 0 {
		cond, args = "revision = $3", append(args, rev)
	}
	found, err := db.sessions(ctx, `SELECT `+sessionColumns+` FROM `+db.t("sessions")+`
WHERE `+cond+` AND (path = $1 OR lower(id) LIKE $2 OR lower(path) LIKE $2 OR lower(path) LIKE '%/' || $2 OR lower(path) LIKE '%\_' || $2)
ORDER BY updated DESC LIMIT `+strconv.Itoa(maxCandidates+1), args...)
	if err != nil {
		return nil, err
	}
	for _, s := range found {
		if s.Path == arg {
			return s, nil // its path under the sessions directory
		}
	}
	one, several := sessionname.Pick(arg, found, func(s **Session) (string, string) { return (*s).ID, path.Base((*s).Path) })
	switch {
	case one != nil:
		return *one, nil
	case len(several) == 0 && rev > 0:
		cur, err := db.Find(ctx, arg)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w %s@%d: %s has no revision %d; its revisions are 1 to %d", ErrNotFound, arg, rev, cur.Name(), rev, cur.Revision)
	case len(several) == 0:
		return nil, fmt.Errorf("%w named %q in %s", ErrNotFound, arg, db.conn.shown)
	}
	return nil, sessionname.Ambiguous(arg, several, func(s **Session) sessionname.Match {
		return sessionname.Match{ID: (*s).ID, Path: (*s).Path}
	})
}

// maxCandidates is how many stored sessions a name is matched against,
// the most recently updated: a name that is a prefix of more is
// ambiguous unless it names one exactly.
const maxCandidates = 1000

// likePrefix is a LIKE pattern matching strings that start with s.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}
