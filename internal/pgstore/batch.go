package pgstore

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// newBatch is how many files never pushed before a push stores in one
// transaction: their rows in one round trip, their lines in one COPY,
// their metadata in another round trip.
const newBatch = 200

// currentPaths are the paths of the stored sessions.
func (db *DB) currentPaths(ctx context.Context) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT path FROM `+db.t("sessions")+` WHERE current`)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, db.redact(err)
		}
		out[p] = true
	}
	return out, db.redact(rows.Err())
}

// pushNew stores files no revision of which is stored yet, in one
// transaction. It fails as a whole (and the caller pushes the files one
// at a time, which reports a bad one alone) if a file cannot be read, or
// another writer stored one of the paths meanwhile.
func (db *DB) pushNew(ctx context.Context, opts PushOptions, files []session.SessionFile, rels []string) ([]fileResult, error) {
	type open struct {
		fh   *os.File
		fi   os.FileInfo
		slot []byte
		end  int64
		r    io.ReaderAt // what is stored: the file, or its masked view
		rend int64
		tail []byte
	}
	opened := make([]open, len(files))
	defer func() {
		for _, o := range opened {
			if o.fh != nil {
				o.fh.Close()
			}
		}
	}()
	for i, f := range files {
		fh, fi, err := regularfile.Open(f.Path, 0)
		if err != nil {
			return nil, problem(err)
		}
		opened[i].fh, opened[i].fi = fh, fi
		if opened[i].slot, err = session.ReadSlotLine(fh, opened[i].fi.Size()); err != nil {
			return nil, problem(fmt.Errorf("%s: %w", f.Path, err))
		}
		if opened[i].end, err = completeEnd(fh, opened[i].fi.Size()); err != nil {
			return nil, problem(fmt.Errorf("%s: %w", f.Path, err))
		}
		opened[i].r, opened[i].rend = fh, opened[i].end
		if !opts.Raw {
			o := &opened[i]
			v, err := maskView(f.Path, fh, 0, o.end, 0)
			if err != nil {
				return nil, problem(err)
			}
			if o.tail, err = tailDigest(fh, int64(len(o.slot)), o.end); err != nil {
				return nil, problem(fmt.Errorf("%s: %w", f.Path, err))
			}
			o.r, o.rend, o.slot = v, v.end, v.slot
		}
	}
	res := make([]fileResult, len(files))
	err := db.tx(ctx, func(tx pgx.Tx) error {
		keys := make([]int64, len(files))
		b := &pgx.Batch{}
		for i, f := range files {
			b.Queue(`INSERT INTO `+db.t("sessions")+` (path, revision, id, origin, subagent, masked) VALUES ($1, 1, '', $2, $3, $4) RETURNING key`,
				rels[i], opts.Origin, f.Subagent, !opts.Raw).QueryRow(func(row pgx.Row) error { return row.Scan(&keys[i]) })
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		items := make([]copyItem, len(files))
		for i, f := range files {
			items[i] = copyItem{keys[i], f.Path, opened[i].r, opened[i].rend, session.Cursor{}}
		}
		curs, _, err := db.copyFiles(ctx, tx, items)
		if err != nil {
			return err
		}
		b = &pgx.Batch{}
		for i, f := range files {
			if curs[i].Version == 0 {
				return problem(fmt.Errorf("%s: %w", f.Path, session.ErrNoHeader))
			}
			res[i] = fileResult{out: outNew, lines: int64(curs[i].Line), bytes: curs[i].Offset}
			if v, ok := opened[i].r.(*maskedView); ok {
				res[i].masked = v.masked
			}
			for _, st := range db.metaStmts(keys[i], curs[i], true, opened[i].slot, opened[i].fi.ModTime()) {
				b.Queue(st.sql, st.args...)
			}
			p := db.pushedStmt(opts.Origin, rels[i], keys[i], opened[i].fi,
				pushRecord{masked: !opts.Raw, srcEnd: opened[i].end, storedEnd: curs[i].Offset, tail: opened[i].tail})
			b.Queue(p.sql, p.args...)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	return res, err
}
