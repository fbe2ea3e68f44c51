package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// ErrConflict is returned (wrapped) by Append when the stored session no
// longer ends where the caller last saw it: another writer appended first.
var ErrConflict = errors.New("stored session changed: another writer appended first")

// Append appends one line (a JSON entry, without its newline) to the
// stored session s, which must still end at s.Size, and moves s past it.
// The line is read by the core reader where it will go, as a push reads
// it. It is one statement: the session's row moves its end only if it is
// still s.Size, and the line's row is inserted only if it did; so two
// writers never both append at one offset, and a loser gets ErrConflict
// with nothing written.
func (db *DB) Append(ctx context.Context, s *Session, line []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("%s: append: a line may not hold a newline", s.Name())
	}
	data := append(line[:len(line):len(line)], '\n')
	var rows []lineRow
	next, err := scanLines(s.Name(), bytesAt{s.Size, data}, s.Size+int64(len(data)), s.cursor, func(r lineRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("%s: append: not a line", s.Name())
	}
	row := rows[0]
	tag, err := db.pool.Exec(ctx, `
WITH moved AS (
	UPDATE `+db.t("sessions")+` SET size = $12, lines = $13, entries = $14, last_id = $15, updated = now()
	WHERE key = $1 AND size = $2 AND current
	RETURNING key
)
INSERT INTO `+db.t("lines")+` (session, off, seq, entry_id, parent_id, type, role, ts, line, doc, terms)
SELECT key, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM moved`,
		s.Key, row.off, row.seq, row.entryID, row.parentID, row.typ, row.role, row.ts, row.line, row.doc, row.terms,
		next.Offset, next.Line, next.Entries, next.LastID())
	if err != nil {
		return db.redact(fmt.Errorf("%s: append: %w", s.Name(), err))
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("%s: append at offset %d: %w", s.Name(), s.Size, ErrConflict)
	}
	s.Size, s.Lines, s.cursor = next.Offset, next.Line, next
	return nil
}
