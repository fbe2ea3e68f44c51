package search

import "fmt"

// An entry's rowid (in entries and in docs) is its file's id in the high
// bits and its place among the file's rows in the low seqBits: a file's
// entries are one range of the primary key (fileRows), and a match in
// docs names its file with no read of entries (fileOf). Listing the
// sessions of a common word is then the FTS5 doclist and one files row
// per session; through entries it was a B-tree lookup per match, most of
// the time of `xdev search -l`.
//
// 24 bits are 16 million rows a file (a 500 MB session has a few hundred
// thousand entries); fewer would shorten the varints of FTS5's rowid
// deltas, each a file apart (the index is 14% larger than with dense
// rowids), at the risk of a file that runs out: its refresh fails with
// errRowids, the index holding what it had.
const seqBits = 24

// maxFileID keeps every rowid a positive int64.
const maxFileID = 1<<(63-seqBits) - 1

// fileRows is the range of rowids of file's entries, both ends included.
func fileRows(file int64) (lo, hi int64) {
	return file << seqBits, file<<seqBits | (1<<seqBits - 1)
}

// fileOf is the file an entry's rowid belongs to.
func fileOf(rowid int64) int64 { return rowid >> seqBits }

// nextRowid returns the rowid the next entry of file takes: one past the
// last it holds, the first of its range when it holds none.
func (w *writer) nextRowid(file int64) (int64, error) {
	lo, hi := fileRows(file)
	s, err := w.stmt(`SELECT coalesce(max(id) + 1, ?1) FROM entries WHERE id BETWEEN ?1 AND ?2`)
	if err != nil {
		return 0, err
	}
	s.BindInt64(1, lo)
	s.BindInt64(2, hi)
	if !s.Step() {
		return 0, s.Err()
	}
	return s.ColumnInt64(0), nil
}

// take returns the rowid of file's next entry (w.next) and moves past it.
func (w *writer) take(file int64) (int64, error) {
	id := w.next
	if _, hi := fileRows(file); id > hi || fileOf(id) != file {
		return 0, errRowids(file)
	}
	w.next++
	return id, nil
}

// errRowids: a file (or an index) past what its rowids can number.
func errRowids(file int64) error {
	return fmt.Errorf("search index: file %d has more rows than an index can number", file)
}
