package catalog

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
)

// Snapshots. A picker shows the sessions before a listing of 25,000 of
// them is made (half a second of stat calls and list caches): the rows
// the last listing of the same places gave, kept in xdev's cache, while
// the places are listed again and their rows take those's place. A
// snapshot holds of each row what a picker shows, filters by and
// resumes it with (its harness, id, title, directory, path, the start of
// its first message, when it changed, its size, whether it is a
// subagent's), the rows as they were listed (masked), in their order.
//
// The file is snapshotMagic, then chunks of rows: the first of
// snapshotHead rows (a screen's worth, read before the first frame),
// the others of snapshotChunk; each is its length, its rows and a CRC-32
// of them, and a chunk of no rows ends the file. A chunk that is
// damaged ends what is read (the listing brings the rest); a file of
// another version is none.

const snapshotMagic = "xdev rows 2\n"

// The rows of the first chunk, and of each other.
const (
	snapshotHead  = 256
	snapshotChunk = 4096
)

// Snapshot bounds: what is kept of a title and a first message, and the
// largest file read.
const (
	snapshotTitle   = 512
	snapshotMessage = 100
	maxSnapshot     = 256 << 20
)

// SnapshotFile is where the snapshot of a listing of places is kept, in
// the list cache dir, named by the places (their harnesses and where
// each is); "" where there is no cache dir.
func SnapshotFile(places []Place) string {
	dir := ListCacheDir()
	if dir == "" {
		return ""
	}
	h := sha256.New()
	for _, p := range places {
		where, _ := p.Where()
		io.WriteString(h, string(p.Harness())+"\x00"+where+"\x00")
	}
	return filepath.Join(dir, "rows-"+hex.EncodeToString(h.Sum(nil)[:12]))
}

// WriteSnapshot writes rows to the snapshot file at path, replacing it
// whole (atomicfile.ReplaceCache): the first chunk's in their order (the
// first screen), the others grouped by harness, in their order within
// each, so that a picker that replaces each harness's rows as its place
// is listed again lets go of that harness's chunks then (3 MB of omp's
// while Claude Code's listing, the largest, is made).
func WriteSnapshot(path string, rows []Row) error {
	if path == "" {
		return nil
	}
	head := rows[:min(snapshotHead, len(rows))]
	rest := make([]int32, 0, len(rows)-len(head))
	for k := len(head); k < len(rows); k++ {
		rest = append(rest, int32(k))
	}
	slices.SortStableFunc(rest, func(a, b int32) int { return strings.Compare(string(rows[a].Harness), string(rows[b].Harness)) })
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, snapshotMagic); err != nil {
			return err
		}
		var chunk []Row
		for first := true; ; first = false {
			if first {
				chunk = head
			} else {
				chunk = chunk[:0:0]
				for len(rest) > 0 && len(chunk) < snapshotChunk {
					chunk = append(chunk, rows[rest[0]])
					rest = rest[1:]
				}
			}
			b := appendChunk(nil, chunk)
			b = append(binary.AppendUvarint(nil, uint64(len(b))), b...)
			b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
			if _, err := w.Write(b); err != nil {
				return err
			}
			if len(chunk) == 0 && !first {
				return nil
			}
		}
	})
}

// appendChunk appends the encoding of rows to b: their count, then each.
func appendChunk(b []byte, rows []Row) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	str := func(s string, limit int) {
		if limit > 0 && len(s) > limit {
			s = cutUTF8(s, limit)
		}
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for k := range rows {
		r := &rows[k]
		str(string(r.Harness), 0)
		str(r.ID, 0)
		str(r.Title, snapshotTitle)
		str(r.Cwd, 0)
		str(r.Path, 0)
		str(r.FirstMessage, snapshotMessage)
		b = binary.AppendVarint(b, r.Modified.UnixNano())
		b = binary.AppendUvarint(b, uint64(max(r.Size, 0)))
		flags := byte(0)
		if r.Subagent {
			flags = 1
		}
		b = append(b, flags)
	}
	return b
}

// errSnapshot is a SnapshotReader's error for a file that is no
// snapshot, or a chunk that is damaged.
var errSnapshot = errors.New("not a snapshot of rows")

// A SnapshotReader reads the rows of a snapshot file a chunk at a time.
type SnapshotReader struct {
	f    *os.File
	r    *bufio.Reader
	read int64
	done bool
}

// OpenSnapshot opens the snapshot file at path.
func OpenSnapshot(path string) (*SnapshotReader, error) {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxSnapshot {
		f.Close()
		return nil, errSnapshot
	}
	r := &SnapshotReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r.r, magic); err != nil || string(magic) != snapshotMagic {
		f.Close()
		return nil, errSnapshot
	}
	return r, nil
}

// Next returns the next chunk's rows; io.EOF after the last. Every
// string of a chunk's rows is a piece of the chunk's bytes, which
// nothing writes again: the rows take no copy each.
func (r *SnapshotReader) Next() ([]Row, error) {
	if r.done {
		return nil, io.EOF
	}
	size, err := binary.ReadUvarint(r.r)
	if err != nil || size > maxSnapshot {
		return nil, r.fail()
	}
	head := binary.AppendUvarint(nil, size)
	b := make([]byte, size+4)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, r.fail()
	}
	crc := crc32.Update(crc32.ChecksumIEEE(head), crc32.IEEETable, b[:size])
	if crc != binary.LittleEndian.Uint32(b[size:]) || size == 0 {
		return nil, r.fail()
	}
	rows, ok := decodeChunk(unsafe.String(&b[0], size))
	if !ok {
		return nil, r.fail()
	}
	if len(rows) == 0 {
		r.done = true
		return nil, io.EOF
	}
	return rows, nil
}

// fail ends the reading at a damaged chunk.
func (r *SnapshotReader) fail() error {
	r.done = true
	return errSnapshot
}

// Close closes the file.
func (r *SnapshotReader) Close() error { return r.f.Close() }

// ReadSnapshot reads every row of the snapshot file at path.
func ReadSnapshot(path string) ([]Row, error) {
	r, err := OpenSnapshot(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var rows []Row
	for {
		chunk, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, chunk...)
	}
}

// decodeChunk decodes a chunk's rows (appendChunk's).
func decodeChunk(s string) ([]Row, bool) {
	bad := false
	uvarint := func() uint64 {
		v, k := uvarintOf(s)
		if k <= 0 {
			bad = true
			return 0
		}
		s = s[k:]
		return v
	}
	str := func() string {
		l := uvarint()
		if bad || l > uint64(len(s)) {
			bad = true
			return ""
		}
		v := s[:l]
		s = s[l:]
		return v
	}
	count := uvarint()
	if bad || count > uint64(len(s)/9) { // each row takes 9 bytes at least
		return nil, false
	}
	rows := make([]Row, 0, count)
	for range count {
		r := Row{Harness: Harness(str()), ID: str(), Title: str(), Cwd: str(), Path: str(), FirstMessage: str()}
		zig := uvarint() // binary.AppendVarint's zigzag
		r.Modified = time.Unix(0, int64(zig>>1)^-int64(zig&1))
		r.Size = int64(uvarint())
		if bad || len(s) < 1 || s[0] > 1 {
			return nil, false
		}
		r.Subagent = s[0] == 1
		s = s[1:]
		rows = append(rows, r)
	}
	return rows, !bad && s == ""
}

// cutUTF8 is s cut to at most n bytes, not in a character's middle.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}

// uvarintOf reads a uvarint at the start of s (binary.Uvarint of a
// string): its value and length, or a length <= 0.
func uvarintOf(s string) (uint64, int) {
	var x uint64
	var shift uint
	for k := 0; k < len(s) && k < binary.MaxVarintLen64; k++ {
		b := s[k]
		if b < 0x80 {
			if k == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -1
			}
			return x | uint64(b)<<shift, k + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
