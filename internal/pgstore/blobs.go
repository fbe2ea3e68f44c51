package pgstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/session"
)

// blobName is a blob file's name in a data dir's blob store: the sha256
// of its bytes, in hex.
var blobName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// storedBlobs are the names of the blobs the database holds.
func (db *DB) storedBlobs(ctx context.Context) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT name FROM `+db.t("blobs"))
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, db.redact(err)
		}
		out[n] = true
	}
	return out, db.redact(rows.Err())
}

// pushBlobs stores the data dir's blobs (the images omp's writer moves
// out of the lines) that the database lacks, so a session pulled
// elsewhere shows its pictures. A blob whose bytes no longer hash to its
// name is reported, not stored.
func (db *DB) pushBlobs(ctx context.Context, dataDir string, st *PushStats) error {
	entries, err := os.ReadDir(session.BlobsDir(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	stored, err := db.storedBlobs(ctx)
	if err != nil {
		return err
	}
	blobs := session.NewBlobStore(session.BlobsDir(dataDir))
	for _, e := range entries {
		name := e.Name()
		if !blobName().MatchString(name) || stored[name] || !e.Type().IsRegular() {
			continue
		}
		data, err := blobs.Get(session.BlobRefPrefix + name)
		if err != nil {
			st.Failed = append(st.Failed, FileError{blobs.Dir() + "/" + name, err})
			continue
		}
		if _, err := db.pool.Exec(ctx, `INSERT INTO `+db.t("blobs")+` (name, data) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, data); err != nil {
			return db.redact(err)
		}
		st.Blobs++
		st.Bytes += int64(len(data))
	}
	return nil
}

// pullBlobs writes into the data dir's blob store the blobs it lacks:
// every stored one, or (names not nil) those named. Each is written by
// the blob store's own rule, under the sha256 of the bytes written.
func (db *DB) pullBlobs(ctx context.Context, dataDir string, names map[string]bool, st *PullStats) error {
	if names == nil {
		var err error
		if names, err = db.storedBlobs(ctx); err != nil {
			return err
		}
	}
	blobs := session.NewBlobStore(session.BlobsDir(dataDir))
	for name := range names {
		if _, err := os.Lstat(blobs.Dir() + "/" + name); err == nil || !blobName().MatchString(name) {
			continue
		}
		var data []byte
		err := db.pool.QueryRow(ctx, `SELECT data FROM `+db.t("blobs")+` WHERE name = $1`, name).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // a session names a blob no one pushed
		}
		if err != nil {
			return db.redact(err)
		}
		if _, err := blobs.Put(data); err != nil {
			return err
		}
		st.Blobs++
		st.Bytes += int64(len(data))
	}
	return nil
}
